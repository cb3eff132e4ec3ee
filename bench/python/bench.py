#!/usr/bin/env python3
"""bench-python: a Python training loop reading a mixed image/video dataset from a real
cluster (a) the way a strong engineer writes it with PyTorch today, and (b) through
newtricks.Reader with offload.

The trainer (this process: the training loop and, for (a), its DataLoader worker processes) is
pinned to CPU 0 and runs a synthetic model step (a numpy compute loop of fixed length on the
main thread). The NameNode, the DataNodes and their datanode-ext co-processes are pinned to
CPU 1.

(a) baseline: a torch.utils.data.DataLoader (fork workers on the trainer's core, batches of
    torch tensors in shared memory), swept over --workers (default 1, 2, 4) in every round; the
    worker count with the lowest median mean stall over the rounds is the baseline. Each worker
    reads a sample's bytes on persistent connections with hdfs-native (--reader native, the
    default: HDFS's own protocols, no JVM; it keeps its NameNode and DataNode connections
    open), or (--reader webhdfs; auto takes the lower wall time per read of the two, both
    timed on CPU 0 and printed in every run after the cluster is up) WebHDFS
    with one keep-alive connection to the NameNode, the NameNode's redirect cached per file (a
    later read of the file goes straight to the DataNode URL, which WebHDFS allows on an
    insecure cluster: it carries no token), and one connection per DataNode reused as long as
    the DataNode keeps it open (a DataNode answers OPEN with "Connection: close", so it is
    reopened after each read there). The run prints the connections each run used.
    Images: Pillow + numpy (decode, random resized crop to 224, flip, normalize, float32 CHW).
    Clips: 8 frames sampled uniformly (the same indices as newtricks's uniform mode), decoded
    as the decoders' docs advise for sparse frames, resized to 112x112 in the conversion,
    float32 TCHW: PyAV seeking to the keyframe before a wanted frame only when the frames
    decoded so far do not already lead to it (container.seek(pts, backward=True,
    any_frame=False, stream=...)), decoding forward and converting only the wanted frames
    (frame.to_ndarray(width, height, format="rgb24"), one swscale pass), one decoder thread;
    or decord's VideoReader.get_batch (num_threads=1). The faster of the two on the bench's
    clips, timed on CPU 0 before the rounds (--video-decoder auto), is the one the baseline
    uses.
(b) newtricks: the same sample mix and transforms as xformgraph graphs in a schedule; the
    DataNodes transform, the trainer receives tensors (newtricks.Reader, whose own threads
    run on the trainer's core too).

Measured per step after a warm-up: the stall, the wall time of the step (waiting for the batch,
then the model step) minus the model step's own CPU time, i.e. the time the loop lost to data
loading, whether it blocked in next() or its model step was slowed by loader work competing
for the core; the wait (time blocked in next()) alone; and the trainer's CPU spent on loading
(the trainer process's CPU minus the model thread's, plus, for (a), the CPU each DataLoader
worker spent on the batches of the measured steps, counted per batch in the worker, so that
batches prefetched during the warm-up do not hide their cost). Rounds alternate
the order of (a) and (b); figures are medians with (min, max).
The machine may be shared with other work: CPU time is robust to that, wall-clock waits less so.
Last line: BENCH python stall_reduction=<x> trainer_cpu_reduction=<x> baseline_workers=<n>
baseline_reader=<native|webhdfs> video_decoder=<pyav|decord> commit=<short> dirty=<bool>
load_start=<1/5/15> load_end=<1/5/15>
(1 - newtricks/baseline, for the mean stall per step and the loading CPU per step, median of
the rounds, against the best worker count).
"""

import argparse
import http.client
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import numpy as np

MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)

IMAGE_GRAPH = {"version": 1, "name": "img", "seed": "5", "nodes": [
    {"id": "dec", "op": "decode_image", "input": "input"},
    {"id": "rrc", "op": "random_resized_crop", "input": "dec", "params": {"size": [224]}},
    {"id": "flip", "op": "random_hflip", "input": "rrc"},
    {"id": "norm", "op": "normalize", "input": "flip", "params": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}},
    {"id": "t", "op": "to_tensor", "input": "norm", "params": {"layout": "CHW", "dtype": "float32"}}], "outputs": ["t"]}
VIDEO_GRAPH = {"version": 1, "name": "vid", "seed": "5", "nodes": [
    {"id": "dec", "op": "decode_video", "input": "input", "params": {"mode": "uniform", "num": 8, "width": 112, "height": 112}},
    {"id": "t", "op": "to_tensor", "input": "dec", "params": {"layout": "TCHW", "dtype": "float32"}}], "outputs": ["t"]}


# ---- cluster ---------------------------------------------------------------------------------

class WebHDFS:
    def __init__(self, port):
        self.port = port

    def _do(self, method, path, user, body=None, **q):
        q.update({"user.name": user})
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        c.request(method, "/webhdfs/v1%s?%s" % (urllib.parse.quote(path), urllib.parse.urlencode(q)))
        r = c.getresponse()
        b = r.read()
        if r.status == 307:
            u = urllib.parse.urlsplit(r.getheader("Location"))
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
            c.request(method, u.path + "?" + u.query, body=body)
            r = c.getresponse()
            b = r.read()
        if r.status >= 300:
            raise RuntimeError("webhdfs %s %s: HTTP %d %s" % (q.get("op"), path, r.status, b[:200]))
        return b

    def put(self, path, user, data):
        self._do("PUT", path, user, body=data, op="CREATE", overwrite="true")

    def get(self, path, user):
        return self._do("GET", path, user, op="OPEN")


def pin_tree(pid, cpu):
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=True, stdout=subprocess.DEVNULL)
    for child in subprocess.run(["pgrep", "-P", str(pid)], stdout=subprocess.PIPE, text=True).stdout.split():
        pin_tree(int(child), cpu)


# ---- (a) baseline loader -----------------------------------------------------------------------

class Conn(http.client.HTTPConnection):
    """An HTTPConnection that counts the TCP connections it opens (http.client reopens a
    connection by itself when the server closed it)."""

    def __init__(self, host, port, counts, key):
        super().__init__(host, port, timeout=120)
        self.counts, self.key = counts, key

    def connect(self):
        self.counts[self.key] += 1
        super().connect()


class KeepAliveWebHDFS:
    """WebHDFS reads on persistent connections: one to the NameNode, one per DataNode, and the
    NameNode's redirect (the DataNode URL with namenoderpcaddress and offset) cached per file,
    so a file read again goes straight to a DataNode. offset/length ask for a byte range."""

    def __init__(self, port, user):
        self.user = user
        self.counts = {"nn_connects": 0, "dn_connects": 0, "nn_requests": 0, "reads": 0}
        self.nn = Conn("127.0.0.1", port, self.counts, "nn_connects")
        self.dns = {}
        self.located = {}

    def _dn(self, host, port):
        c = self.dns.get((host, port))
        if c is None:
            c = self.dns[(host, port)] = Conn(host, port, self.counts, "dn_connects")
        return c

    def read(self, path, offset=0, length=None):
        q = {"op": "OPEN", "user.name": self.user, "offset": offset}
        if length is not None:
            q["length"] = length
        loc = self.located.get(path)
        if loc is None:
            self.counts["nn_requests"] += 1
            self.nn.request("GET", "/webhdfs/v1%s?%s" % (urllib.parse.quote(path), urllib.parse.urlencode(q)))
            r = self.nn.getresponse()
            b = r.read()
            if r.status != 307:
                raise RuntimeError("webhdfs OPEN %s: HTTP %d %s" % (path, r.status, b[:200]))
            u = urllib.parse.urlsplit(r.getheader("Location"))
            dq = [(k, v) for k, v in urllib.parse.parse_qsl(u.query) if k not in ("offset", "length")]
            loc = self.located[path] = (u.hostname, u.port, u.path, dq)
        host, port, upath, dq = loc
        c = self._dn(host, port)
        c.request("GET", upath + "?" + urllib.parse.urlencode(dq + [(k, q[k]) for k in ("offset", "length") if k in q]))
        r = c.getresponse()
        b = r.read()
        if r.status != 200:
            raise RuntimeError("webhdfs OPEN %s at a DataNode: HTTP %d %s" % (path, r.status, b[:200]))
        self.counts["reads"] += 1
        return b


class NativeHDFS:
    """Reads over HDFS's own RPC and data transfer protocols with hdfs-native (a Rust client,
    no JVM), which keeps its NameNode and DataNode connections open across reads."""

    def __init__(self, namenode):
        from hdfs_native import Client

        self.client = Client("hdfs://" + namenode)
        self.counts = {"nn_requests": 0, "reads": 0, "tcp_seen": 0}
        self.seen = set()

    def read(self, path):
        with self.client.read(path) as r:
            b = r.read()
        self.counts["reads"] += 1
        self.counts["nn_requests"] += 1  # a getBlockLocations per open
        return b

    def note_sockets(self):
        """Adds the TCP sockets this process holds now to the set seen (sampled once a batch)."""
        self.seen |= tcp_sockets()
        self.counts["tcp_seen"] = len(self.seen)


def tcp_sockets():
    """Inodes of the TCP sockets this process holds."""
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            t = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if t.startswith("socket:["):
            fds.add(t[8:-1])
    tcp = set()
    for f in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            for line in open(f).read().splitlines()[1:]:
                tcp.add(line.split()[9])
        except OSError:
            pass
    return fds & tcp


READERS = {"webhdfs": lambda c: KeepAliveWebHDFS(c["http"], c["user"]), "native": lambda c: NativeHDFS(c["namenode"])}


def load_image(b, rng):
    from PIL import Image

    im = Image.open(io.BytesIO(b)).convert("RGB")
    w, h = im.size
    area = w * h
    for _ in range(10):  # torchvision's RandomResizedCrop
        ta = area * rng.uniform(0.08, 1.0)
        ar = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
        cw, ch = int(round((ta * ar) ** 0.5)), int(round((ta / ar) ** 0.5))
        if 0 < cw <= w and 0 < ch <= h:
            x, y = rng.integers(0, w - cw + 1), rng.integers(0, h - ch + 1)
            break
    else:
        cw, ch, x, y = min(w, h), min(w, h), (w - min(w, h)) // 2, (h - min(w, h)) // 2
    im = im.resize((224, 224), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    a = np.asarray(im, dtype=np.float32).transpose(2, 0, 1) / 255.0
    return (a - MEAN) / STD


def uniform_indices(n, num=8):
    """newtricks's (and decord-style) uniform sampling: the middle of num equal segments."""
    return [(2 * k + 1) * n // (2 * num) for k in range(num)]


def decode_pyav(b, size=112, num=8):
    """num frames sampled uniformly, RGB at size x size, uint8 (num, size, size, 3).

    The packets are demuxed once (no decoding) for the frames' timestamps and keyframes; then
    for each wanted frame: seek to the keyframe before it unless the frames decoded so far
    already lead to it, decode forward, and convert only the wanted frame (resize and RGB in
    one swscale call)."""
    import av

    with av.open(io.BytesIO(b)) as c:
        vs = c.streams.video[0]
        vs.thread_type = "AUTO"
        vs.codec_context.thread_count = 1  # the trainer's one core
        pts, keys = [], []
        for pkt in c.demux(vs):
            if pkt.pts is not None:
                pts.append(pkt.pts)
                if pkt.is_keyframe:
                    keys.append(pkt.pts)
        pts.sort()
        keys.sort()
        out, last, frames = [], None, None
        for t in (pts[i] for i in uniform_indices(len(pts), num)):
            if last is not None and t <= last:  # fewer frames than wanted: repeat
                out.append(out[-1])
                continue
            key = max((k for k in keys if k <= t), default=keys[0])
            if frames is None or key > last:
                c.seek(key, backward=True, any_frame=False, stream=vs)
                frames = c.decode(vs)
            for f in frames:
                if f.pts is None:
                    continue
                last = f.pts
                if f.pts >= t:
                    out.append(f.to_ndarray(width=size, height=size, format="rgb24", interpolation="BILINEAR"))
                    break
            else:
                out.append(out[-1])
        return np.stack(out)


def decode_decord(b, size=112, num=8):
    """decord's sparse access as its docs advise: VideoReader + get_batch of the wanted indices,
    resized by the reader, one decoder thread."""
    import decord

    vr = decord.VideoReader(io.BytesIO(b), ctx=decord.cpu(0), width=size, height=size, num_threads=1)
    return vr.get_batch(uniform_indices(len(vr), num)).asnumpy()


DECODERS = {"pyav": decode_pyav, "decord": decode_decord}


class Samples:
    """The plan's samples in order as a map-style torch Dataset: item i is sample i % batch of
    step i // batch, a float32 CHW image tensor or a float32 TCHW clip tensor."""

    def __init__(self, cluster, plan, reader, decoder):
        self.cluster, self.reader, self.decoder = cluster, reader, decoder
        self.items = [(s, k, p) for s, paths in enumerate(plan) for k, p in enumerate(paths)]
        self.fs = None

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        import torch

        if self.fs is None:  # one client per worker process, made after the fork
            self.fs = READERS[self.reader](self.cluster)
        step, k, path = self.items[i]
        b = self.fs.read(path)
        if path.endswith(".mp4"):
            x = torch.from_numpy(DECODERS[self.decoder](b)).permute(0, 3, 1, 2).float().div_(255.0)
        else:
            x = torch.from_numpy(load_image(b, np.random.default_rng((step, k))))
        if k == 0 and hasattr(self.fs, "note_sockets"):
            self.fs.note_sockets()
        return x, dict(self.fs.counts)


_worker_cpu = [0.0]  # this worker process's CPU time when it finished its previous batch


def worker_init(_):
    _worker_cpu[0] = time.process_time()


def collate(batch):
    """Images and clips stacked apart (default_collate puts them in shared memory in a
    worker), with the worker's id, its connection counters and the CPU the worker spent since
    its previous batch (this batch's reads, decoding, collation, and sending the previous
    one), so a batch's loading CPU is counted with the step that consumes it however far
    ahead the DataLoader prefetched it."""
    import torch
    from torch.utils.data import default_collate, get_worker_info

    xs = [x for x, _ in batch]
    imgs = default_collate([x for x in xs if x.dim() == 3])
    vids = [x for x in xs if x.dim() == 4]
    vids = default_collate(vids) if vids else torch.empty(0)
    wi = get_worker_info()
    now = time.process_time()
    cpu, _worker_cpu[0] = now - _worker_cpu[0], now
    return imgs, vids, (wi.id if wi else 0, batch[-1][1], cpu)


def time_decoder(o):
    """--time-decoder NAME: seconds per clip of NAME on this process's core (median of passes
    over the bench's clips), printed as one number; run in its own process by --video-decoder
    auto so that PyAV's and decord's FFmpeg builds never share one."""
    clips = [open(os.path.join(o.media, "video", v), "rb").read() for v in VIDEOS]
    fn = DECODERS[o.time_decoder]
    for b in clips:
        assert fn(b).shape == (8, 112, 112, 3)
    per = []
    for _ in range(o.decoder_passes):
        t0 = time.process_time()
        for b in clips:
            fn(b)
        per.append((time.process_time() - t0) / len(clips))
    print("%.6f" % statistics.median(per))


def pick_decoder(o):
    if o.video_decoder != "auto":
        return o.video_decoder, {}
    times = {}
    for name in DECODERS:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--cli", o.cli, "--jar", o.jar, "--media", o.media,
                            "--time-decoder", name, "--decoder-passes", str(o.decoder_passes)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode == 0:
            times[name] = float(r.stdout.split()[-1])
        else:
            print("video decoder %s unavailable: %s" % (name, r.stderr.strip().splitlines()[-1:]))
    if not times:
        sys.exit("no video decoder works")
    return min(times, key=times.get), times


def model_step(seconds, a):
    """A fixed amount of compute on this thread: numpy matmuls until `seconds` of thread CPU."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        a = np.tanh(a @ a.T * 1e-3)
    return a


def time_reader(o):
    """--time-reader NAME: CPU and wall milliseconds per read of NAME on this core, reading the
    bench's files (--paths) in passes after one warm pass; printed as two numbers."""
    c = json.loads(o.cluster_json)
    paths = o.paths.split(",")
    fs = READERS[o.time_reader](c)
    for p in paths:
        fs.read(p)
    t0, c0 = time.monotonic(), time.process_time()
    for _ in range(o.decoder_passes):
        for p in paths:
            fs.read(p)
    n = o.decoder_passes * len(paths)
    print("%.6f %.6f" % ((time.process_time() - c0) / n, (time.monotonic() - t0) / n))


def pick_reader(o, c, paths):
    """Times both clients (CPU, wall per read) and returns --reader's, or with auto the one
    with the lower wall time per read (their CPU per read on the trainer's core is within a
    fraction of a millisecond of each other; their latency is what a worker waits on)."""
    times = {}
    for name in READERS:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--cli", o.cli, "--jar", o.jar, "--media", o.media,
                            "--time-reader", name, "--cluster-json", json.dumps(c), "--paths", ",".join(paths),
                            "--decoder-passes", str(o.decoder_passes)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode == 0:
            times[name] = tuple(float(x) for x in r.stdout.split()[-2:])
        else:
            print("reader %s unavailable: %s" % (name, r.stderr.strip().splitlines()[-1:]))
    if o.reader != "auto":
        return o.reader, times
    if not times:
        sys.exit("no HDFS reader works")
    return min(times, key=lambda k: times[k][1]), times


def run_baseline(o, cluster, plan, workers, reader, decoder):
    import warnings

    from torch.utils.data import DataLoader

    # The sweep runs more workers than the one core torch suggests, on purpose.
    warnings.filterwarnings("ignore", message="This DataLoader will create", category=UserWarning)
    dl = DataLoader(Samples(cluster, plan, reader, decoder), batch_size=o.batch, shuffle=False, num_workers=workers,
                    collate_fn=collate, worker_init_fn=worker_init, multiprocessing_context="fork", prefetch_factor=2)
    it = iter(dl)
    waits, lost, model_cpu, a = [], [], 0.0, np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32)
    counts, worker_cpu, proc0 = {}, 0.0, time.process_time()
    for s in range(len(plan)):
        t0 = time.monotonic()
        imgs, vids, (wid, cnt, bcpu) = next(it)
        w = time.monotonic() - t0
        if s == o.warmup:
            proc0, model_cpu = time.process_time(), 0.0
        t1 = time.thread_time()
        a = model_step(o.model, a)
        m = time.thread_time() - t1
        if s >= o.warmup:
            model_cpu += m
            worker_cpu += bcpu
            waits.append(w)
            lost.append(time.monotonic() - t0 - m)
        counts[wid] = cnt
        assert len(imgs) + len(vids) == o.batch
    load_cpu = worker_cpu + (time.process_time() - proc0 - model_cpu)
    del it
    total = {k: sum(c[k] for c in counts.values()) for k in next(iter(counts.values()))}
    return waits, lost, load_cpu / (len(plan) - o.warmup), total


def run_newtricks(o, c, schedule):
    import newtricks  # here, so the decoder timing processes never load libnewtricks's FFmpeg

    waits, lost, model_cpu, a = [], [], 0.0, np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32)
    paths = {}
    with newtricks.Reader(schedule, rank=0, namenode=c["namenode"], namenode_ext=c["ext"], datanodes=c["dns"],
                          user=c["user"], max_wait=10, prefetch=3) as r:
        proc0 = time.process_time()
        for s in range(o.steps):
            t0 = time.monotonic()
            st = next(r)
            w = time.monotonic() - t0
            if s == o.warmup:
                proc0, model_cpu = time.process_time(), 0.0
            assert not st.errors, st.errors
            t1 = time.thread_time()
            a = model_step(o.model, a)
            m = time.thread_time() - t1
            if s >= o.warmup:
                model_cpu += m
                waits.append(w)
                lost.append(time.monotonic() - t0 - m)
                for smp in st.samples:
                    paths[smp.path] = paths.get(smp.path, 0) + 1
        load_cpu = time.process_time() - proc0 - model_cpu
        stats = r.stats()
    return waits, lost, load_cpu / (o.steps - o.warmup), paths, stats


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]


def mmm(xs, fmt="%.1f"):
    return (fmt + " (" + fmt + ", " + fmt + ")") % (statistics.median(xs), min(xs), max(xs))


def provenance():
    """commit= dirty= as bench/internal/runinfo writes them (the load is read apart)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True).stdout.strip())
        return "commit=%s dirty=%s" % (commit, "true" if dirty else "false")
    except (OSError, subprocess.CalledProcessError):
        return "commit=unknown dirty=false"


def loadavg():
    try:
        return "/".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


IMAGES = ["photo_q90_420.jpg", "baseline_444.jpg", "progressive.jpg", "odd_333x251.jpg", "baseline_422.jpg"]
VIDEOS = ["h264_bframes.mp4", "mpeg4.mp4"]


def plot_stall(png, series):
    """Draws per-step stall (ms) of each (name, stalls) with the repository's plot tool
    (bench/internal/plot/cmd/plotjson), after every timed region; a failure fails the bench."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    chart = {"title": "per-step stall (step wall time minus the model step's CPU), last round",
             "xlabel": "step (after the warm-up)", "integer_x": True, "ylabel": "stall", "yunit": " ms",
             "series": [{"name": n, "x": list(range(1, len(v) + 1)), "y": [1e3 * x for x in v]} for n, v in series]}
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    subprocess.run(["go", "run", "./bench/internal/plot/cmd/plotjson", "-png", png], cwd=root,
                   input=json.dumps(chart).encode(), check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--jar", required=True)
    ap.add_argument("--media", required=True)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--model", type=float, default=0.1, help="model step, seconds of CPU")
    ap.add_argument("--workers", default="1,2,4", help="DataLoader worker counts swept in every round")
    ap.add_argument("--video-decoder", choices=["auto"] + sorted(DECODERS), default="auto",
                    help="the baseline's clip decoder; auto: the faster one on this core, timed first")
    ap.add_argument("--reader", choices=["auto"] + sorted(READERS), default="native",
                    help="the baseline's HDFS client (both are timed first; auto: the lower wall time per read)")
    ap.add_argument("--decoder-passes", type=int, default=7, help="passes of the decoder and reader timings")
    ap.add_argument("--quick", action="store_true", help="development: 1 round of 20 steps, warm-up 5")
    ap.add_argument("--png", default="bench-python-stall.png",
                    help="plot of the last round's per-step stall, best baseline and newtricks (empty: none)")
    ap.add_argument("--time-decoder", choices=sorted(DECODERS), help=argparse.SUPPRESS)
    ap.add_argument("--time-reader", choices=sorted(READERS), help=argparse.SUPPRESS)
    ap.add_argument("--cluster-json", help=argparse.SUPPRESS)
    ap.add_argument("--paths", help=argparse.SUPPRESS)
    o = ap.parse_args()
    os.sched_setaffinity(0, {0})
    if o.time_decoder:
        return time_decoder(o)
    if o.time_reader:
        return time_reader(o)
    if o.quick:
        o.rounds, o.steps, o.warmup, o.decoder_passes = 1, 20, 5, 3
    sweep = [int(x) for x in o.workers.split(",")]
    prov, load_start = provenance(), loadavg()
    user = os.environ.get("USER") or "root"
    decoder, dtimes = pick_decoder(o)
    print("baseline clip decoder: %s (%s per clip on CPU 0, median of %d passes over %s)" % (
        decoder, ", ".join("%s %.2f ms" % (k, 1e3 * v) for k, v in sorted(dtimes.items())) or "chosen by flag",
        o.decoder_passes, "/".join(VIDEOS)), flush=True)
    base = tempfile.mkdtemp(prefix="bench-python-")
    name = "bench-python-%d" % os.getpid()
    up = [o.cli, "cluster", "up", "--name", name, "--dir", base, "--datanodes", "3", "--jar", o.jar, "--timeout", "180s",
          "--conf", "newtricks.datanode.ext.offload.cpu.high=1", "--conf", "newtricks.datanode.ext.offload.cpu.low=1"]
    r = subprocess.run(up, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit("cluster up failed:\n" + r.stdout[-3000:])
    try:
        st = json.load(open(os.path.join(base, "state.json")))
        ext = json.load(open(os.path.join(base, "ext.json")))
        for d in [st["namenode"]] + st["datanodes"]:
            pin_tree(d["pid"], 1)
        port = st["namenode"]["namenode_ports"]["http"]
        c = {"namenode": "127.0.0.1:%d" % st["namenode"]["namenode_ports"]["rpc"], "ext": ext["NameNodeAPI"],
             "dns": ext["DataNodeAPI"], "user": user, "http": port}
        fs = WebHDFS(port)
        ipaths, vpaths = [], []
        for i in range(48):
            p = "/bench/img/i%03d.jpg" % i
            fs.put(p, user, open(os.path.join(o.media, "images", IMAGES[i % len(IMAGES)]), "rb").read())
            ipaths.append(p)
        for i in range(8):
            p = "/bench/vid/v%03d.mp4" % i
            fs.put(p, user, open(os.path.join(o.media, "video", VIDEOS[i % len(VIDEOS)]), "rb").read())
            vpaths.append(p)
        for d in ("/bench/img", "/bench/vid"):
            subprocess.run([o.cli, "dataset", "index", "--namenode", c["namenode"], "--user", user, d], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        reader, rtimes = pick_reader(o, c, ipaths + vpaths)
        print("baseline HDFS reads: %s (%s per read on CPU 0 over the bench's %d files)" % (
            reader, ", ".join("%s %.2f ms CPU %.2f ms wall" % (k, 1e3 * v[0], 1e3 * v[1]) for k, v in sorted(rtimes.items()))
            or "chosen by flag", len(ipaths) + len(vpaths)), flush=True)
        nvid = max(1, o.batch // 8)  # one clip in 8 samples
        schedule = {"version": 1, "name": "bench", "seed": "3", "globalBatch": o.batch, "worldSize": 1,
                    "maxSteps": str(o.steps + 1), "sources": [
                        {"name": "img", "dataset": "/bench/img", "weight": o.batch - nvid, "graph": IMAGE_GRAPH},
                        {"name": "vid", "dataset": "/bench/vid", "weight": nvid, "graph": VIDEO_GRAPH}]}
        rng = np.random.default_rng(1)
        plan = [[ipaths[j] for j in rng.integers(0, len(ipaths), o.batch - nvid)] +
                [vpaths[j] for j in rng.integers(0, len(vpaths), nvid)] for _ in range(o.steps)]
        print("cluster %s: 3 DataNodes + datanode-ext pinned to CPU 1; trainer on CPU 0; %d steps x %d samples "
              "(%d clip), warm-up %d, model step %.0f ms CPU, %d rounds; baseline DataLoader workers %s" % (
                  name, o.steps, o.batch, nvid, o.warmup, o.model * 1e3, o.rounds, o.workers))
        res = {"b": []}
        res.update({w: [] for w in sweep})
        last = {}  # the last round's per-step stall of each contender, for the plot
        for rnd in range(o.rounds):
            runs = sweep + ["b"] if rnd % 2 == 0 else ["b"] + sweep[::-1]
            for which in runs:
                if which == "b":
                    waits, lost, cpu, paths, stats = run_newtricks(o, c, schedule)
                    label, extra = "newtricks", " paths %s" % paths
                else:
                    waits, lost, cpu, cn = run_baseline(o, c, plan, which, reader, decoder)
                    label = "DataLoader(num_workers=%d)" % which
                    if reader == "webhdfs":
                        conns = "TCP connections opened %d NameNode + %d DataNode" % (cn["nn_connects"], cn["dn_connects"])
                    else:
                        conns = "TCP sockets seen at batch starts %d" % cn["tcp_seen"]
                    extra = " (%s, %s: %d reads, %d NameNode requests, %s)" % (reader, decoder, cn["reads"],
                                                                               cn["nn_requests"], conns)
                res[which].append((statistics.mean(lost), q(lost, 0.5), q(lost, 0.99), cpu, q(waits, 0.5), q(waits, 0.99)))
                last[which] = list(lost)
                r_ = res[which][-1]
                print("round %d %-26s stall mean %6.1f p50 %6.1f p99 %6.1f ms; wait p50 %6.1f p99 %6.1f ms; "
                      "loading CPU %6.1f ms/step%s" % (rnd, label, 1e3 * r_[0], 1e3 * r_[1], 1e3 * r_[2], 1e3 * r_[4],
                                                       1e3 * r_[5], 1e3 * cpu, extra), flush=True)
        best = min(sweep, key=lambda w: statistics.median(x[0] for x in res[w]))
        stall = [1 - b[0] / a[0] if a[0] > 0 else 0 for a, b in zip(res[best], res["b"])]
        cpur = [1 - b[3] / a[3] for a, b in zip(res[best], res["b"])]
        rows = [(w, "DataLoader, %d worker%s%s" % (w, "s" if w > 1 else "", " (best)" if w == best else "")) for w in sweep]
        for which, label in rows + [("b", "newtricks.Reader (offload)")]:
            rs = res[which]
            print("%-36s stall mean %s, p50 %s, p99 %s ms; wait p50 %s, p99 %s ms; loading CPU %s ms/step" % (
                label, mmm([1e3 * x[0] for x in rs]), mmm([1e3 * x[1] for x in rs]), mmm([1e3 * x[2] for x in rs]),
                mmm([1e3 * x[4] for x in rs]), mmm([1e3 * x[5] for x in rs]), mmm([1e3 * x[3] for x in rs])))
        print("stall reduction %s, trainer CPU reduction %s (per round: 1 - newtricks/baseline, baseline = %d workers)" % (
            mmm(stall, "%.2f"), mmm(cpur, "%.2f"), best))
        if o.png:
            plot_stall(o.png, [("DataLoader, %d workers (best)" % best, last[best]), ("newtricks.Reader (offload)", last["b"])])
        print("BENCH python stall_reduction=%.2f trainer_cpu_reduction=%.2f baseline_workers=%d baseline_reader=%s "
              "video_decoder=%s %s load_start=%s load_end=%s" % (statistics.median(stall), statistics.median(cpur), best,
                                                                 reader, decoder, prov, load_start, loadavg()))
    finally:
        subprocess.run([o.cli, "cluster", "down", "--name", name, "--dir", base, "--purge"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
