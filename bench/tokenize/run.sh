#!/usr/bin/env bash
# bench-tokenize: the tokenize package (Go) against Hugging Face tokenizers (Rust, through
# Python) on the same corpus and tokenizer.json files: the reference of the tests
# (xformgraph/tokenize/testdata/reference.py: ~3 MB of generated multilingual text, four
# tokenizers trained by tokenizers). Both sides run pinned to one core (taskset -c $CORE)
# with one thread (GOMAXPROCS=1; RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false), encode
# every document with add_special_tokens and no truncation or padding, after a warm-up pass,
# REPS times alternating. Throughput is per CPU-second of the process (robust to other load
# on a shared machine); wall figures are printed too. tokenizers is timed one document per
# call (encode, what a per-sample transform does) and in one encode_batch call (no Python
# per call); the ratio is against the faster of the two.
# Env: NEWTRICKS_PYTHON (a venv with tokenizers: make xform-pyenv), NT_TOKENIZE_REF (an
# existing reference directory; default: made afresh), REPS (3), CORE (1), PLOT (the per-repetition
# ratios drawn after the timed runs, default $NEWTRICKS_CACHE/bench-tokenize.png).
# Last line: BENCH tokenize <name>=<go/tokenizers ratio> ... (medians of per-repetition ratios)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${NEWTRICKS_PYTHON:-$HOME/.cache/newtricks/venv-test/bin/python}
REPS=${REPS:-3}
CORE=${CORE:-1}
plot=${PLOT:-${NEWTRICKS_CACHE:-$HOME/.cache/newtricks}/bench-tokenize.png}
names="gpt2 template fallback suffix"
export GOMAXPROCS=1 RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false
pin() { taskset -c "$CORE" "$@"; }

"$py" -c 'import tokenizers' || { echo "bench-tokenize: $py cannot import tokenizers (make xform-pyenv)" >&2; exit 1; }
ref=${NT_TOKENIZE_REF:-}
if [ -z "$ref" ]; then
  ref=$(mktemp -d)
  trap 'rm -rf "$ref"' EXIT
  (cd "$root/xformgraph/tokenize" && "$py" testdata/reference.py "$ref" >/dev/null)
fi
bin=$(mktemp -d)/tokenize.test
(cd "$root" && go test -c -o "$bin" ./xformgraph/tokenize)
echo "tokenizers $("$py" -c 'import tokenizers; print(tokenizers.__version__)'), $(go version | cut -d' ' -f3), corpus $(du -b "$ref/docs.bin" | cut -f1) bytes, core $CORE"

out=$(mktemp)
for r in $(seq "$REPS"); do
  (cd "$root/xformgraph/tokenize" && NT_TOKENIZE_REF=$ref pin "$bin" -test.run '^$' -test.bench '^BenchmarkEncode$' -test.benchtime 2x) |
    awk -v r="$r" '/^BenchmarkEncode\// { split($1, a, "/"); sub(/-[0-9]+$/, "", a[2]);
      for (i = 1; i <= NF; i++) { if ($(i+1) == "cpu-MB/s") mbs = $i; if ($(i+1) == "cpu-tokens/s") tps = $i; if ($(i+1) == "MB/s") w = $i }
      printf "REP %s go %s cpu_mbs=%s cpu_tps=%s wall_mbs=%s\n", r, a[2], mbs, tps, w }' >>"$out"
  pin "$py" "$here/tokenizers_bench.py" "$ref" $names | sed "s/^REP /REP $r /" >>"$out"
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
line="BENCH tokenize"
series=""
printf "%-10s %-22s %-22s %-22s %s\n" tokenizer "go MB/cpu-s (tok/s)" "tk encode MB/cpu-s" "tk batch MB/cpu-s" "go/best"
for n in $names; do
  g=$(grep " go $n " "$out" | field cpu_mbs | median)
  gt=$(grep " go $n " "$out" | field cpu_tps | median)
  e=$(grep " $n encode " "$out" | field cpu_mbs | median)
  bt=$(grep " $n encode_batch " "$out" | field cpu_mbs | median)
  per_rep=$(for r in $(seq "$REPS"); do
    gg=$(grep "^REP $r go $n " "$out" | field cpu_mbs)
    ee=$(grep "^REP $r $n encode " "$out" | field cpu_mbs)
    bb=$(grep "^REP $r $n encode_batch " "$out" | field cpu_mbs)
    awk -v g="$gg" -v e="$ee" -v b="$bb" 'BEGIN { m = (e > b) ? e : b; printf "%.3f\n", g / m }'
  done)
  ratios=$(echo "$per_rep" | median)
  series+="${series:+,}{\"name\": \"$n\", \"x\": [$(seq -s, 1 "$REPS")], \"y\": [$(echo "$per_rep" | paste -sd, -)]}"
  printf "%-10s %-22s %-22s %-22s %s\n" "$n" "$g ($gt)" "$e" "$bt" "$ratios"
  line="$line $n=$ratios"
done
rm -f "$out" "$bin"
mkdir -p "$(dirname "$plot")"
echo "{\"title\": \"tokenize (Go) over the faster of tokenizers' encode and encode_batch, per CPU-second, repetition by repetition\", \"xlabel\": \"repetition\", \"integer_x\": true, \"ylabel\": \"ratio\", \"series\": [$series]}" |
  (cd "$root" && go run ./bench/internal/plot/cmd/plotjson -png "$plot")
echo "$line"
