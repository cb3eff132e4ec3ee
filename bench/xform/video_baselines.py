"""Video baselines for bench/xform/video.sh: clips/s of 8 uniform frames -> 224x224 RGB ->
TCHW uint8 with decord, PyAV and TorchCodec, one thread each. Prints one JSON object.

TorchCodec is set up as its docs advise for this task: a VideoDecoder per clip on the CPU
with one FFmpeg thread, the resize given as a decoder transform (torchcodec.transforms.Resize,
applied during decoding), get_frames_at(indices) in the default exact seek mode, torch
limited to one thread. It loads the system's FFmpeg (5.1 here).

Frame choice is newtricks' uniform rule: floor((2k+1) * n / (2 * num)), k in [0, num).
"""
import argparse
import json
import resource
import statistics
import time

import numpy as np

decord = av = torch = torchcodec = None  # imported in main, before timing


def uniform(n, num):
    return [((2 * k + 1) * n) // (2 * num) for k in range(num)]


def decord_clip(path, num, size):
    vr = decord.VideoReader(path, width=size, height=size, num_threads=1)
    idx = uniform(len(vr), num)
    x = vr.get_batch(idx).asnumpy()  # T H W C
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def pyav_clip(path, num, size, nframes):
    with av.open(path) as c:
        st = c.streams.video[0]
        st.thread_type = "NONE"
        st.codec_context.thread_count = 1
        want = uniform(nframes, num)
        wanted, last = set(want), max(want)
        got = {}
        for i, fr in enumerate(c.decode(st)):
            if i in wanted:
                got[i] = fr.to_ndarray(width=size, height=size, format="rgb24")
            if i >= last:
                break
    x = np.stack([got[i] for i in want])
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def torchcodec_clip(path, num, size):
    from torchcodec.decoders import VideoDecoder
    from torchcodec.transforms import Resize

    dec = VideoDecoder(path, num_ffmpeg_threads=1, device="cpu", transforms=[Resize(size=(size, size))])
    idx = uniform(dec.metadata.num_frames, num)
    x = dec.get_frames_at(indices=idx).data  # N C H W uint8
    return x.contiguous().numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clip", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--clips", type=int, default=2)
    ap.add_argument("--num", type=int, default=8)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--lib", choices=["decord", "pyav", "torchcodec"], required=True)
    ap.add_argument("--frames", type=int, default=0, help="frame count (PyAV has no index)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed clips first")
    ap.add_argument("--dump", default="", help="write the last clip's TCHW uint8 array to this file")
    a = ap.parse_args()
    # Imports and a warm-up clip stay out of the timed region, as for newtricks.
    global decord, av, torch, torchcodec
    if a.lib == "decord":
        import decord
        clip = lambda: decord_clip(a.clip, a.num, a.size)
    elif a.lib == "torchcodec":
        import torch
        import torchcodec
        import torchcodec.decoders
        torch.set_num_threads(1)
        clip = lambda: torchcodec_clip(a.clip, a.num, a.size)
    else:
        import av
        clip = lambda: pyav_clip(a.clip, a.num, a.size, a.frames)
    for _ in range(a.warmup):
        clip()
    rates, cpu_rates = [], []
    shape = None
    cpu = lambda: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(resource.RUSAGE_SELF))
    for _ in range(a.runs):
        t, c = time.perf_counter(), cpu()
        for _ in range(a.clips):
            x = clip()
            shape = list(x.shape)
        rates.append(a.clips / (time.perf_counter() - t))
        cpu_rates.append(a.clips / (cpu() - c))
    if a.dump:
        open(a.dump, "wb").write(np.ascontiguousarray(x).tobytes())
    print(json.dumps({"lib": a.lib, "clips_per_s": statistics.median(rates), "samples": rates,
                      "cpu_rate": statistics.median(cpu_rates), "shape": shape}))


if __name__ == "__main__":
    main()
