"""A sample is all of its members (issue 21), against the real cluster: shards written by the
`webdataset` package's TarWriter are indexed by `newtricks dataset index` and read by
newtricks.Reader; keys, labels, captions and metadata equal what webdataset.WebDataset yields
on the same tar files; members travel with the tensors on every path (offload, raw, local);
a sample with two media members (an image and a clip) runs each through its own graph input;
the Go reader (`newtricks dataset read`) returns the same samples, outputs and members byte
for byte."""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import os
import subprocess

import numpy as np
import pytest
import webdataset as wds

import newtricks
from newtricks import members as nm

import xformcases

from conftest import IMAGES_WDS, N_SHARDS, PER_SHARD, VIEWS_GRAPH, caption  # noqa: F401


def sched(d="/data/wds", graph=None, steps=7, batch=2, world=1, seed="3"):
    return {"version": 1, "name": "samples", "seed": seed, "globalBatch": batch, "worldSize": world, "maxSteps": str(steps),
            "sources": [{"name": "s", "dataset": d, "weight": 1, "graph": graph or xformcases.GRAPHS["imagenet"]}]}


def read(c, spec, offload=True, **kw):
    out = []
    with newtricks.Reader(spec, namenode=c.namenode, namenode_ext=c.namenode_ext, offload=offload, user=c.superuser,
                          max_wait=30, **kw) as r:
        for st in r:
            out.extend((st.step, s) for s in st.samples)
        stats = r.stats()
    return out, stats


def peer(paths):
    """What a webdataset user gets from the same tar files: key -> decoded sample."""
    return {s["__key__"]: s for s in wds.WebDataset(paths, shardshuffle=False).decode()}


def digest(s):
    return [hashlib.sha256(np.ascontiguousarray(o).view(np.uint8)).hexdigest() for o in s.outputs]


def test_keys_labels_captions_equal_webdataset(wdsdata):
    want = peer(wdsdata.wds_local)
    assert len(want) == N_SHARDS * PER_SHARD
    got, stats = read(wdsdata, sched(steps=7))  # 14 samples, one epoch
    seen = {}
    for _, s in got:
        assert s.error is None, s.error
        seen[s.key] = s
    assert sorted(seen) == sorted(want)  # every key, each once (one epoch)
    for k, s in seen.items():
        w = want[k]
        assert s.primary == "jpg" and list(s.members) == ["cls", "json", "txt"], (k, s.members)
        m = s.meta
        assert m["cls"] == w["cls"] and type(m["cls"]) is int
        assert m["txt"] == w["txt"] and m["json"] == w["json"]
        e = s.entries()
        assert e["__key__"] == k and e["cls"] == w["cls"] and e["txt"] == w["txt"] and e["json"] == w["json"]
        assert e["jpg"].shape == (3, 224, 224)  # the graph's output made from the jpg member
        assert s.members["txt"] == w["txt"].encode()  # raw bytes as the tar holds them
    assert stats["offloaded"] > 0, stats


def test_members_on_every_path(wdsdata):
    spec = sched(steps=4)
    local, _ = read(wdsdata, spec, offload=False)
    off, st_off = read(wdsdata, spec)
    raw, st_raw = read(wdsdata, spec, raw_only=True)

    def view(rows):
        return [(step, s.slot, s.key, digest(s), dict(s.members), s.meta) for step, s in rows]

    assert view(off) == view(local) and view(raw) == view(local)
    assert {s.path for _, s in local} == {"local"} and {s.path for _, s in raw} == {"raw"}
    assert "offload" in {s.path for _, s in off}, st_off
    assert st_raw["raw"] > 0


def test_two_media_members_each_through_its_input(wdsdata):
    want = peer(wdsdata.views_local)
    spec = sched("/data/views", graph=VIEWS_GRAPH, steps=3)
    off, stats = read(wdsdata, spec)
    local, _ = read(wdsdata, spec, offload=False)
    assert [(s.key, digest(s), s.members) for _, s in off] == [(s.key, digest(s), s.members) for _, s in local]
    for _, s in off:
        assert s.error is None, s.error
        assert s.output_names == ["t", "clip"] and s.output_members == ["jpg", "mp4"]
        assert s.outputs[0].shape == (3, 32, 32), s.outputs[0].shape
        assert s.outputs[1].shape[0] == 2 and {24, 32} <= set(s.outputs[1].shape), s.outputs[1].shape  # 2 frames of 32x24
        e = s.entries()
        assert set(e) == {"__key__", "jpg", "mp4", "cls", "txt", "json"}
        assert e["cls"] == want[s.key]["cls"] and e["json"] == want[s.key]["json"]
        assert "mp4" not in s.members  # media members arrive as graph outputs only
    assert stats["offloaded"] > 0, stats


def test_go_and_python_readers_return_the_same_samples(wdsdata, tmp_path):
    for d, graph in (("/data/wds", None), ("/data/views", VIEWS_GRAPH)):
        spec = sched(d, graph=graph, steps=4)
        f = tmp_path / "s.json"
        f.write_text(json.dumps(spec))
        r = subprocess.run([wdsdata.cli, "dataset", "read", "--namenode", wdsdata.namenode, "--namenode-ext",
                            wdsdata.namenode_ext, "--user", wdsdata.superuser, "--schedule", str(f)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        go = [json.loads(l) for l in r.stdout.splitlines()]
        py, _ = read(wdsdata, spec)
        assert len(go) == len(py) == 8
        for g, (step, s) in zip(go, py):
            assert (g["step"], g["slot"], g["key"], g["epoch"]) == (step, s.slot, s.key, s.epoch)
            assert "error" not in g and s.error is None
            assert [o["sha256"] for o in g["outputs"]] == digest(s)
            assert [o["name"] for o in g["outputs"]] == s.output_names
            assert [o["member"] for o in g["outputs"]] == s.output_members
            assert [o["shape"] for o in g["outputs"]] == [list(o.shape) for o in s.outputs]
            assert [(m["name"], base64.b64decode(m["data"])) for m in g["members"]] == list(s.members.items())
            assert g["meta"] == s.meta


def test_decode_member_rules():
    for name, data, want in [("cls", b"7", 7), ("cls", b" 12\n", 12), ("CLS", b"+1_000", 1000), ("x.id", b"-4", -4),
                             ("txt", "caf\u00e9".encode(), "caf\u00e9"), ("seg.text", b"a", "a"),
                             ("json", b'{"a": [1, "b"], "c": 0.5}', {"a": [1, "b"], "c": 0.5}),
                             ("class", b"3", b"3"), ("pickle", b"\x80\x04", b"\x80\x04"), ("bin", b"\x00", b"\x00")]:
        assert nm.decode_member(name, data) == want, name
        # webdataset's default decoder agrees wherever it decodes (it lower-cases names itself)
        ext = nm.extension(name)
        if ext in wds.autodecode.decoders and ext not in ("pickle", "pyd", "pkl"):
            assert wds.autodecode.decoders[ext](data) == want, name
    for name, data in [("cls", b"x"), ("cls", b""), ("txt", b"\xff"), ("json", b"{"), ("json", b"1 2")]:
        with pytest.raises(newtricks.NewtricksError, match=repr(name)):
            nm.decode_member(name, data)
