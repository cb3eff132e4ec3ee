#!/usr/bin/env bash
# Video transform benchmark, one thread each, same input, one run:
#  (a) 720p H.264 (GOP 250, B-frames, 10 s) -> 8 uniform frames -> 224x224 -> TCHW uint8:
#      clips/s for newtricks (decode_video -> to_tensor graph) vs decord, PyAV and TorchCodec
#      (VideoDecoder with a Resize decoder transform, see video_baselines.py);
#  (b) sequential 720p decode fps: newtricks vs `ffmpeg -threads 1 -i clip -f null -`;
#  (c) the floor of (a): `ffmpeg -threads 1 -skip_frame noref -i clip -f null -`, the
#      reference frames alone (no exact sampler decodes less), CPU time per clip.
# Imports and one warm-up clip stay outside every timed region (Python and Go alike).
# Every tool runs pinned to one core (taskset), GOMAXPROCS=1, decoder threads 1; the runs
# are interleaved so that load from other processes hits all tools alike, and medians are
# compared. As in run.sh, the headline rates are per CPU-second of the process (user+sys,
# all threads: robust to other load on a shared machine); wall-clock rates and ratios are
# printed too; every figure is the median with (min, max) of the runs. Prints the detail,
# then `RESULT video_vs_decord=<x> video_vs_torchcodec=<x> video_vs_floor=<x> decode_vs_ffmpeg=<x>`
# (vs decord, TorchCodec and ffmpeg: > 1 means newtricks is faster; vs floor: newtricks' CPU time per clip over the
# reference-frames-only decode's, target <= 1.15). A line `BOUND video decord_vs_floor=<x>`
# before it is decord's CPU time per clip over the floor's: what video_vs_decord comes to
# with newtricks at the floor.
# Env: XFORM_MEDIA or NEWTRICKS_XFORM_MEDIA (clip dir parent), BENCH_VENV, RUNS (default 7),
# CLIPS per run (default 2), CORE or BENCH_CPU (default 1), PLOT_VIDEO (the plot of (a) run by
# run, default $NEWTRICKS_CACHE/bench-xform-video.png).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
media=${XFORM_MEDIA:-${NEWTRICKS_XFORM_MEDIA:-$root/xformgraph/testdata/media}}
venv=${BENCH_VENV:-${NEWTRICKS_CACHE:-$HOME/.cache/newtricks}/venv-bench}
runs=${RUNS:-7}
clips=${CLIPS:-2}
cpu=${CORE:-${BENCH_CPU:-1}}
plot=${PLOT_VIDEO:-${NEWTRICKS_CACHE:-$HOME/.cache/newtricks}/bench-xform-video.png}
pin="taskset -c $cpu"
export OMP_NUM_THREADS=1 GOMAXPROCS=1

clip=$media/video/bench_720p.mp4
if [[ ! -s $clip ]]; then
	echo "generating $clip (720p H.264, 10 s, GOP 250, 3 B-frames)" >&2
	mkdir -p "$(dirname "$clip")"
	ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi \
		-i "testsrc2=size=1280x720:rate=30:duration=10,noise=alls=12:allf=t+u" \
		-c:v libx264 -preset fast -crf 23 -bf 3 -g 250 -keyint_min 250 -sc_threshold 0 \
		-pix_fmt yuv420p "$clip.tmp.mp4"
	mv "$clip.tmp.mp4" "$clip"
fi

if ! "$venv/bin/python" -c 'import decord, av, numpy' 2>/dev/null; then
	[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
	"$venv/bin/pip" install -q decord av numpy
fi
py=$venv/bin/python
# TorchCodec needs torch (several GB with its CUDA libraries): make bench-xform-env installs
# it; without it the benchmark fails rather than leave the contender out.
if ! "$py" -c 'import torch, torchcodec.decoders' 2>/dev/null; then
	echo "video.sh: TorchCodec not importable by $py: run make bench-xform-env" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/videobench" ./bench/xform/videobench)

frames=$($pin "$tmp/videobench" -clip "$clip" -mode decode -runs 1 | "$py" -c 'import json,sys; print(json.load(sys.stdin)["frames"])')
echo "clip: $clip ($(stat -c %s "$clip") bytes, $frames frames, $(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height,pix_fmt -of csv=p=0 "$clip"))"
echo "versions: $($py -c 'import decord, av, torch, torchcodec; print("decord", decord.__version__, "PyAV", av.__version__, "TorchCodec", torchcodec.__version__, "torch", torch.__version__)' 2>/dev/null), $(ffmpeg -version | head -1 | cut -d' ' -f1-3), $(go version | cut -d' ' -f3)"
echo "runs: $runs interleaved, $clips clip(s) per run, pinned to CPU $cpu"

for r in $(seq "$runs"); do
	$pin "$tmp/videobench" -clip "$clip" -mode clips -runs 1 -clips "$clips" >>"$tmp/nt_clips"
	$pin "$py" "$root/bench/xform/video_baselines.py" --clip "$clip" --lib decord --runs 1 --clips "$clips" >>"$tmp/decord"
	$pin "$py" "$root/bench/xform/video_baselines.py" --clip "$clip" --lib pyav --runs 1 --clips "$clips" --frames "$frames" >>"$tmp/pyav"
	$pin "$py" "$root/bench/xform/video_baselines.py" --clip "$clip" --lib torchcodec --runs 1 --clips "$clips" 2>>"$tmp/torchcodec.err" >>"$tmp/torchcodec"
	$pin "$tmp/videobench" -clip "$clip" -mode clips-separate -runs 1 -clips "$clips" >>"$tmp/nt_sep"
	$pin "$tmp/videobench" -clip "$clip" -mode decode -runs 1 >>"$tmp/nt_decode"
	$pin ffmpeg -hide_banner -nostdin -benchmark -threads 1 -i "$clip" -f null - 2>&1 |
		sed -n 's/.*utime=\([0-9.]*\)s stime=\([0-9.]*\)s rtime=\([0-9.]*\)s.*/\3 \1 \2/p' >>"$tmp/ffmpeg_rtime"
	$pin ffmpeg -hide_banner -nostdin -benchmark -threads 1 -skip_frame noref -i "$clip" -f null - 2>&1 |
		sed -n 's/.*utime=\([0-9.]*\)s stime=\([0-9.]*\)s rtime=\([0-9.]*\)s.*/\3 \1 \2/p' >>"$tmp/ffmpeg_noref"
done

# Pixels: the contenders' 224x224 frames of one clip against newtricks' (PSNR; identical
# frames print inf). One untimed clip each, after the timed runs.
$pin "$tmp/videobench" -clip "$clip" -mode clips -runs 1 -clips 1 -dump "$tmp/px_newtricks" >/dev/null
for lib in decord pyav torchcodec; do
	$pin "$py" "$root/bench/xform/video_baselines.py" --clip "$clip" --lib $lib --runs 1 --clips 1 --warmup 0 \
		--frames "$frames" --dump "$tmp/px_$lib" >/dev/null 2>>"$tmp/torchcodec.err"
done
"$py" - "$tmp" <<'PY'
import os, sys
import numpy as np
d = sys.argv[1]
ref = np.fromfile(os.path.join(d, "px_newtricks"), np.uint8).astype(np.float64)
out = []
for lib in ("decord", "pyav", "torchcodec"):
    x = np.fromfile(os.path.join(d, "px_" + lib), np.uint8).astype(np.float64)
    if x.shape != ref.shape:
        out.append("%s=size-mismatch" % lib)
        continue
    mse = ((x - ref) ** 2).mean()
    out.append("%s=%s" % (lib, "inf" if mse == 0 else "%.1f" % (10 * np.log10(255 ** 2 / mse))))
print("PIXELS video 8 frames 224x224, PSNR dB against newtricks: " + " ".join(out))
PY

"$py" - "$tmp" "$frames" <<'PY'
import json, statistics, sys, os
d, frames = sys.argv[1], int(sys.argv[2])
def rates(name, key):
    return [json.loads(l)[key] for l in open(os.path.join(d, name)) if l.strip()]
def med(v): return statistics.median(v)
def mm(v): return "%.3f (%.3f, %.3f)" % (med(v), min(v), max(v))
nt = rates("nt_clips", "clips_per_s")
dec = rates("decord", "clips_per_s")
pyav = rates("pyav", "clips_per_s")
tc = rates("torchcodec", "clips_per_s")
sep = rates("nt_sep", "clips_per_s")
ntd = rates("nt_decode", "fps")
times = lambda name: [[float(x) for x in l.split()] for l in open(os.path.join(d, name)) if l.strip()]
ffl, flo = times("ffmpeg_rtime"), times("ffmpeg_noref")
ff = [frames / v[0] for v in ffl]
ffcpu = [frames / (v[1] + v[2]) for v in ffl]
floor_cpu = [v[1] + v[2] for v in flo]  # CPU seconds to decode the reference frames
cpu = lambda name: [json.loads(l)["cpu_rate"] for l in open(os.path.join(d, name)) if l.strip()]
c_nt, c_dec, c_pyav, c_sep, c_ntd = cpu("nt_clips"), cpu("decord"), cpu("pyav"), cpu("nt_sep"), cpu("nt_decode")
c_tc = cpu("torchcodec")
# Per-run ratios (the tools of one run ran back to back, so they saw the same load).
r_dec = [a / b for a, b in zip(c_nt, c_dec)]
r_tc = [a / b for a, b in zip(c_nt, c_tc)]
r_floor = [(1 / a) / b for a, b in zip(c_nt, floor_cpu)]
r_ff = [a / b for a, b in zip(c_ntd, ffcpu)]
print("(a) 8 uniform frames -> 224x224 -> TCHW uint8: clips per CPU-second, median (min, max); wall clips/s median")
print("  newtricks decode_video(uniform 8, 224x224, swscale) -> to_tensor: %s; wall %.3f" % (mm(c_nt), med(nt)))
print("  newtricks decode_video(uniform 8) -> resize [224,224] (Go) -> to_tensor: %s; wall %.3f" % (mm(c_sep), med(sep)))
print("  decord VideoReader(width=224, height=224, num_threads=1).get_batch: %s; wall %.3f" % (mm(c_dec), med(dec)))
print("  PyAV decode to the last wanted frame, to_ndarray(224x224): %s; wall %.3f" % (mm(c_pyav), med(pyav)))
print("  TorchCodec VideoDecoder(num_ffmpeg_threads=1, transforms=[Resize(224, 224)]).get_frames_at: %s; wall %.3f" % (mm(c_tc), med(tc)))
print("  newtricks/decord per run: %s; ratio of medians %.2f (wall %.2f); newtricks/PyAV %.2f" % (
    mm(r_dec), med(c_nt) / med(c_dec), med(nt) / med(dec), med(c_nt) / med(c_pyav)))
print("  newtricks/TorchCodec per run: %s; ratio of medians %.2f (wall %.2f)" % (mm(r_tc), med(c_nt) / med(c_tc), med(nt) / med(tc)))
print("(b) sequential decode of %d frames: frames per CPU-second, median (min, max); wall fps median" % frames)
print("  newtricks open+index+DecodeAll: %s; wall %.1f" % (mm(c_ntd), med(ntd)))
print("  ffmpeg -threads 1 -f null (-benchmark utime+stime / rtime): %s; wall %.1f" % (mm(ffcpu), med(ff)))
print("  newtricks/ffmpeg per run: %s" % mm(r_ff))
print("(c) floor: ffmpeg -threads 1 -skip_frame noref -f null, CPU seconds: %s" % mm(floor_cpu))
print("  newtricks CPU seconds per clip: %s" % mm([1 / c for c in c_nt]))
print("  newtricks/floor per run: %s" % mm(r_floor))
# The bound on video_vs_decord: a sampler that must reproduce every sampled frame exactly
# decodes at least the reference frames in front of them, so with newtricks at the floor
# video_vs_decord is decord's time over the floor's (same runs, per-run ratios).
r_bound = [(1 / a) / b for a, b in zip(c_dec, floor_cpu)]
print("(d) bound: decord CPU seconds per clip / floor CPU seconds, per run: %s" % mm(r_bound))
print("BOUND video decord_vs_floor=%.2f (video_vs_decord = decord_vs_floor / video_vs_floor)" % med(r_bound))
print("RESULT video_vs_decord=%.2f video_vs_torchcodec=%.2f video_vs_floor=%.2f decode_vs_ffmpeg=%.2f" % (med(r_dec), med(r_tc), med(r_floor), med(r_ff)))
# The plot: (a)'s clips per CPU-second run by run, every contender (bench/internal/plot).
runs = list(range(1, len(c_nt) + 1))
series = [("newtricks", c_nt), ("newtricks, Go resize", c_sep), ("decord", c_dec), ("PyAV", c_pyav), ("TorchCodec", c_tc)]
json.dump({"title": "8 uniform frames of a 720p H.264 clip -> 224x224, one thread: clips per CPU-second, run by run",
           "xlabel": "run (contenders interleaved within each)", "ylabel": "clips per CPU-second", "integer_x": True,
           "series": [{"name": n, "x": runs[:len(v)], "y": v} for n, v in series]},
          open(os.path.join(d, "plot.json"), "w"))
PY
mkdir -p "$(dirname "$plot")"
(cd "$root" && go run ./bench/internal/plot/cmd/plotjson -png "$plot" <"$tmp/plot.json")
