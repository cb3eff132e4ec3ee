# The project's main entry points: build, test, verify, demo. Subsystems add their own
# targets (and prerequisites of these) in their mk/*.mk files.
GO_BINARIES := namenode-ext datanode-ext newtricks
BIN := $(CURDIR)/bin
HOOKS_JAR := $(CURDIR)/hadoop-patches/target/newtricks-hadoop-hooks.jar
# HADOOP_VERSION and HADOOP_LIB: mk/hadoop.mk.

# Environment every test, benchmark and the demo get: where the real parts are.
TEST_ENV := NEWTRICKS_CLUSTER_TESTS=1 NEWTRICKS_HADOOP_LIB=$(HADOOP_LIB) \
  NEWTRICKS_HOOKS_JAR=$(HOOKS_JAR) NEWTRICKS_BIN=$(BIN) \
  NEWTRICKS_XFORM_MEDIA=$(CURDIR)/xformgraph/testdata/media NEWTRICKS_PYTHON=$(CACHE)/venv-test/bin/python

.PHONY: build
build: deps-apt ## build the Go binaries into bin/
	go build -o $(BIN)/ ./namenode-ext/cmd/namenode-ext ./datanode-ext/cmd/datanode-ext ./cmd/newtricks

.PHONY: verify
verify: deps-apt $(TOOLS_BIN)/protoc-gen-go $(TOOLS_BIN)/protoc-gen-go-grpc ## gofmt, go vet, generated protos unchanged
	@bad=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	go vet ./...
	@tmp=$$(mktemp -d); \
	PATH=$(TOOLS_BIN):$$PATH protoc -I proto --go_out=$$tmp --go_opt=module=github.com/newtricks/newtricks \
	  --go-grpc_out=$$tmp --go-grpc_opt=module=github.com/newtricks/newtricks $(PROTO_FILES) && \
	if ! diff -r $$tmp/proto/gen proto/gen >/dev/null; then echo "proto/gen is stale: run make proto"; diff -r $$tmp/proto/gen proto/gen | head -20; rm -rf $$tmp; exit 1; fi; \
	rm -rf $$tmp; echo "verify: ok"

# Everything the tests need, installed by the tests' own command.
TEST_PREREQS := deps-apt hadoop jar build xform-media xform-pyenv

.PHONY: test
test: $(TEST_PREREQS) verify ## run every test on HADOOP_VERSION (unit, Java, the compose cluster with the conformance kit, conformance against real Hadoop), then the smoke conformance on the other lines
	@mkdir -p $(CACHE)
	$(MAKE) --no-print-directory java-test
	$(MAKE) --no-print-directory compose-test
	$(TEST_ENV) go test -p 1 -count=1 -timeout 60m ./... 2>&1 | tee $(CACHE)/last-test.log; exit $${PIPESTATUS[0]}
	$(MAKE) --no-print-directory test-versions

.PHONY: demo
demo: deps-apt hadoop jar build ## start a local cluster with the extensions and show what they see
	$(TEST_ENV) go run ./cmd/newtricks demo

# The smoke conformance of a Hadoop line: the spine, one case of each trick (hot-file hints
# with the conditional change racing an admin's setrep, the mirror, offload) and the HA
# cluster, with hints and the mirror across failovers. `make test` runs everything on
# HADOOP_VERSION and this on the other lines, after cmd/hooks-linkcheck checked the hooks
# jar's byte code against every line's jars.
SMOKE_TESTS := ^(TestSpine|TestHA|TestHATricks|TestHotspot|TestMirror|TestOffload)$$/^(hint_raises_factor|an_admin.s_setrep_racing|BytesPermsAndNoPartialView|storage_output_equals_local)
SMOKE_VERSIONS ?= $(filter-out $(HADOOP_VERSION),$(HADOOP_VERSIONS))

.PHONY: test-versions
test-versions: deps-apt jar build xform-media ## smoke conformance on the other Hadoop lines (SMOKE_VERSIONS)
	@mkdir -p $(CACHE)
	@for v in $(SMOKE_VERSIONS); do $(MAKE) --no-print-directory hadoop minikdc HADOOP_VERSION=$$v || exit 1; done
	@for v in $(HADOOP_VERSION) $(SMOKE_VERSIONS); do \
	  go run ./cmd/hooks-linkcheck -jar $(HOOKS_JAR) -lib $(CACHE)/hadoop-$$v/lib || exit 1; done
	@set -o pipefail; for v in $(SMOKE_VERSIONS); do \
	  echo "smoke conformance on Hadoop $$v (log: $(CACHE)/last-test-$$v.log)"; \
	  $(TEST_ENV) NEWTRICKS_HADOOP_LIB=$(CACHE)/hadoop-$$v/lib NEWTRICKS_MINIKDC_LIB=$(CACHE)/minikdc-$$v/lib \
	    go test -p 1 -count=1 -timeout 30m -run '$(SMOKE_TESTS)' -v ./conformance/ 2>&1 \
	    | tee $(CACHE)/last-test-$$v.log | grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok)|STARTUP|FAILOVER' || exit 1; \
	done
