#!/usr/bin/env bash
# bench-xform orchestrator: image pipeline (newtricks vs Pillow-SIMD+numpy vs
# simplejpeg+OpenCV), then the video engineer's bench/xform/video.sh. Every contender runs
# on one core (taskset -c $CORE) with one thread (GOMAXPROCS=1, OMP/OpenBLAS/OpenCV 1).
# Throughput is images per CPU-second of the process (user+sys) — robust to other load on
# a shared machine — with wall-clock figures printed alongside. Each contender runs REPS
# repetitions of N images; the median repetition is reported.
# Env: XFORM_MEDIA (media root), BENCH_VENV, SIMD_VENV, N (300), REPS (5), CORE (1),
# PARTS ("image video"; a part left out prints n/a).
# Last line: BENCH xform image_vs_pillowsimd=<x> video_vs_decord=<x> decode_vs_ffmpeg=<x>
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
media=${XFORM_MEDIA:-$root/xformgraph/testdata/media}
cache=${NEWTRICKS_CACHE:-$HOME/.cache/newtricks}
bench_venv=${BENCH_VENV:-$cache/venv-bench}
simd_venv=${SIMD_VENV:-$cache/venv-bench-simd}
N=${N:-300}
REPS=${REPS:-5}
CORE=${CORE:-1}
img=$media/images/photo_q90_420.jpg
PARTS=${PARTS:-image video}
export GOMAXPROCS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENCV_FOR_THREADS_NUM=1
pin() { taskset -c "$CORE" "$@"; }

# median of the cpu_ips (or wall_ips) field of REP lines on stdin
median() {
  grep '^REP' | sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a=="n/a" || b=="n/a" || b==0) print "n/a"; else printf "%.2f\n", a/b }'; }

image_ratio=n/a
if [[ " $PARTS " != *" image "* ]]; then
  echo "== image: skipped (PARTS=$PARTS)"
elif [ -f "$img" ]; then
  echo "== image: $img ($(stat -c %s "$img") bytes), $REPS x $N images, core $CORE, one thread"
  bin=$(mktemp -d)/imagebench
  (cd "$root" && go build -o "$bin" ./bench/xform/imagebench) || { echo "build imagebench failed"; bin=; }
  declare -A cpu wall
  run() { # name cmd...
    local name=$1; shift
    local out
    out=$("$@" 2>/tmp/bench-xform-$name.err) || { echo "$name: failed: $(tail -3 /tmp/bench-xform-$name.err)"; cpu[$name]=n/a; wall[$name]=n/a; return; }
    echo "$out" | sed "s/^/  $name /"
    cpu[$name]=$(echo "$out" | median cpu_ips)
    wall[$name]=$(echo "$out" | median wall_ips)
  }
  # Interleave contenders so that slow drifts in machine load hit all of them alike.
  [ -n "$bin" ] && run newtricks pin "$bin" -file "$img" -n "$N" -reps "$REPS"
  if [ -x "$simd_venv/bin/python" ]; then
    run pillowsimd pin "$simd_venv/bin/python" "$here/image_baselines.py" pillow "$img" "$N" "$REPS"
  else echo "pillow-simd venv missing ($simd_venv)"; cpu[pillowsimd]=n/a; wall[pillowsimd]=n/a; fi
  if [ -x "$bench_venv/bin/python" ]; then
    run opencv pin "$bench_venv/bin/python" "$here/image_baselines.py" cv2 "$img" "$N" "$REPS"
  else echo "bench venv missing ($bench_venv)"; cpu[opencv]=n/a; wall[opencv]=n/a; fi
  echo "image median images/s per CPU-second: newtricks=${cpu[newtricks]:-n/a} pillow-simd=${cpu[pillowsimd]} simplejpeg+opencv=${cpu[opencv]}"
  echo "image median images/s wall-clock:      newtricks=${wall[newtricks]:-n/a} pillow-simd=${wall[pillowsimd]} simplejpeg+opencv=${wall[opencv]}"
  image_ratio=$(ratio "${cpu[newtricks]:-n/a}" "${cpu[pillowsimd]}")
  echo "image ratios (CPU-time): vs pillow-simd=$image_ratio vs simplejpeg+opencv=$(ratio "${cpu[newtricks]:-n/a}" "${cpu[opencv]}")"
  grep -h INFO /tmp/bench-xform-*.err 2>/dev/null | sed 's/^/  /'
else
  echo "image media missing ($img): run make xform-media"
fi

video_vs_decord=n/a
decode_vs_ffmpeg=n/a
if [[ " $PARTS " != *" video "* ]]; then
  echo "== video: skipped (PARTS=$PARTS)"
elif [ -f "$here/video.sh" ]; then
  echo "== video: bench/xform/video.sh"
  vout=$(XFORM_MEDIA=$media BENCH_VENV=$bench_venv CORE=$CORE bash "$here/video.sh" 2>&1)
  echo "$vout" | sed 's/^/  /'
  res=$(echo "$vout" | grep '^RESULT' | tail -1)
  v=$(echo "$res" | sed -n 's/.*video_vs_decord=\([^ ]*\).*/\1/p')
  d=$(echo "$res" | sed -n 's/.*decode_vs_ffmpeg=\([^ ]*\).*/\1/p')
  [ -n "$v" ] && video_vs_decord=$v
  [ -n "$d" ] && decode_vs_ffmpeg=$d
else
  echo "== video: bench/xform/video.sh absent"
fi
echo "BENCH xform image_vs_pillowsimd=$image_ratio video_vs_decord=$video_vs_decord decode_vs_ffmpeg=$decode_vs_ffmpeg"
