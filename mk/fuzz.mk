# make fuzz: every Fuzz target of the module, one after another, FUZZTIME each (default 20s)
# with 2 workers. Every public request decoder has one: OpenSession and the other Offload
# calls, replica reads (datanode-ext), Namespace, DataNodeDirectory, Hints and Mirror calls
# (namenode-ext), dataset indexes, block lists, schedules, graphs, credentials and tokens,
# media (images, video, frames), tokenizers; BUILDING.md ("Fuzzing the public request
# decoders") lists them.
#
# The targets are read from each package's test files as `go list` sees them, so a package
# whose tests do not build fails the run instead of being skipped. A failing target does not
# stop the others; a crashing input is kept in its package's testdata/fuzz/<target>/ (go test
# -run '<target>/<file>' replays it). Each target's output is in FUZZLOG; the last lines are a
# summary: one line per target (result, execs, new interesting inputs, wall time) and the
# total.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded" when
# FUZZTIME runs out while a worker is busy (likelier on a loaded machine; fixed in Go 1.27,
# golang/go#75804): no input failed and none is written. Such a result is "flake" in the
# summary and does not fail the run; a failure that wrote an input, or any other failure,
# does.
FUZZTIME ?= 20s
FUZZLOG  ?= $(CACHE)/fuzz
# FUZZPKG narrows the run (make fuzz FUZZPKG=./namenode-ext/...).
FUZZPKG  ?= ./...

.PHONY: fuzz
fuzz: xform-media ## run every Fuzz* target of the module (FUZZPKG) for FUZZTIME each (default 20s); summary at the end
	@set -uo pipefail; mkdir -p $(FUZZLOG); start=$$SECONDS; failed=0; flaky=0; summary=(); \
	for pkg in $$(go list $(FUZZPKG)); do \
	  files=$$(go list -f '{{$$d := .Dir}}{{range .TestGoFiles}}{{$$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$$d}}/{{.}} {{end}}' $$pkg) || exit 1; \
	  [ -n "$$files" ] || continue; \
	  dir=$$(go list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*([A-Za-z_]* \*testing\.F)' $$files | sed 's/^func \([A-Za-z0-9_]*\).*/\1/' | sort -u); do \
	    log=$(FUZZLOG)/$${pkg//\//_}.$$f.log; t0=$$SECONDS; \
	    inputs=$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l); \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    if NEWTRICKS_XFORM_MEDIA=$(XFORM_MEDIA) go test $$pkg -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -parallel 2 2>&1 | tee $$log; \
	    then r=ok; \
	    elif [ "$$(ls $$dir/testdata/fuzz/$$f 2>/dev/null | wc -l)" = "$$inputs" ] && \
	      [ "$$(grep -A1 -- "^--- FAIL: $$f " $$log | tail -1 | tr -d ' \t')" = contextdeadlineexceeded ]; \
	    then r=flake; flaky=$$((flaky+1)); \
	    else r=FAIL; failed=$$((failed+1)); fi; \
	    last=$$(grep -o 'execs: [0-9]* ([0-9]*/sec), new interesting: [0-9]*' $$log | tail -1 | sed 's| ([0-9]*/sec)||'); \
	    summary+=("$$r $$pkg $$f: $${last:-no execs}, $$((SECONDS-t0))s"); \
	  done; \
	done; \
	echo "== fuzz summary (FUZZTIME $(FUZZTIME), logs in $(FUZZLOG))"; printf '%s\n' "$${summary[@]}"; \
	echo "== $${#summary[@]} targets, $$failed failed, $$flaky flaky (no input failed), $$((SECONDS-start))s"; \
	[ $$failed = 0 ]
