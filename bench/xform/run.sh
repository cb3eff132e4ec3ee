#!/usr/bin/env bash
# bench-xform orchestrator: image pipeline (newtricks vs Pillow-SIMD+numpy vs
# simplejpeg+OpenCV vs torchvision decode_jpeg + v2 RandomResizedCrop), then the video
# engineer's bench/xform/video.sh. Every contender runs
# on one core (taskset -c $CORE) with one thread (GOMAXPROCS=1, OMP/OpenBLAS/OpenCV 1).
# Throughput is images per CPU-second of the process (user+sys) — robust to other load on
# a shared machine — with wall-clock figures printed alongside. Each contender runs REPS
# repetitions of N images after a 20-image warm-up (imports and decoder set-up outside the
# timed region on every side); every figure is the median with (min, max) beside it.
# Env: XFORM_MEDIA (media root), BENCH_VENV, SIMD_VENV, N (300), REPS (5), CORE (1),
# PARTS ("image video"; a part left out prints n/a), PLOT_IMAGE (the plot of the image part's
# repetitions, default $NEWTRICKS_CACHE/bench-xform-image.png; the video part's: video.sh).
# Last line: BENCH xform image_vs_pillowsimd=<x> image_vs_torchvision=<x> video_vs_decord=<x>
# video_vs_torchcodec=<x> video_vs_floor=<x> decode_vs_ffmpeg=<x>
# (medians of per-repetition ratios; video_vs_floor is newtricks' CPU time per clip over the
# reference-frames-only decode's, see video.sh).
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
plot_image=${PLOT_IMAGE:-$cache/bench-xform-image.png}
export GOMAXPROCS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENCV_FOR_THREADS_NUM=1
pin() { taskset -c "$CORE" "$@"; }

# median of the cpu_ips (or wall_ips) field of REP lines on stdin
median() {
  grep '^REP' | sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "n/a"; else if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'
}
# "median (min, max)" of the same field
mmm() {
  grep '^REP' | sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "n/a"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f (%.2f, %.2f)\n", m, a[1], a[NR]}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a=="n/a" || b=="n/a" || b==0) print "n/a"; else printf "%.2f\n", a/b }'; }

image_ratio=n/a
image_vs_torchvision=n/a
failed=
if [[ " $PARTS " != *" image "* ]]; then
  echo "== image: skipped (PARTS=$PARTS)"
elif [ -f "$img" ]; then
  echo "== image: $img ($(stat -c %s "$img") bytes), $REPS x $N images, core $CORE, one thread"
  bin=$(mktemp -d)/imagebench
  (cd "$root" && go build -o "$bin" ./bench/xform/imagebench) || { echo "build imagebench failed"; bin=; }
  declare -A cpu wall reps_out
  have_simd=1; have_cv=1; have_tv=1
  [ -x "$simd_venv/bin/python" ] || { echo "pillow-simd venv missing ($simd_venv)"; have_simd=0; }
  [ -x "$bench_venv/bin/python" ] || { echo "bench venv missing ($bench_venv)"; have_cv=0; }
  "$bench_venv/bin/python" -c 'import torch, torchvision' 2>/dev/null || { echo "torchvision missing in $bench_venv: run make bench-xform-env"; have_tv=0; }
  one() { # name cmd... : one repetition, appends its REP line
    local name=$1; shift
    local out
    if out=$("$@" 2>>/tmp/bench-xform-$name.err); then
      reps_out[$name]+="$out"$'\n'
      echo "  rep $r $name $out"
    else
      echo "  rep $r $name failed: $(tail -2 /tmp/bench-xform-$name.err)"
    fi
  }
  rm -f /tmp/bench-xform-*.err
  # Contenders alternate within each repetition, so drifts in machine load hit all alike;
  # the ratio reported is the median of the per-repetition ratios.
  ratios=(); tv_ratios=()
  for r in $(seq 1 "$REPS"); do
    [ -n "$bin" ] && one newtricks pin "$bin" -file "$img" -n "$N" -reps 1
    [ $have_simd = 1 ] && one pillowsimd pin "$simd_venv/bin/python" "$here/image_baselines.py" pillow "$img" "$N" 1
    [ $have_cv = 1 ] && one opencv pin "$bench_venv/bin/python" "$here/image_baselines.py" cv2 "$img" "$N" 1
    [ $have_tv = 1 ] && one torchvision pin "$bench_venv/bin/python" "$here/image_baselines.py" torchvision "$img" "$N" 1
    a=$(echo "${reps_out[newtricks]:-}" | tail -2 | median cpu_ips)
    b=$(echo "${reps_out[pillowsimd]:-}" | tail -2 | median cpu_ips)
    c=$(echo "${reps_out[torchvision]:-}" | tail -2 | median cpu_ips)
    ratios+=("$(ratio "$a" "$b")")
    tv_ratios+=("$(ratio "$a" "$c")")
  done
  for name in newtricks pillowsimd opencv torchvision; do
    cpu[$name]=$(echo "${reps_out[$name]:-}" | median cpu_ips)
    wall[$name]=$(echo "${reps_out[$name]:-}" | median wall_ips)
  done
  for name in newtricks pillowsimd opencv torchvision; do
    echo "image $name images per CPU-second: $(echo "${reps_out[$name]:-}" | mmm cpu_ips); wall images/s: $(echo "${reps_out[$name]:-}" | mmm wall_ips)"
  done
  image_ratio=$(printf '%s\n' "${ratios[@]}" | grep -v n/a | sed 's/^/REP x=/' | median x)
  echo "image per-repetition ratios newtricks/pillow-simd (CPU-time): ${ratios[*]} -> median (min, max) $(printf '%s\n' "${ratios[@]}" | grep -v n/a | sed 's/^/REP x=/' | mmm x)"
  image_vs_torchvision=$(printf '%s\n' "${tv_ratios[@]}" | grep -v n/a | sed 's/^/REP x=/' | median x)
  echo "image per-repetition ratios newtricks/torchvision (CPU-time): ${tv_ratios[*]} -> median (min, max) $(printf '%s\n' "${tv_ratios[@]}" | grep -v n/a | sed 's/^/REP x=/' | mmm x)"
  echo "image ratios of medians (CPU-time): vs pillow-simd=$(ratio "${cpu[newtricks]:-n/a}" "${cpu[pillowsimd]}") vs simplejpeg+opencv=$(ratio "${cpu[newtricks]:-n/a}" "${cpu[opencv]}") vs torchvision=$(ratio "${cpu[newtricks]:-n/a}" "${cpu[torchvision]}")"
  grep -h INFO /tmp/bench-xform-*.err 2>/dev/null | sort -u | sed "s/^/  /"
  # The plot: images per CPU-second of every contender, repetition by repetition.
  series=""
  for name in newtricks pillowsimd opencv torchvision; do
    ys=$(echo "${reps_out[$name]:-}" | grep '^REP' | sed -n 's/.*cpu_ips=\([0-9.]*\).*/\1/p' | paste -sd, -)
    [ -n "$ys" ] || continue
    xs=$(seq -s, 1 "$(echo "$ys" | tr ',' '\n' | wc -l)")
    series+="${series:+,}{\"name\": \"$name\", \"x\": [$xs], \"y\": [$ys]}"
  done
  mkdir -p "$(dirname "$plot_image")"
  echo "{\"title\": \"JPEG -> random_resized_crop 224 -> flip -> normalize, one thread: images per CPU-second, repetition by repetition\", \"xlabel\": \"repetition (contenders interleaved within each)\", \"integer_x\": true, \"ylabel\": \"images per CPU-second\", \"series\": [$series]}" |
    (cd "$root" && go run ./bench/internal/plot/cmd/plotjson -png "$plot_image") || failed="image plot"
else
  echo "image media missing ($img): run make xform-media"
fi

video_vs_decord=n/a
video_vs_torchcodec=n/a
video_vs_floor=n/a
decode_vs_ffmpeg=n/a
if [[ " $PARTS " != *" video "* ]]; then
  echo "== video: skipped (PARTS=$PARTS)"
elif [ -f "$here/video.sh" ]; then
  echo "== video: bench/xform/video.sh"
  vout=$(XFORM_MEDIA=$media BENCH_VENV=$bench_venv CORE=$CORE bash "$here/video.sh" 2>&1) || failed="${failed:+$failed, }video.sh (exit $?)"
  echo "$vout" | sed 's/^/  /'
  res=$(echo "$vout" | grep '^RESULT' | tail -1)
  v=$(echo "$res" | sed -n 's/.*video_vs_decord=\([^ ]*\).*/\1/p')
  tc=$(echo "$res" | sed -n 's/.*video_vs_torchcodec=\([^ ]*\).*/\1/p')
  [ -n "$tc" ] && video_vs_torchcodec=$tc
  d=$(echo "$res" | sed -n 's/.*decode_vs_ffmpeg=\([^ ]*\).*/\1/p')
  f=$(echo "$res" | sed -n 's/.*video_vs_floor=\([^ ]*\).*/\1/p')
  [ -n "$v" ] && video_vs_decord=$v
  [ -n "$f" ] && video_vs_floor=$f
  [ -n "$d" ] && decode_vs_ffmpeg=$d
else
  echo "== video: bench/xform/video.sh absent"
fi
[ -n "${vout:-}" ] && echo "$vout" | grep -E "^(BOUND|PIXELS)"
echo "BENCH xform image_vs_pillowsimd=$image_ratio image_vs_torchvision=$image_vs_torchvision video_vs_decord=$video_vs_decord video_vs_torchcodec=$video_vs_torchcodec video_vs_floor=$video_vs_floor decode_vs_ffmpeg=$decode_vs_ffmpeg"
# A contender or reference that did not run is a failed benchmark, not a quiet n/a.
for v in $([[ " $PARTS " == *" image "* ]] && echo "$image_ratio $image_vs_torchvision") \
  $([[ " $PARTS " == *" video "* ]] && echo "$video_vs_decord $video_vs_torchcodec $video_vs_floor $decode_vs_ffmpeg"); do
  [ "$v" = n/a ] && { echo "bench-xform: a contender or reference is missing (n/a above)" >&2; exit 1; }
done
[ -z "$failed" ] || { echo "bench-xform: failed: $failed" >&2; exit 1; }
exit 0
