# Benchmarks of the spine. Each prints its detail and a last line `BENCH <name> ...`.
.PHONY: bench-nn
bench-nn: deps-apt hadoop jar build ## the hooks' own CPU per op and NameNode ops/s with vs without them (BENCH_NN_FLAGS=-quick: a few minutes, not a result)
	$(TEST_ENV) go run ./bench/nn -plot $(CACHE)/bench-nn $(BENCH_NN_FLAGS)

.PHONY: bench-hostlock
bench-hostlock: deps-apt hadoop jar build ## how long the largest InspectFiles keeps NameNode writers out: one lock hold vs 5 ms slices
	$(TEST_ENV) NEWTRICKS_BENCH_HOSTLOCK=1 go test -count=1 -v -run '^TestHostLockSlices$$' -timeout 20m ./conformance/
