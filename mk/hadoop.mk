# Hadoop runtimes for the cluster harness and the `newtricks` CLI, one per release line the
# hooks support. The jars are resolved from Maven Central into $(CACHE)/hadoop-<version>/lib,
# never into git. `make hadoop HADOOP_VERSION=3.3.6` resolves another line; every target that
# runs daemons (test, demo, bench-*) takes the same variable.
HADOOP_VERSIONS := 3.3.6 3.4.2 3.5.0
HADOOP_VERSION ?= 3.4.2
HADOOP_HOME_DIR := $(CACHE)/hadoop-$(HADOOP_VERSION)
HADOOP_LIB := $(HADOOP_HOME_DIR)/lib
HADOOP_POM := hadoop-patches/runtime/pom.xml

# resolve_runtime POM LIB: copy POM's runtime dependencies at $(HADOOP_VERSION) into LIB.
# Resolved into LIB.tmp first, so an interrupted download never looks complete. If LIB already
# holds the same jars (names and sizes) it is kept as it is: its files' times key the class
# data sharing archive (harness/cluster/cds.go), and a cluster starting from it meanwhile
# never sees it vanish. Log4j 1.2 and its SLF4J binding (ZooKeeper 3.6's, on 3.3.x) are
# dropped where reload4j, their drop-in replacement, is present: one binding, one log4j.
define resolve_runtime
	rm -rf $(2).tmp
	mvn -B -q -f $(1) -Dhadoop.version=$(HADOOP_VERSION) \
	  dependency:copy-dependencies -DoutputDirectory=$(abspath $(2)).tmp -DincludeScope=runtime
	rm -f $(2).tmp/*-osx-*.jar $(2).tmp/*-riscv64.jar $(2).tmp/*-linux-aarch_64.jar
	if ls $(2).tmp/reload4j-*.jar >/dev/null 2>&1; then rm -f $(2).tmp/log4j-1.*.jar $(2).tmp/slf4j-log4j12-*.jar; fi
	jars() { (cd "$$1" 2>/dev/null && find . -maxdepth 1 -name '*.jar' -printf '%f %s\n' | sort); }; \
	if [ -d $(2) ] && [ "$$(jars $(2))" = "$$(jars $(2).tmp)" ]; then rm -rf $(2).tmp; \
	else rm -rf $(2) && mv $(2).tmp $(2); fi
endef

# The stamp is named after the pom's content and this file's recipe version, so a new
# worktree (fresh file times) finds the runtime already resolved; a second call is instant.
RUNTIME_RECIPE := 2
HADOOP_STAMP := $(HADOOP_HOME_DIR)/.resolved-$(shell cat $(HADOOP_POM) | sha256sum | cut -c1-12)-$(RUNTIME_RECIPE)

.PHONY: hadoop
hadoop: $(HADOOP_STAMP) ## resolve Hadoop $(HADOOP_VERSION) (HADOOP_VERSION=3.3.6|3.4.2|3.5.0)

$(HADOOP_STAMP): | deps-apt
	@case " $(HADOOP_VERSIONS) " in *" $(HADOOP_VERSION) "*) ;; \
	  *) echo "note: Hadoop $(HADOOP_VERSION) is not one of the tested lines ($(HADOOP_VERSIONS))";; esac
	@echo "resolving Hadoop $(HADOOP_VERSION) into $(HADOOP_LIB)"
	$(call resolve_runtime,$(HADOOP_POM),$(HADOOP_LIB))
	@rm -f $(HADOOP_HOME_DIR)/.resolved*
	@echo "$(HADOOP_VERSION)" > $@
	@echo "Hadoop $(HADOOP_VERSION): $$(ls $(HADOOP_LIB) | wc -l) jars in $(HADOOP_LIB)"

.PHONY: build-cli
build-cli: ## build bin/newtricks (the cluster CLI)
	go build -o bin/newtricks ./cmd/newtricks
