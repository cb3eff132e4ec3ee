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

# Everything the tests need, installed by the tests' own command (before any test runs, so
# the two lanes below never install at the same time).
TEST_PREREQS := deps-apt hadoop jar build xform-media xform-pyenv

# What the lanes need beyond TEST_PREREQS; subsystems add theirs (mk/python.mk, mk/secure.mk).
.PHONY: test-prereqs
test-prereqs: $(TEST_PREREQS)

# `make test` runs its suites in two lanes at once, each a sequence, after the Java unit tests:
#   conformance: the conformance package on HADOOP_VERSION, the compose cluster with the kit,
#                then the smoke on one other line
#   units:       every other Go package, the Python and PyTorch tests, then the smoke on the
#                remaining line
# A conformance run spends most of its time waiting for daemons (one core's worth of CPU on
# average), so two lanes on two cores take about the longer lane's time instead of the sum.
# Each lane's output is prefixed with its name and kept in $(CACHE)/test-lane-<name>.log; a
# failing lane fails `make test` after the other lane finished, which then ends with what
# failed (mk/failsummary.sh: each failed test and its messages from every log of this run).
SMOKE_VERSIONS ?= $(filter-out $(HADOOP_VERSION),$(HADOOP_VERSIONS))
SMOKE_A := $(word 1,$(SMOKE_VERSIONS))
SMOKE_B := $(wordlist 2,$(words $(SMOKE_VERSIONS)),$(SMOKE_VERSIONS))
GO_UNIT_PKGS = $(shell go list ./... | grep -v '/conformance$$')

.PHONY: test test-lane-conformance test-lane-units test-conformance test-units
test: $(TEST_PREREQS) verify test-prereqs test-versions-prereqs ## run every test on HADOOP_VERSION (unit, Java, Python, the compose cluster with the conformance kit, conformance against real Hadoop) and the smoke conformance on the other lines, in two lanes
	@mkdir -p $(CACHE) && touch $(CACHE)/test-started
	$(MAKE) --no-print-directory java-test
	@$(MAKE) --no-print-directory -j2 test-lane-conformance test-lane-units || \
	  { bash mk/failsummary.sh $(CACHE)/test-started $(CACHE)/last-test-*.log $(CACHE)/test-lane-*.log; exit 1; }

# lane(name, commands): run commands with their output prefixed by [name] and kept in a log.
lane = @set -o pipefail; start=$$(date +%s); { $(2); } 2>&1 | tee $(CACHE)/test-lane-$(1).log | sed -u 's/^/[$(1)] /'; \
  rc=$$?; echo "[$(1)] lane finished in $$(( $$(date +%s) - start )) s, exit $$rc"; exit $$rc

test-lane-conformance:
	$(call lane,conformance,$(MAKE) --no-print-directory test-conformance && $(MAKE) --no-print-directory compose-test && \
	  $(MAKE) --no-print-directory test-smoke SMOKE_VERSIONS="$(SMOKE_A)")

test-lane-units:
	$(call lane,units,$(MAKE) --no-print-directory test-units && $(MAKE) --no-print-directory python-test && \
	  $(MAKE) --no-print-directory python-test-torch && $(MAKE) --no-print-directory test-smoke SMOKE_VERSIONS="$(SMOKE_B)")

test-conformance: ## the conformance package on HADOOP_VERSION (real Hadoop, real clients)
	@mkdir -p $(CACHE)
	$(TEST_ENV) go test -p 1 -count=1 -timeout 60m ./conformance/ 2>&1 | tee $(CACHE)/last-test-conformance.log; exit $${PIPESTATUS[0]}

test-units: ## every Go package but conformance (unit tests, and the packages' own cluster tests)
	@mkdir -p $(CACHE)
	$(TEST_ENV) go test -p 1 -count=1 -timeout 60m $(GO_UNIT_PKGS) 2>&1 | tee $(CACHE)/last-test-units.log; exit $${PIPESTATUS[0]}

.PHONY: demo
.PHONY: demo
demo: deps-apt hadoop jar build ## start a local cluster with the extensions and show what they see
	$(TEST_ENV) go run ./cmd/newtricks demo

# The smoke conformance of a Hadoop line: the spine, one case of each trick (hot-file hints
# with the conditional change racing an admin's setrep, the mirror, offload) and the HA
# cluster, with hints and the mirror across failovers. `make test` runs everything on
# HADOOP_VERSION and this on the other lines (one in each lane), after cmd/hooks-linkcheck
# checked the hooks jar's byte code against every line's jars.
SMOKE_TESTS := ^(TestSpine|TestHA|TestHATricks|TestHotspot|TestMirror|TestOffload)$$/^(hint_raises_factor|an_admin.s_setrep_racing|BytesPermsAndNoPartialView|storage_output_equals_local)

.PHONY: test-versions test-versions-prereqs test-smoke
test-versions: test-versions-prereqs test-smoke ## smoke conformance on the other Hadoop lines (SMOKE_VERSIONS), one after the other

test-versions-prereqs: deps-apt jar build xform-media ## resolve the other lines' Hadoop and MiniKdc; the hooks' link check on every line
	@for v in $(SMOKE_VERSIONS); do $(MAKE) --no-print-directory hadoop minikdc HADOOP_VERSION=$$v || exit 1; done
	@for v in $(HADOOP_VERSION) $(SMOKE_VERSIONS); do \
	  go run ./cmd/hooks-linkcheck -jar $(HOOKS_JAR) -lib $(CACHE)/hadoop-$$v/lib || exit 1; done

test-smoke: ## the smoke conformance on SMOKE_VERSIONS (resolved by test-versions-prereqs)
	@mkdir -p $(CACHE)
	@set -o pipefail; for v in $(SMOKE_VERSIONS); do \
	  echo "smoke conformance on Hadoop $$v (log: $(CACHE)/last-test-$$v.log)"; \
	  $(TEST_ENV) NEWTRICKS_HADOOP_LIB=$(CACHE)/hadoop-$$v/lib NEWTRICKS_MINIKDC_LIB=$(CACHE)/minikdc-$$v/lib \
	    go test -p 1 -count=1 -timeout 30m -run '$(SMOKE_TESTS)' -v ./conformance/ 2>&1 \
	    | tee $(CACHE)/last-test-$$v.log | grep -E '^(=== RUN|--- |\s+--- |PASS|FAIL|ok)|STARTUP|FAILOVER' || exit 1; \
	done
