# Python package (python/): the trainer's client. Its gRPC/protobuf modules are generated from
# proto/ with the pinned grpcio-tools (python/gen-proto.sh), checked in, never edited by hand;
# `make verify` fails when they drift. libnewtricks (the trainer's side as a C shared
# library: transforms, reader, Kerberos; ./cmd/libnewtricks) is built once here and bundled into the installed package.
PY_VENV        := $(CACHE)/venv-python
PY             := $(PY_VENV)/bin/python
PY_GRPC_TOOLS  ?= 1.85.1
PY_PYTEST      ?= 9.2.0
PY_AV          ?= 18.1.0
PY_WEBDATASET  ?= 1.0.2
PY_SETUPTOOLS  ?= 84.2.1
PY_GEN_DIRS    := python/src/newtricks/v1 python/src/newtricks/xform
NEWTRICKS_LIB := $(BIN)/libnewtricks.so
XFORM_REFRUN   := $(BIN)/xformgraph-refrun
PY_SOURCES      = $(shell find python/src python/pyproject.toml python/setup.py -type f -not -path '*/__pycache__/*')
CAPI_SOURCES    = $(shell find cmd/libnewtricks cmd/xformgraph-refrun xformgraph reader schedule dataset internal/authn internal/apiclient internal/nsclient internal/siteconf -name '*.go' -not -name '*_test.go')

# The tools venv: pinned generator, test runner, PyAV (the FFmpeg-clash test imports it) and
# webdataset (the peer whose shards and decoded samples tests/test_samples.py compares with).
PY_TOOLS_STAMP := $(PY_VENV)/.tools-$(PY_GRPC_TOOLS)-wds$(PY_WEBDATASET)
$(PY_TOOLS_STAMP):
	python3 -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q --upgrade pip
	$(PY_VENV)/bin/pip install -q grpcio-tools==$(PY_GRPC_TOOLS) pytest==$(PY_PYTEST) av==$(PY_AV) \
	  setuptools==$(PY_SETUPTOOLS) wheel webdataset==$(PY_WEBDATASET)
	touch $@

.PHONY: python-venv
python-venv: $(PY_TOOLS_STAMP) ## venv with the pinned grpcio-tools, pytest, PyAV and webdataset

.PHONY: python-proto
python-proto: python-venv ## regenerate the Python gRPC/protobuf modules from proto/
	rm -rf $(PY_GEN_DIRS)
	python/gen-proto.sh $(PY) python/src

.PHONY: python-proto-check
python-proto-check: python-venv ## fail if the checked-in Python stubs differ from proto/
	@tmp=$$(mktemp -d); python/gen-proto.sh $(PY) $$tmp/src >/dev/null && \
	if ! diff -r -x __pycache__ $$tmp/src/newtricks/v1 python/src/newtricks/v1 >/dev/null || \
	   ! diff -r -x __pycache__ $$tmp/src/newtricks/xform python/src/newtricks/xform >/dev/null; then \
	  echo "python stubs are stale: run make python-proto"; \
	  diff -r -x __pycache__ $$tmp/src/newtricks python/src/newtricks | grep -v '^Only in python/src' | head -20; rm -rf $$tmp; exit 1; fi; \
	rm -rf $$tmp; echo "python-proto-check: ok"

$(NEWTRICKS_LIB): $(CAPI_SOURCES) go.mod go.sum
	go build -buildmode=c-shared -o $@ ./cmd/libnewtricks
	rm -f $(BIN)/libnewtricks.h

$(XFORM_REFRUN): $(CAPI_SOURCES) go.mod go.sum
	go build -o $@ ./cmd/xformgraph-refrun

.PHONY: python-lib
python-lib: $(NEWTRICKS_LIB) $(XFORM_REFRUN) ## build libnewtricks.so (transforms, reader, Kerberos for Python) and the Go reference runner

# Installs ./python (non-editable, as a user would) with the freshly built library.
$(PY_VENV)/.installed: $(PY_TOOLS_STAMP) $(NEWTRICKS_LIB) $(PY_SOURCES)
	NEWTRICKS_LIB=$(NEWTRICKS_LIB) $(PY_VENV)/bin/pip install -q --no-build-isolation ./python
	rm -rf python/build python/src/*.egg-info
	touch $@

.PHONY: python-install
python-install: $(PY_VENV)/.installed ## pip install ./python into $(PY_VENV)

# `pip install ./python` in a brand-new venv, as a user would (build isolation, libnewtricks
# built by setup.py with Go), then one transform. Optional: it downloads the dependencies.
.PHONY: python-install-check
python-install-check: xform-media ## pip install ./python into a fresh venv and run a transform
	@tmp=$$(mktemp -d); python3 -m venv $$tmp/venv && $$tmp/venv/bin/pip install -q ./python && \
	rm -rf python/build python/src/*.egg-info && \
	(cd $$tmp && $$tmp/venv/bin/python -c 'import sys, newtricks.transforms as t; \
	  g = t.Graph({"version": 1, "nodes": [{"id": "d", "op": "decode_image", "input": "input"}, \
	    {"id": "t", "op": "to_tensor", "input": "d", "params": {"layout": "CHW", "dtype": "uint8"}}], "outputs": ["t"]}); \
	  (x,) = g.run(open(sys.argv[1], "rb").read(), key="k"); print("python-install-check: ok", x.shape, t.domain())' \
	  $(XFORM_MEDIA)/images/photo_q90_420.jpg); rc=$$?; rm -rf $$tmp; exit $$rc

# The conformance's Python client on the HA cluster (conformance/ha_clients_test.go) runs
# newtricks from python/src with this venv's grpcio and protobuf.
TEST_ENV += NEWTRICKS_PY_CLIENT=$(PY)

PY_TEST_ENV = NEWTRICKS_BIN=$(BIN) NEWTRICKS_HOOKS_JAR=$(HOOKS_JAR) NEWTRICKS_HADOOP_LIB=$(HADOOP_LIB) \
  NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) NEWTRICKS_XFORM_REFRUN=$(XFORM_REFRUN) NEWTRICKS_CACHE=$(CACHE) \
  NEWTRICKS_MINIKDC_LIB=$(MINIKDC_LIB)

.PHONY: python-test
python-test: hadoop jar build minikdc xform-media python-install $(XFORM_REFRUN) ## pytest: hints on a real cluster, libnewtricks bit-identity, fork/spawn, PyAV
	cd python && $(PY_TEST_ENV) $(PY) -m pytest -q -p no:cacheprovider --ignore=tests/test_torch.py tests

# PyTorch adapter tests (tests/test_torch.py, part of `make test`), on a CPU-only torch: PyPI's
# torch wheels for x86-64 Linux depend on gigabytes of CUDA libraries, so this venv takes
# Debian's CPU build (python3-torch, for Debian's own /usr/bin/python3) through
# --system-site-packages, with numpy from Debian too (the build is linked against it).
# torchdata (StatefulDataLoader) is pure Python and installed without its dependency check:
# it declares torch>=2, and works with Debian 12's torch 1.13 for what these tests use.
PY_TORCH_VENV   := $(CACHE)/venv-python-torch-deb
PY_TORCHDATA    ?= 0.11.0
PY_TORCH_STAMP  := $(PY_TORCH_VENV)/.tools-$(PY_GRPC_TOOLS)-td$(PY_TORCHDATA)-wds$(PY_WEBDATASET)

$(PY_TORCH_STAMP):
	@dpkg -s python3-torch >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-torch python3-venv; }
	rm -rf $(PY_TORCH_VENV)
	/usr/bin/python3 -m venv --system-site-packages $(PY_TORCH_VENV)
	$(PY_TORCH_VENV)/bin/pip install -q "grpcio==$$($(PY) -c 'import grpc; print(grpc.__version__)')" \
	  "protobuf==$$($(PY) -c 'import google.protobuf as p; print(p.__version__)')" pytest==$(PY_PYTEST) \
	  setuptools==$(PY_SETUPTOOLS) wheel braceexpand
	$(PY_TORCH_VENV)/bin/pip install -q --no-deps torchdata==$(PY_TORCHDATA) webdataset==$(PY_WEBDATASET)
	$(PY_TORCH_VENV)/bin/python -c 'import torch, numpy, torchdata.stateful_dataloader, webdataset; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "numpy", numpy.__version__)'
	touch $@

.PHONY: python-test-torch
python-test-torch: hadoop jar build minikdc xform-media python-venv $(PY_TORCH_STAMP) $(NEWTRICKS_LIB) ## newtricks.torch tests on Debian's CPU torch: StepDataset, StatefulDataLoader resume, elastic resume
	NEWTRICKS_LIB=$(NEWTRICKS_LIB) $(PY_TORCH_VENV)/bin/pip install -q --no-build-isolation --no-deps ./python
	rm -rf python/build python/src/*.egg-info
	cd python && $(PY_TEST_ENV) $(PY_TORCH_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_torch.py

# Wiring into the project's entry points: `make proto` regenerates the Python stubs too, so a
# proto change never leaves them stale; `make verify` checks them.
proto: python-proto
verify: python-proto-check
test-prereqs: python-install python-venv $(PY_TORCH_STAMP) $(NEWTRICKS_LIB) $(XFORM_REFRUN)

PY_PILLOW ?= 13.0.0
PY_DECORD ?= 0.6.0
PY_HDFS_NATIVE ?= 0.14.7
PY_FSSPEC ?= 2026.9.0

# bench-python's venv: its baseline is a torch DataLoader, so it takes Debian's CPU torch
# through --system-site-packages as PY_TORCH_VENV does (with Debian's numpy), plus pinned PyAV,
# Pillow and decord (the two clip decoders the baseline picks from, measured each run),
# hdfs-native (HDFS's own protocols without a JVM; the baseline picks it or keep-alive WebHDFS,
# measured each run; fsspec is its dependency) and grpcio/protobuf at the tools venv's
# versions; newtricks from ./python with the built library.
PY_BENCH_VENV  := $(CACHE)/venv-bench-python
PY_BENCH_STAMP := $(PY_BENCH_VENV)/.tools-$(PY_GRPC_TOOLS)-av$(PY_AV)-pil$(PY_PILLOW)-decord$(PY_DECORD)-hn$(PY_HDFS_NATIVE)

$(PY_BENCH_STAMP): $(PY_TOOLS_STAMP)
	@dpkg -s python3-torch >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3-torch python3-venv; }
	rm -rf $(PY_BENCH_VENV)
	/usr/bin/python3 -m venv --system-site-packages $(PY_BENCH_VENV)
	$(PY_BENCH_VENV)/bin/pip install -q "grpcio==$$($(PY) -c 'import grpc; print(grpc.__version__)')" \
	  "protobuf==$$($(PY) -c 'import google.protobuf as p; print(p.__version__)')" av==$(PY_AV) pillow==$(PY_PILLOW) \
	  decord==$(PY_DECORD) hdfs-native==$(PY_HDFS_NATIVE) fsspec==$(PY_FSSPEC) setuptools==$(PY_SETUPTOOLS) wheel
	$(PY_BENCH_VENV)/bin/python -c 'import torch, numpy, av, PIL, decord, hdfs_native; print("bench-python venv: torch", torch.__version__, "av", av.__version__, "pillow", PIL.__version__, "decord", decord.__version__)'
	touch $@

.PHONY: bench-python
bench-python: hadoop jar build xform-media $(PY_BENCH_STAMP) $(NEWTRICKS_LIB) ## Python training loop: torch DataLoader (best of 1, 2, 4 workers) vs newtricks.Reader offload; last line BENCH python ...
	NEWTRICKS_LIB=$(NEWTRICKS_LIB) $(PY_BENCH_VENV)/bin/pip install -q --no-build-isolation --no-deps ./python
	rm -rf python/build python/src/*.egg-info
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY_BENCH_VENV)/bin/python bench/python/bench.py \
	  --cli $(BIN)/newtricks --jar $(HOOKS_JAR) --media $(XFORM_MEDIA) --png $(CACHE)/bench-python-stall.png $(BENCH_PYTHON_FLAGS)
