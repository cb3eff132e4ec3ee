# The secure (Kerberized) test cluster: Hadoop's MiniKdc resolved from Maven Central into
# $(CACHE), never into git. harness/cluster/kdc.go starts it as its own process.
MINIKDC_LIB := $(CACHE)/minikdc-$(HADOOP_VERSION)/lib
MINIKDC_POM := hadoop-patches/minikdc/pom.xml
MINIKDC_STAMP := $(MINIKDC_LIB)/.resolved-$(shell cat $(MINIKDC_POM) | sha256sum | cut -c1-12)-$(RUNTIME_RECIPE)

.PHONY: minikdc
minikdc: $(MINIKDC_STAMP) ## resolve Hadoop's MiniKdc (the KDC of the secure test cluster)

$(MINIKDC_STAMP): | deps-apt
	@echo "resolving hadoop-minikdc $(HADOOP_VERSION) into $(MINIKDC_LIB)"
	$(call resolve_runtime,$(MINIKDC_POM),$(MINIKDC_LIB))
	@rm -f $(MINIKDC_LIB)/.resolved*
	@echo "$(HADOOP_VERSION)" > $@

# The secure conformance cases need the KDC; the harness finds it through this variable.
test-prereqs: minikdc
TEST_ENV += NEWTRICKS_MINIKDC_LIB=$(MINIKDC_LIB)
