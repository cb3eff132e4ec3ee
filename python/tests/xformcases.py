"""Graphs and inputs shared by the transform tests and the worker processes they start."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess

GRAPHS = {
    # The ImageNet training pipeline: random crop and flip, normalize, float32 CHW.
    "imagenet": {"version": 1, "name": "imagenet-train", "seed": "42", "nodes": [
        {"id": "dec", "op": "decode_image", "input": "input"},
        {"id": "rrc", "op": "random_resized_crop", "input": "dec", "params": {"size": [224]}},
        {"id": "flip", "op": "random_hflip", "input": "rrc"},
        {"id": "norm", "op": "normalize", "input": "flip",
         "params": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}},
        {"id": "t", "op": "to_tensor", "input": "norm", "params": {"layout": "CHW", "dtype": "float32"}}],
        "outputs": ["t"]},
    # Every other output dtype, three outputs from one sample.
    "dtypes": {"version": 1, "seed": "7", "nodes": [
        {"id": "d", "op": "decode_image", "input": "input"},
        {"id": "r", "op": "resize", "input": "d", "params": {"size": [96], "filter": "bicubic"}},
        {"id": "c", "op": "center_crop", "input": "r", "params": {"size": [80]}},
        {"id": "f", "op": "random_hflip", "input": "c", "params": {"p": 0.5}},
        {"id": "t16", "op": "to_tensor", "input": "f", "params": {"layout": "HWC", "dtype": "float16"}},
        {"id": "bf", "op": "to_tensor", "input": "f", "params": {"layout": "CHW", "dtype": "bfloat16"}},
        {"id": "u8", "op": "to_tensor", "input": "c", "params": {"layout": "CHW", "dtype": "uint8"}}],
        "outputs": ["t16", "bf", "u8"]},
    # Video: a random 4-frame segment (stride 2), scaled by swscale.
    "video": {"version": 1, "seed": "3", "nodes": [
        {"id": "dec", "op": "decode_video", "input": "input",
         "params": {"mode": "random_segment", "num": 4, "stride": 2, "width": 64, "height": 48}}],
        "outputs": ["dec"]},
}

IMAGES = ["photo_q90_420.jpg", "baseline_444.jpg", "progressive.jpg", "gray.jpg", "rgba8.png", "lossy.webp"]
VIDEOS = ["tiny.mp4", "tiny_vp9.webm", "mpeg4.mp4"]
EPOCHS = [0, 1, 5]


def inputs(media: str, graph: str):
    if graph == "video":
        return [os.path.join(media, "video", v) for v in VIDEOS]
    return [os.path.join(media, "images", i) for i in IMAGES]


def python_digests(media: str, graph: str):
    """{(key, epoch): sha256 of the output frames, or "error: ..."} computed in this process."""
    from newtricks import transforms
    from newtricks.errors import SampleError

    g = transforms.Graph(GRAPHS[graph])
    out = {}
    for path in inputs(media, graph):
        data = open(path, "rb").read()
        key = os.path.basename(path)
        for e in EPOCHS:
            try:
                out[(key, e)] = hashlib.sha256(g.run_frames(data, key=key, epoch=e)).hexdigest()
            except SampleError as err:
                out[(key, e)] = "error: " + str(err)
    return out


def go_digests(refrun: str, media: str, graph: str, tmpdir: str):
    """The same digests from refrun, a plain Go process running xformgraph as a DataNode does."""
    spec = os.path.join(tmpdir, graph + ".json")
    with open(spec, "w") as f:
        json.dump(GRAPHS[graph], f)
    r = subprocess.run([refrun, "-graph", spec, "-epochs", ",".join(map(str, EPOCHS))] + inputs(media, graph),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("refrun failed: %s" % r.stderr)
    out = {}
    for line in r.stdout.splitlines():
        d = json.loads(line)
        out[(d["key"], d["epoch"])] = d.get("sha256") or "error: " + d["error"]
    return out
