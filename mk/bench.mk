# Benchmarks of the spine. Each prints its detail and a last line `BENCH <name> ...`.
.PHONY: bench-nn
bench-nn: deps-apt hadoop jar build ## NNThroughputBenchmark: NameNode with vs without the hooks
	$(TEST_ENV) go run ./bench/nn $(BENCH_NN_FLAGS)
