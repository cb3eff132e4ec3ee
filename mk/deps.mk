# Installs what the build needs on a fresh Debian machine. Idempotent and quick when done.
APT_PACKAGES := openjdk-17-jdk-headless maven protobuf-compiler pkg-config \
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libjpeg62-turbo-dev ffmpeg imagemagick \
  python3-venv iproute2 procps docker-compose

.PHONY: deps-apt
deps-apt: ## install the Debian packages the build and tests need
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
