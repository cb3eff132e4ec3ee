# The secure (Kerberized) test cluster: Hadoop's MiniKdc resolved from Maven Central into
# $(CACHE), never into git. harness/cluster/kdc.go starts it as its own process.
MINIKDC_LIB := $(CACHE)/minikdc-$(HADOOP_VERSION)/lib
MINIKDC_STAMP := $(MINIKDC_LIB)/.resolved
MINIKDC_POM := hadoop-patches/minikdc/pom.xml

.PHONY: minikdc
minikdc: $(MINIKDC_STAMP) ## resolve Hadoop's MiniKdc (the KDC of the secure test cluster)

$(MINIKDC_STAMP): $(MINIKDC_POM) | deps-apt
	@echo "resolving hadoop-minikdc $(HADOOP_VERSION) into $(MINIKDC_LIB)"
	rm -rf $(MINIKDC_LIB).tmp
	mvn -B -q -f $(MINIKDC_POM) -Dhadoop.version=$(HADOOP_VERSION) \
	  dependency:copy-dependencies -DoutputDirectory=$(abspath $(MINIKDC_LIB)).tmp \
	  -DincludeScope=runtime
	rm -rf $(MINIKDC_LIB) && mv $(MINIKDC_LIB).tmp $(MINIKDC_LIB)
	@echo "$(HADOOP_VERSION)" > $@

# The secure conformance cases need the KDC; the harness finds it through this variable.
test: minikdc
TEST_ENV += NEWTRICKS_MINIKDC_LIB=$(MINIKDC_LIB)
