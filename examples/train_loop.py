#!/usr/bin/env python3
"""A training loop on newtricks, against a local cluster from `newtricks cluster up`.

    make build jar && bin/newtricks cluster up --jar hadoop-patches/target/newtricks-hadoop-hooks.jar
    pip install ./python
    python examples/train_loop.py --media xformgraph/testdata/media/images --steps 20

It uploads the images in --media to HDFS as one dataset (unless --dataset names one that is
already indexed), indexes it with `newtricks dataset index`, hints the files hot for the
job's readers, then trains a toy linear model (numpy, on the step's batch) for --steps steps of
one rank, with the DataNodes transforming the samples (offload), and prints where the samples
were made and how long the loop waited for data.
"""

import argparse
import getpass
import http.client
import json
import os
import shutil
import subprocess
import sys
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = os.environ.get("NEWTRICKS_CACHE", os.path.expanduser("~/.cache/newtricks"))
    ap.add_argument("--cluster-dir", default=os.path.join(cache, "clusters", "dc-a"), help="cluster up's --dir")
    ap.add_argument("--newtricks", default=shutil.which("newtricks") or "bin/newtricks", help="the newtricks CLI")
    ap.add_argument("--media", help="local directory of images to upload as the dataset")
    ap.add_argument("--dataset", default="/datasets/example", help="HDFS dataset directory")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=8, help="global batch")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--world-size", type=int, default=1)
    ap.add_argument("--user", default=os.environ.get("HADOOP_USER_NAME") or getpass.getuser())
    a = ap.parse_args()

    namenode, http_port, nn_ext = cluster_addresses(a.cluster_dir)
    if a.media:
        files = sorted(f for f in os.listdir(a.media) if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
        if not files:
            sys.exit("no images in %s" % a.media)
        for f in files:
            with open(os.path.join(a.media, f), "rb") as fh:
                webhdfs_put(http_port, "%s/%s" % (a.dataset, f), a.user, fh.read())
        subprocess.run([a.newtricks, "dataset", "index", "--namenode", namenode, "--user", a.user, a.dataset],
                       check=True, stdout=subprocess.DEVNULL)
        print("uploaded and indexed %d images in %s" % (len(files), a.dataset))

    schedule = {"version": 1, "name": "example", "seed": "7", "globalBatch": a.batch, "worldSize": a.world_size,
                "maxSteps": str(a.steps), "sources": [{"name": "img", "dataset": a.dataset, "weight": 1, "graph": GRAPH}]}
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.01, size=(3 * 64 * 64,)).astype(np.float32)
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
                x = step.batch(0).reshape(len(step.ok), -1)      # [n, 3*64*64] float32, no copy
                y = x.mean(axis=1)                                  # a toy target
                grad = x.T @ (x @ w - y) / len(x)
                w -= 1e-5 * grad
                if step.step % 5 == 0:
                    print("step %3d  loss %.5f  paths %s" % (step.step, float(np.mean((x @ w - y) ** 2)),
                          sorted({s.path for s in step.ok})))
            st = reader.stats()
    print("%d steps in %.1fs; offloaded %.0f%%, raw %d, local %d, errors %d; wait p50 %.1f ms p99 %.1f ms; "
          "%.1f MB from DataNodes, %.1f MB from HDFS" % (
              steps, time.monotonic() - t0, 100 * st["offloaded_fraction"], st["raw"], st["local"], st["errors"],
              1e3 * st["wait_p50_s"], 1e3 * st["wait_p99_s"], st["bytes_from_nodes"] / 1e6, st["bytes_from_hdfs"] / 1e6))


if __name__ == "__main__":
    main()
