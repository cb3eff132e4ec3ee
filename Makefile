# newtricks top-level Makefile. Each subsystem adds its targets in mk/<name>.mk so that
# work on one subsystem never edits another's rules.
SHELL := /bin/bash
.DEFAULT_GOAL := help
export GOFLAGS ?= -mod=mod
# One GOAMD64 level for every build, test and benchmark: from v3 on the Go compiler may fuse
# multiply-adds, which round differently, and xformgraph promises the same bytes on every
# host (its determinism domain records the level; see docs/xformgraph.md). v1 runs on every
# x86-64 CPU.
export GOAMD64 := v1

# Everything downloaded (Hadoop jars, Python venvs, test media) lives here, outside git.
CACHE ?= $(HOME)/.cache/newtricks
export NEWTRICKS_CACHE := $(CACHE)
# Go tools the build installs (protoc plugins).
TOOLS_BIN := $(CACHE)/bin

include $(sort $(wildcard mk/*.mk))

.PHONY: help
help:
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'
