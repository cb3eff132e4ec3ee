# Java hooks (hadoop-patches/): one shaded jar loaded by the NameNode and DataNodes.
# Maven resolves Hadoop, gRPC, protobuf and protoc into ~/.m2 on first use; the jar is rebuilt
# only when its pom, Java sources or protos change.
HOOKS_JAR := hadoop-patches/target/newtricks-hadoop-hooks.jar
HOOKS_SRC := hadoop-patches/pom.xml $(shell find hadoop-patches/src/main proto/newtricks -type f 2>/dev/null)
MVN ?= mvn
MVN_FLAGS ?= -B -q

.PHONY: jar java-test java-clean

jar: deps-apt $(HOOKS_JAR) ## build the shaded hooks jar (hadoop-patches/target/newtricks-hadoop-hooks.jar)

$(HOOKS_JAR): $(HOOKS_SRC)
	$(MVN) $(MVN_FLAGS) -f hadoop-patches/pom.xml -DskipTests package
	@touch $@

java-test: deps-apt ## run the Java hooks' unit tests
	$(MVN) $(MVN_FLAGS) -f hadoop-patches/pom.xml test

java-clean: ## remove the Java build output
	rm -rf hadoop-patches/target
