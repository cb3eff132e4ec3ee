# Offload (trick 3, docs/offload.md): datasets, schedules, datanode-ext sessions, the reader.

.PHONY: offload-test
offload-test: deps-apt hadoop jar build xform-media ## offload unit tests, then its conformance case on a real cluster
	go test -count=1 ./dataset/... ./schedule/ ./datanode-ext/... ./reader/
	$(TEST_ENV) go test -count=1 -v -run TestOffload ./conformance/

# QUICK=1: a small development run (-quick: 160 samples, 40 steps, 2 rounds); its figures are
# not the benchmark's. The generated dataset is cached under $(CACHE)/bench-offload by its
# parameters (the default one is 509 MB; it took 20 minutes to make once on the busy 2-core VM).
BENCH_OFFLOAD_QUICK = $(if $(filter 1,$(QUICK)),-quick)

.PHONY: bench-offload
bench-offload: deps-apt hadoop jar build xform-media ## trainer on core 0, 6 DataNodes on core 1: HDFS+local (1,2,4 workers) vs offload vs offload under load on 2,000 generated samples; QUICK=1 small; last line BENCH offload ...
	$(TEST_ENV) go run ./bench/offload -cache $(CACHE)/bench-offload -png $(CACHE)/bench-offload-stall.png $(BENCH_OFFLOAD_QUICK) $(BENCH_OFFLOAD_FLAGS)
