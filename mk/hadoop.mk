# Pinned Hadoop runtime for the cluster harness and the `newtricks` CLI.
# The jars are resolved from Maven Central into $(CACHE), never into git.
HADOOP_VERSION := 3.4.2
HADOOP_HOME_DIR := $(CACHE)/hadoop-$(HADOOP_VERSION)
HADOOP_LIB := $(HADOOP_HOME_DIR)/lib
HADOOP_STAMP := $(HADOOP_HOME_DIR)/.resolved
HADOOP_POM := hadoop-patches/runtime/pom.xml

.PHONY: hadoop
hadoop: $(HADOOP_STAMP) ## resolve the pinned Hadoop

# The stamp depends on the pom so bumping the version re-resolves; a second call is instant.
# Resolve into a temporary dir and rename so an interrupted download never looks complete.
$(HADOOP_STAMP): $(HADOOP_POM) | deps-apt
	@echo "resolving Hadoop $(HADOOP_VERSION) into $(HADOOP_LIB)"
	rm -rf $(HADOOP_LIB).tmp
	mvn -B -q -f $(HADOOP_POM) -Dhadoop.version=$(HADOOP_VERSION) \
	  dependency:copy-dependencies -DoutputDirectory=$(abspath $(HADOOP_LIB)).tmp \
	  -DincludeScope=runtime
	rm -f $(HADOOP_LIB).tmp/*-osx-*.jar $(HADOOP_LIB).tmp/*-riscv64.jar $(HADOOP_LIB).tmp/*-linux-aarch_64.jar
	rm -rf $(HADOOP_LIB) && mv $(HADOOP_LIB).tmp $(HADOOP_LIB)
	@echo "$(HADOOP_VERSION)" > $@
	@echo "Hadoop $(HADOOP_VERSION): $$(ls $(HADOOP_LIB) | wc -l) jars in $(HADOOP_LIB)"

.PHONY: build-cli
build-cli: ## build bin/newtricks (the cluster CLI)
	go build -o bin/newtricks ./cmd/newtricks
