# Offload (trick 3, docs/offload.md): datasets, schedules, datanode-ext sessions, the reader.

.PHONY: offload-test
offload-test: deps-apt hadoop jar build xform-media ## offload unit tests, then its conformance case on a real cluster
	go test -count=1 ./dataset/... ./schedule/ ./datanode-ext/... ./reader/
	$(TEST_ENV) go test -count=1 -v -run TestOffload ./conformance/

.PHONY: bench-offload
bench-offload: deps-apt hadoop jar build xform-media ## trainer on core 0, storage on core 1: HDFS+local vs offload vs offload under load; last line BENCH offload ...
	$(TEST_ENV) go run ./bench/offload -png $(CACHE)/bench-offload-stall.png $(BENCH_OFFLOAD_FLAGS)
