# The docker-compose topology, run for real with podman (docker-compose/README.md), and the
# conformance kit against any running cluster.
#
#   make compose-test                 build the image, start NameNode + 3 DataNodes, run the
#                                     kit inside the compose network, kill a datanode-ext,
#                                     down/up keeps the namespace; tears everything down
#   make conformance CLUSTER=...      the kit against a running cluster: Hadoop conf dir(s)
#                                     (comma-separated, the NameNode's first), a JSON
#                                     description, or up:NAME (newtricks cluster up --name NAME)
COMPOSE_IMAGE := newtricks/hdfs:dev
COMPOSE_CACHE := $(CACHE)/images
COMPOSE_STAGE := docker-compose/.artifacts

.PHONY: compose-deps compose-base compose-image compose-test compose-config conformance

compose-deps: ## install podman, podman-compose, mmdebstrap; set containers.conf for this machine
	@docker-compose/podman-setup.sh

# The Debian 12 base with the runtime packages, bootstrapped from Debian's mirror (no image
# registry needed); the tarball is cached in $(COMPOSE_CACHE), keyed by what goes into it.
compose-base: compose-deps ## bootstrap (or re-import) the image's Debian 12 base
	@docker-compose/bootstrap-base.sh $(COMPOSE_CACHE) > $(COMPOSE_CACHE).base-image
	@echo "compose base: $$(cat $(COMPOSE_CACHE).base-image)"

# The co-processes, the jar and the Hadoop jars are built on the host (make build jar hadoop)
# and copied in: nothing compiles inside the image.
compose-image: compose-base build jar hadoop ## build the compose image from the host's binaries and jars
	@rm -rf $(COMPOSE_STAGE) && mkdir -p $(COMPOSE_STAGE)/bin $(COMPOSE_STAGE)/lib
	@cp -l $(BIN)/namenode-ext $(BIN)/datanode-ext $(BIN)/newtricks $(COMPOSE_STAGE)/bin/ 2>/dev/null || \
	  cp $(BIN)/namenode-ext $(BIN)/datanode-ext $(BIN)/newtricks $(COMPOSE_STAGE)/bin/
	@cp -l $(HADOOP_LIB)/*.jar $(HOOKS_JAR) $(COMPOSE_STAGE)/lib/ 2>/dev/null || cp $(HADOOP_LIB)/*.jar $(HOOKS_JAR) $(COMPOSE_STAGE)/lib/
	podman build --quiet --layers -t $(COMPOSE_IMAGE) -f docker-compose/Dockerfile \
	  --build-arg ARTIFACTS=host --build-arg BASE_IMAGE=$$(cat $(COMPOSE_CACHE).base-image) . >/dev/null
	@rm -rf $(COMPOSE_STAGE)
	@podman image prune -f >/dev/null 2>&1 || true
	@echo "compose image: $(COMPOSE_IMAGE) ($$(podman image inspect -f '{{.Size}}' $(COMPOSE_IMAGE) | numfmt --to=iec))"

test-prereqs: compose-deps
compose-test: compose-image ## run the compose topology with podman and the conformance kit in it
	docker-compose/compose-test.sh

compose-config: compose-deps ## validate docker-compose/compose.yaml without starting it
	@docker-compose -f docker-compose/compose.yaml config -q && echo "compose-config: ok"

CLUSTER ?=
conformance: build ## run the conformance kit against CLUSTER (conf dirs, a JSON file, or up:NAME)
	@if [ -z "$(CLUSTER)" ]; then echo "usage: make conformance CLUSTER=/etc/hadoop/conf | CLUSTER=cluster.json | CLUSTER=up:dc-a" >&2; exit 2; fi
	@case "$(CLUSTER)" in \
	  up:*) exec $(BIN)/newtricks conformance --name "$(patsubst up:%,%,$(CLUSTER))" $(KIT_FLAGS) ;; \
	  *.json) exec $(BIN)/newtricks conformance --cluster "$(CLUSTER)" $(KIT_FLAGS) ;; \
	  *) exec $(BIN)/newtricks conformance $$(echo "$(CLUSTER)" | tr ',' '\n' | sed 's/^/--conf /') $(KIT_FLAGS) ;; \
	esac
