# xformgraph: test media, Python reference/benchmark environments, benchmark (make fuzz: mk/fuzz.mk).
# make test (wired by the lead) runs `make xform-media xform-pyenv` and then sets
# NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) NEWTRICKS_PYTHON=$(XFORM_PYTHON).

XFORM_MEDIA  ?= $(CURDIR)/xformgraph/testdata/media
XFORM_VENV   := $(CACHE)/venv-test
XFORM_PYTHON := $(XFORM_VENV)/bin/python
BENCH_VENV   := $(CACHE)/venv-bench
SIMD_VENV    := $(CACHE)/venv-bench-simd

.PHONY: xform-media
xform-media: ## generate xformgraph test media (ImageMagick + ffmpeg CLI, never downloaded)
	xformgraph/testdata/gen-images.sh $(XFORM_MEDIA)/images
	@if [ -x xformgraph/testdata/gen-video.sh ]; then xformgraph/testdata/gen-video.sh $(XFORM_MEDIA)/video; \
	else echo "xformgraph/testdata/gen-video.sh absent: no video media"; fi

# tokenizers: the reference of xformgraph/tokenize (it trains its test tokenizers offline);
# xformgraph/tokenize/unicode_tables.go was generated from this release line.
XFORM_TOKENIZERS ?= 0.23.*

$(XFORM_PYTHON):
	python3 -m venv $(XFORM_VENV)
	$(XFORM_VENV)/bin/pip install -q --upgrade pip
	$(XFORM_VENV)/bin/pip install -q pillow numpy 'tokenizers==$(XFORM_TOKENIZERS)'

# decord (the video reference of xformgraph/video: a py3-none wheel bundling FFmpeg 4.1) and
# tokenizers (the tokenize op's reference) are added to a venv made before they were needed.
.PHONY: xform-pyenv
xform-pyenv: $(XFORM_PYTHON) ## venv with pillow, numpy, decord and tokenizers for the xformgraph reference tests
	@$(XFORM_PYTHON) -c 'import decord' 2>/dev/null || $(XFORM_VENV)/bin/pip install -q decord==0.6.0
	@$(XFORM_PYTHON) -c 'import tokenizers' 2>/dev/null || $(XFORM_VENV)/bin/pip install -q 'tokenizers==$(XFORM_TOKENIZERS)'
	@$(XFORM_PYTHON) -c 'import PIL, numpy, decord, tokenizers; print("xform-pyenv: pillow", PIL.__version__, "numpy", numpy.__version__, "decord", decord.__version__, "tokenizers", tokenizers.__version__)'

.PHONY: xform-test
xform-test: xform-media xform-pyenv ## xformgraph tests with media and Python references
	NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) NEWTRICKS_PYTHON=$(XFORM_PYTHON) go test ./xformgraph/...

$(BENCH_VENV)/.ok:
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --upgrade pip
	$(BENCH_VENV)/bin/pip install -q numpy simplejpeg opencv-python-headless pillow decord av
	touch $@

# pillow-simd builds from source: it needs the libjpeg and zlib headers.
$(SIMD_VENV)/.ok:
	@for p in libjpeg-dev zlib1g-dev; do dpkg -s $$p >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libjpeg-dev zlib1g-dev; break; }; done
	python3 -m venv $(SIMD_VENV)
	$(SIMD_VENV)/bin/pip install -q --upgrade pip
	$(SIMD_VENV)/bin/pip install -q numpy
	CC="cc -mavx2" $(SIMD_VENV)/bin/pip install -q --no-binary :all: pillow-simd
	touch $@

# The contenders of issue 24: TorchCodec 0.17 (video; it loads the system's FFmpeg) and
# torchvision's decode_jpeg + v2 transforms (image). PyPI's torch is the CUDA build: with its
# nvidia-* wheels several GB, none of which the one-core CPU runs use.
TORCH_PINS := torch==2.15.0 torchvision==0.29.2 torchcodec==0.17.0
$(BENCH_VENV)/.ok-torch: $(BENCH_VENV)/.ok
	$(BENCH_VENV)/bin/pip install -q $(TORCH_PINS)
	touch $@

.PHONY: bench-xform-env
bench-xform-env: $(BENCH_VENV)/.ok $(BENCH_VENV)/.ok-torch $(SIMD_VENV)/.ok ## Python baselines for bench-xform

.PHONY: bench-xform
bench-xform: xform-media bench-xform-env ## image + video transform benchmark, one thread each; last line BENCH xform ...
	XFORM_MEDIA=$(XFORM_MEDIA) BENCH_VENV=$(BENCH_VENV) SIMD_VENV=$(SIMD_VENV) bench/xform/run.sh

.PHONY: bench-tokenize
bench-tokenize: xform-pyenv ## xformgraph/tokenize vs Hugging Face tokenizers, one thread each; last line BENCH tokenize ...
	NEWTRICKS_PYTHON=$(XFORM_PYTHON) bench/tokenize/run.sh
