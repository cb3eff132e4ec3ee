# Java hooks (hadoop-patches/): one shaded jar loaded by the NameNode and DataNodes.
# Maven resolves Hadoop, gRPC, protobuf and protoc into ~/.m2 on first use; later builds run
# offline-capable and quiet.
HOOKS_JAR := hadoop-patches/target/newtricks-hadoop-hooks.jar
MVN ?= mvn
MVN_FLAGS ?= -B -q

.PHONY: jar java-test java-clean

jar: deps-apt ## build the shaded hooks jar (hadoop-patches/target/newtricks-hadoop-hooks.jar)
	$(MVN) $(MVN_FLAGS) -f hadoop-patches/pom.xml -DskipTests package

java-test: deps-apt ## run the Java hooks' unit tests
	$(MVN) $(MVN_FLAGS) -f hadoop-patches/pom.xml test

java-clean: ## remove the Java build output
	rm -rf hadoop-patches/target
