# Hotspot (issue 4): hint-driven replication scaling.
# bench-hotspot also measures a second configuration (-check-datanodes, -check-dn-bandwidth) and
# writes both configurations' medians to $(BENCH_HOTSPOT_SIM_OUT) for bench-sim's out-of-sample check.
BENCH_HOTSPOT_SIM_OUT ?= bin/bench-hotspot.json

.PHONY: bench-hotspot
bench-hotspot: deps-apt hadoop jar build ## initialization I/O storm: replication 3, setrep at/ahead of the storm, hint, and the controls balanced-only and replication-only, at two configurations; last line BENCH hotspot ...
	$(TEST_ENV) go run ./bench/hotspot -sim-out $(BENCH_HOTSPOT_SIM_OUT) -png $(CACHE)/bench-hotspot $(BENCH_HOTSPOT_FLAGS)

.PHONY: bench-hotspot-scale
bench-hotspot-scale: deps-apt hadoop jar build ## one hint of 10,000 files: NameNode time, host calls and edit-log transactions per file
	$(TEST_ENV) go run ./bench/hotspot -scale 10000 $(BENCH_HOTSPOT_SCALE_FLAGS)

.PHONY: bench-hotspot-failover
bench-hotspot-failover: deps-apt hadoop jar build ## hinted storm on an HA pair with a kill -9 of the active NameNode in the middle vs without; last line BENCH hotspot_failover ...
	$(TEST_ENV) go run ./bench/hotspot -failover -datanodes 6 -png $(CACHE)/bench-hotspot $(BENCH_HOTSPOT_FAILOVER_FLAGS)

.PHONY: bench-sim
bench-sim: ## discrete-event model of the storm, fitted to one bench-hotspot configuration, checked on the other, run at 1,000; last line BENCH sim ...
	go run ./bench/sim -png $(CACHE)/bench-sim.png $(BENCH_SIM_FLAGS)
