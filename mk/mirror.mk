# Checkpoint mirroring (trick 2): the DistCp baseline's jars and the benchmark.
DISTCP_LIB := $(CACHE)/distcp-$(HADOOP_VERSION)/lib
DISTCP_STAMP := $(CACHE)/distcp-$(HADOOP_VERSION)/.resolved
DISTCP_POM := bench/mirror/distcp-pom.xml

.PHONY: distcp
distcp: $(DISTCP_STAMP) ## resolve hadoop-distcp and the MapReduce local runner (bench-mirror baseline)

$(DISTCP_STAMP): $(DISTCP_POM) | deps-apt
	rm -rf $(DISTCP_LIB).tmp
	mvn -B -q -f $(DISTCP_POM) -Dhadoop.version=$(HADOOP_VERSION) \
	  dependency:copy-dependencies -DoutputDirectory=$(abspath $(DISTCP_LIB)).tmp -DincludeScope=runtime
	rm -rf $(DISTCP_LIB) && mv $(DISTCP_LIB).tmp $(DISTCP_LIB)
	@echo "$(HADOOP_VERSION)" > $@

BENCH_MIRROR_OUT ?= $(CACHE)/bench-mirror
# QUICK=1: a small development run (-quick: a 38 MiB checkpoint, 1 round, readers 16 and 64;
# a few minutes); its figures are not the benchmark's.
BENCH_MIRROR_QUICK = $(if $(filter 1,$(QUICK)),-quick)

.PHONY: bench-mirror
bench-mirror: hadoop jar build distcp ## checkpoint mirroring vs WAN reads (16-128 readers) and DistCp, writer at 0.5x/1x/2x the link's time, against the floor; QUICK=1 small; PNG timeline in $(BENCH_MIRROR_OUT)
	mkdir -p $(BENCH_MIRROR_OUT)
	$(TEST_ENV) NEWTRICKS_DISTCP_LIB=$(DISTCP_LIB) go run ./bench/mirror -out $(BENCH_MIRROR_OUT) $(BENCH_MIRROR_QUICK) $(BENCH_MIRROR_ARGS) \
	  2>&1 | tee $(BENCH_MIRROR_OUT)/bench-mirror.log; exit $${PIPESTATUS[0]}
