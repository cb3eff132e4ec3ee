#!/usr/bin/env bash
# failsummary.sh STAMP LOG...: what failed, in a few lines, for the end of a red `make test`
# (CI keeps only the tail of the output). From each log newer than STAMP: in Go test logs
# (last-test-*.log) every failed test with the first lines of its last 4 messages (go test -v
# prints them before the "--- FAIL" line, plain go test after it), panics and build failures;
# in the others (the lanes') pytest's FAILED and ERROR lines. Lines are cut at 300
# characters, at most 22 are printed.
set -uo pipefail
stamp=$1
shift
out=$(for log in "$@"; do
  [ -f "$log" ] && [ "$log" -nt "$stamp" ] || continue
  go=0; case $(basename "$log") in last-test-*) go=1;; esac
  awk -v name="$(basename "$log")" -v go=$go '
    !go { if (/^FAILED |^ERROR (tests\/|at )/) print name ": " $0; next }
    # a message of a test: "    file_test.go:12: text" (indented 4 per subtest level)
    /^ +[A-Za-z0-9_.-]+\.go:[0-9]+: / {
      line = $0; sub(/^ +/, "", line)
      if (after) { print name ": " cur ": " line; next }
      # keep the last 4 messages of a test (the failing one is among them)
      n[cur]++; buf[cur, n[cur] % 4] = name ": " cur ": " line
      next
    }
    /^=== (RUN|CONT|NAME) / { cur = $3; after = 0; next }
    /^ *--- FAIL: / {
      t = $3; after = 1; cur = t
      print name ": --- FAIL " t " " $4
      for (i = (n[t] > 4 ? n[t] - 3 : 1); i <= n[t]; i++) print buf[t, i % 4]
      n[t] = 0
      next
    }
    /^panic: |^fatal error: |\[build failed\]|^FAIL\t/ { print name ": " $0; next }
    /^[^ ]/ { after = 0 }
  ' "$log"
done | cut -c1-300)
[ -n "$out" ] || exit 0
echo "==== what failed (the full logs are in $(dirname "$stamp")) ===="
n=$(printf '%s\n' "$out" | wc -l)
if [ "$n" -gt 22 ]; then
  printf '%s\n' "$out" | head -22
  echo "... $((n - 22)) more lines"
else
  printf '%s\n' "$out"
fi
