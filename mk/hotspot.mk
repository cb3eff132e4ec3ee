# Hotspot (issue 4): hint-driven replication scaling.
.PHONY: bench-hotspot
bench-hotspot: deps-apt hadoop jar build ## initialization I/O storm: replication 3 vs setrep at storm vs hint; last line BENCH hotspot ...
	$(TEST_ENV) go run ./bench/hotspot $(BENCH_HOTSPOT_FLAGS)

.PHONY: bench-hotspot-scale
bench-hotspot-scale: deps-apt hadoop jar build ## one hint of 10,000 files: NameNode time, host calls and edit-log transactions per file
	$(TEST_ENV) go run ./bench/hotspot -scale 10000 $(BENCH_HOTSPOT_SCALE_FLAGS)

.PHONY: bench-sim
bench-sim: ## discrete-event model of the storm, calibrated at 12 DataNodes, run at 1,000; last line BENCH sim ...
	go run ./bench/sim $(BENCH_SIM_FLAGS)
