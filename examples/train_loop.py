#!/usr/bin/env python3
"""A training loop on newtricks, against a local cluster from `newtricks cluster up`.

    make build jar && bin/newtricks cluster up --jar hadoop-patches/target/newtricks-hadoop-hooks.jar
    pip install ./python
    python examples/train_loop.py --media xformgraph/testdata/media/images --steps 20

It uploads the images in --media to HDFS as a labeled dataset (unless --dataset names one that
is already indexed): WebDataset-style tar shards where every sample is KEY.jpg (or .png, .webp)
beside its label KEY.cls (the image's index modulo --classes) and its caption KEY.txt. It
indexes them with `newtricks dataset index`, hints the files hot for the job's readers, then
trains a toy softmax classifier (numpy, on the step's batch, against the labels the samples
carry) for --steps steps of one rank, with the DataNodes transforming the samples (offload).
It prints a few samples (key, label, caption, how each was made), the loss, and at the end
where the samples were made and how long the loop waited for data.
"""

import argparse
import getpass
import http.client
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse

import numpy as np

import newtricks

GRAPH = {"version": 1, "name": "train", "seed": "1", "nodes": [
    {"id": "dec", "op": "decode_image", "input": "input"},
    {"id": "rrc", "op": "random_resized_crop", "input": "dec", "params": {"size": [64]}},
    {"id": "flip", "op": "random_hflip", "input": "rrc"},
    {"id": "norm", "op": "normalize", "input": "flip", "params": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}},
    {"id": "t", "op": "to_tensor", "input": "norm", "params": {"layout": "CHW", "dtype": "float32"}}],
    "outputs": ["t"]}


def cluster_addresses(d):
    """NameNode RPC and HTTP and namenode-ext addresses of `newtricks cluster up`."""
    with open(os.path.join(d, "state.json")) as f:
        st = json.load(f)
    try:
        with open(os.path.join(d, "ext.json")) as f:
            ext = json.load(f)
    except FileNotFoundError:
        sys.exit("%s has no ext.json: start the cluster with --jar (the newtricks hooks)" % d)
    ports = st["namenode"]["namenode_ports"]
    return "127.0.0.1:%d" % ports["rpc"], ports["http"], ext["NameNodeAPI"]


def webhdfs_put(http_port, path, user, data):
    q = urllib.parse.urlencode({"op": "CREATE", "overwrite": "true", "user.name": user})
    c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=60)
    c.request("PUT", "/webhdfs/v1%s?%s" % (urllib.parse.quote(path), q))
    r = c.getresponse()
    r.read()
    loc = urllib.parse.urlsplit(r.getheader("Location") or "")
    if r.status != 307:
        sys.exit("webhdfs create %s: HTTP %d" % (path, r.status))
    c = http.client.HTTPConnection(loc.hostname, loc.port, timeout=60)
    c.request("PUT", loc.path + "?" + loc.query, body=data)
    r = c.getresponse()
    r.read()
    if r.status != 201:
        sys.exit("webhdfs write %s: HTTP %d" % (path, r.status))


def labeled_shards(media, classes, per_shard=8):
    """The images in media as tar shards of WebDataset samples: [(shard name, tar bytes)] and
    [(key, label, caption)], every sample KEY.EXT, KEY.cls and KEY.txt."""
    files = sorted(f for f in os.listdir(media) if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
    if not files:
        sys.exit("no images in %s" % media)
    shards, samples = [], []
    for s in range(0, len(files), per_shard):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
            for i, f in enumerate(files[s:s + per_shard], s):
                key, ext = "%06d" % i, f.rsplit(".", 1)[1].lower()
                label, caption = i % classes, "image %d of %s (class %d)" % (i, f, i % classes)
                with open(os.path.join(media, f), "rb") as fh:
                    img = fh.read()
                for name, data in ((ext, img), ("cls", str(label).encode()), ("txt", caption.encode())):
                    ti = tarfile.TarInfo("%s.%s" % (key, name))
                    ti.size = len(data)
                    tf.addfile(ti, io.BytesIO(data))
                samples.append((key, label, caption))
        shards.append(("shard-%03d.tar" % len(shards), buf.getvalue()))
    return shards, samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = os.environ.get("NEWTRICKS_CACHE", os.path.expanduser("~/.cache/newtricks"))
    ap.add_argument("--cluster-dir", default=os.path.join(cache, "clusters", "dc-a"), help="cluster up's --dir")
    ap.add_argument("--newtricks", default=shutil.which("newtricks") or "bin/newtricks", help="the newtricks CLI")
    ap.add_argument("--media", help="local directory of images to upload as the dataset")
    ap.add_argument("--dataset", default="/datasets/example", help="HDFS dataset directory")
    ap.add_argument("--classes", type=int, default=4, help="classes of the labels (cls members)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8, help="global batch")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world-size", type=int, default=1)
    ap.add_argument("--user", default=os.environ.get("HADOOP_USER_NAME") or getpass.getuser())
    a = ap.parse_args()

    namenode, http_port, nn_ext = cluster_addresses(a.cluster_dir)
    if a.media:
        shards, samples = labeled_shards(a.media, a.classes)
        for name, data in shards:
            webhdfs_put(http_port, "%s/%s" % (a.dataset, name), a.user, data)
        subprocess.run([a.newtricks, "dataset", "index", "--namenode", namenode, "--user", a.user, a.dataset],
                       check=True, stdout=subprocess.DEVNULL)
        print("uploaded and indexed %d images, each with a label (cls) and caption (txt), in %d shards in %s" % (
            len(samples), len(shards), a.dataset))

    schedule = {"version": 1, "name": "example", "seed": "7", "globalBatch": a.batch, "worldSize": a.world_size,
                "maxSteps": str(a.steps), "sources": [{"name": "img", "dataset": a.dataset, "weight": 1, "graph": GRAPH}]}
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.01, size=(3 * 64 * 64, a.classes)).astype(np.float32)  # softmax classifier
    # ---- the loop: hint the data hot, read transformed batches, train ----------------------
    with newtricks.hint(a.dataset, readers=a.world_size, window=600, addr=nn_ext, user=a.user) as h:
        print("hint %s: %d files, replication -> %s" % (h.id, len(h.plan.files),
              sorted({f.target_replication for f in h.plan.files})))
        # namenode-ext's address is all the reader needs: it finds the DataNodes' datanode-ext
        # in namenode-ext's directory.
        with newtricks.Reader(schedule, rank=a.rank, namenode=namenode, namenode_ext=nn_ext,
                              user=a.user) as reader:
            t0, steps = time.monotonic(), 0
            for step in reader:
                steps += 1
                for s in step.errors:
                    print("step %d: skipped %s: %s" % (step.step, s.key, s.error))
                if steps == 1:
                    for s in step.ok[:3]:
                        print("sample %s  label %d  caption %r  (%s)" % (s.key, s.meta["cls"], s.meta["txt"], s.path))
                x = step.batch(0).reshape(len(step.ok), -1)      # [n, 3*64*64] float32, no copy
                y = np.array([s.meta["cls"] for s in step.ok])   # the labels the samples carry
                logits = x @ w
                p = np.exp(logits - logits.max(axis=1, keepdims=True))
                p /= p.sum(axis=1, keepdims=True)
                loss = float(-np.mean(np.log(p[np.arange(len(y)), y] + 1e-12)))
                p[np.arange(len(y)), y] -= 1                        # d(cross-entropy)/d(logits)
                w -= 1e-4 * (x.T @ p) / len(x)
                if step.step % 5 == 0:
                    print("step %3d  loss %.4f  labels %s  paths %s" % (step.step, loss, y.tolist(),
                          sorted({s.path for s in step.ok})))
            st = reader.stats()
    print("%d steps in %.1fs; offloaded %.0f%%, raw %d, local %d, errors %d; wait p50 %.1f ms p99 %.1f ms; "
          "%.1f MB from DataNodes, %.1f MB from HDFS" % (
              steps, time.monotonic() - t0, 100 * st["offloaded_fraction"], st["raw"], st["local"], st["errors"],
              1e3 * st["wait_p50_s"], 1e3 * st["wait_p99_s"], st["bytes_from_nodes"] / 1e6, st["bytes_from_hdfs"] / 1e6))


if __name__ == "__main__":
    main()
