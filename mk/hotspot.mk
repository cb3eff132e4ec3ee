# Hotspot (issue 4): hint-driven replication scaling.
.PHONY: bench-hotspot
bench-hotspot: deps-apt hadoop jar build ## initialization I/O storm: replication 3 vs setrep at storm vs hint; last line BENCH hotspot ...
	$(TEST_ENV) go run ./bench/hotspot $(BENCH_HOTSPOT_FLAGS)
