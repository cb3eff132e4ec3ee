#!/usr/bin/env python3
"""bench-python: a Python training loop reading a mixed image/video dataset from a real
cluster (a) the way people do today, and (b) through newtricks.Reader with offload.

The trainer (this process: the training loop and, for (a), its loader worker processes) is
pinned to CPU 0 and runs a synthetic model step (a numpy compute loop of fixed length on the
main thread). The NameNode, the DataNodes and their datanode-ext co-processes are pinned to
CPU 1.

(a) baseline: 2 worker processes on the trainer's core (what a PyTorch DataLoader with
    num_workers=2 does) read each sample's bytes from HDFS over WebHDFS and transform it with
    Pillow + numpy (decode, random resized crop to 224, flip, normalize, float32 CHW; videos:
    PyAV decode, 8 frames sampled uniformly, resized to 112x112 with Pillow, float32 TCHW).
(b) newtricks: the same sample mix and transforms as xformgraph graphs in a schedule; the
    DataNodes transform, the trainer receives tensors (newtricks.Reader, whose own threads
    run on the trainer's core too).

Measured per step after a warm-up: the stall, the wall time of the step (waiting for the batch,
then the model step) minus the model step's own CPU time, i.e. the time the loop lost to data
loading, whether it blocked in next() or its model step was slowed by loader work competing
for the core; the wait (time blocked in next()) alone; and the trainer's CPU spent on loading
(all CPU of the trainer process and its workers minus the model thread's CPU). Rounds alternate the order of (a) and (b); figures are medians with (min, max).
The machine may be shared with other work: CPU time is robust to that, wall-clock waits less so.
Last line: BENCH python stall_reduction=<x> trainer_cpu_reduction=<x>
(1 - newtricks/baseline, for the mean stall per step and the loading CPU per step, median of
the rounds).
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

import newtricks

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

_fs = None


def _load_image(b, rng):
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


def _load_video(b):
    import av
    from PIL import Image

    with av.open(io.BytesIO(b)) as c:
        frames = [f.to_image() for f in c.decode(video=0)]
    idx = np.linspace(0, len(frames) - 1, 8).round().astype(int)
    return np.stack([np.asarray(frames[i].resize((112, 112), Image.BILINEAR), dtype=np.float32).transpose(2, 0, 1) / 255.0
                     for i in idx])


def _load_step(args):
    port, user, step, paths = args
    global _fs
    if _fs is None:
        _fs = WebHDFS(port)
    rng = np.random.default_rng(step)
    out = []
    for p in paths:
        b = _fs.get(p, user)
        out.append(_load_video(b) if p.endswith(".mp4") else _load_image(b, rng))
    return out


def cpu_of(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def model_step(seconds, a):
    """A fixed amount of compute on this thread: numpy matmuls until `seconds` of thread CPU."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        a = np.tanh(a @ a.T * 1e-3)
    return a


def run_baseline(o, port, user, plan):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    pool = ctx.Pool(2)
    pids = [p.pid for p in pool._pool]
    cpu0 = {p: cpu_of(p) for p in pids}
    proc0 = time.process_time()
    it = pool.imap(_load_step, [(port, user, s, plan[s]) for s in range(len(plan))], chunksize=1)
    waits, lost, model_cpu, a = [], [], 0.0, np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32)
    for s in range(len(plan)):
        t0 = time.monotonic()
        batch = next(it)
        w = time.monotonic() - t0
        if s == o.warmup:
            cpu0 = {p: cpu_of(p) for p in pids}
            proc0, model_cpu = time.process_time(), 0.0
        t1 = time.thread_time()
        a = model_step(o.model, a)
        m = time.thread_time() - t1
        if s >= o.warmup:
            model_cpu += m
            waits.append(w)
            lost.append(time.monotonic() - t0 - m)
        assert len(batch) == o.batch
    load_cpu = sum(cpu_of(p) - cpu0[p] for p in pids) + (time.process_time() - proc0 - model_cpu)
    pool.terminate()
    return waits, lost, load_cpu / (len(plan) - o.warmup)


def run_newtricks(o, c, schedule):
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
    o = ap.parse_args()
    user = os.environ.get("USER") or "root"
    os.sched_setaffinity(0, {0})
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
             "dns": ext["DataNodeAPI"], "user": user}
        fs = WebHDFS(port)
        imgs = ["photo_q90_420.jpg", "baseline_444.jpg", "progressive.jpg", "odd_333x251.jpg", "baseline_422.jpg"]
        vids = ["h264_bframes.mp4", "mpeg4.mp4"]
        ipaths, vpaths = [], []
        for i in range(48):
            p = "/bench/img/i%03d.jpg" % i
            fs.put(p, user, open(os.path.join(o.media, "images", imgs[i % len(imgs)]), "rb").read())
            ipaths.append(p)
        for i in range(8):
            p = "/bench/vid/v%03d.mp4" % i
            fs.put(p, user, open(os.path.join(o.media, "video", vids[i % len(vids)]), "rb").read())
            vpaths.append(p)
        for d in ("/bench/img", "/bench/vid"):
            subprocess.run([o.cli, "dataset", "index", "--namenode", c["namenode"], "--user", user, d], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        nvid = max(1, o.batch // 8)  # one clip in 8 samples
        schedule = {"version": 1, "name": "bench", "seed": "3", "globalBatch": o.batch, "worldSize": 1,
                    "maxSteps": str(o.steps + 1), "sources": [
                        {"name": "img", "dataset": "/bench/img", "weight": o.batch - nvid, "graph": IMAGE_GRAPH},
                        {"name": "vid", "dataset": "/bench/vid", "weight": nvid, "graph": VIDEO_GRAPH}]}
        rng = np.random.default_rng(1)
        plan = [[ipaths[j] for j in rng.integers(0, len(ipaths), o.batch - nvid)] +
                [vpaths[j] for j in rng.integers(0, len(vpaths), nvid)] for _ in range(o.steps)]
        print("cluster %s: 3 DataNodes + datanode-ext pinned to CPU 1; trainer on CPU 0; %d steps x %d samples "
              "(%d clip), warm-up %d, model step %.0f ms CPU, %d rounds" % (name, o.steps, o.batch, nvid, o.warmup,
                                                                            o.model * 1e3, o.rounds))
        res = {"a": [], "b": []}
        for rnd in range(o.rounds):
            for which in (("a", "b") if rnd % 2 == 0 else ("b", "a")):
                if which == "a":
                    waits, lost, cpu = run_baseline(o, port, user, plan)
                    extra = ""
                else:
                    waits, lost, cpu, paths, stats = run_newtricks(o, c, schedule)
                    extra = " paths %s" % paths
                res[which].append((statistics.mean(lost), q(lost, 0.5), q(lost, 0.99), cpu, q(waits, 0.5), q(waits, 0.99)))
                r_ = res[which][-1]
                print("round %d %-9s stall mean %6.1f p50 %6.1f p99 %6.1f ms; wait p50 %6.1f p99 %6.1f ms; "
                      "loading CPU %6.1f ms/step%s" % (rnd, {"a": "baseline", "b": "newtricks"}[which], 1e3 * r_[0],
                                                       1e3 * r_[1], 1e3 * r_[2], 1e3 * r_[4], 1e3 * r_[5], 1e3 * cpu, extra),
                      flush=True)
        stall = [1 - b[0] / a[0] if a[0] > 0 else 0 for a, b in zip(res["a"], res["b"])]
        cpur = [1 - b[3] / a[3] for a, b in zip(res["a"], res["b"])]
        for which, label in (("a", "baseline (Pillow+numpy, 2 workers)"), ("b", "newtricks.Reader (offload)")):
            rs = res[which]
            print("%-36s stall mean %s, p50 %s, p99 %s ms; wait p50 %s, p99 %s ms; loading CPU %s ms/step" % (
                label, mmm([1e3 * x[0] for x in rs]), mmm([1e3 * x[1] for x in rs]), mmm([1e3 * x[2] for x in rs]),
                mmm([1e3 * x[4] for x in rs]), mmm([1e3 * x[5] for x in rs]), mmm([1e3 * x[3] for x in rs])))
        print("stall reduction %s, trainer CPU reduction %s (per round: 1 - newtricks/baseline)" % (
            mmm(stall, "%.2f"), mmm(cpur, "%.2f")))
        print("BENCH python stall_reduction=%.2f trainer_cpu_reduction=%.2f" % (statistics.median(stall), statistics.median(cpur)))
    finally:
        subprocess.run([o.cli, "cluster", "down", "--name", name, "--dir", base, "--purge"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
