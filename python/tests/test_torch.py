"""newtricks.torch against the real cluster (run by `make python-test-torch`, part of `make test`,
on Debian's CPU-only torch with torchdata's StatefulDataLoader; `make python-test` leaves this
file out): steps as tensors, members as WebDataset gives them, resuming a StatefulDataLoader
at exactly the next sample, and resuming at another world size."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

import newtricks
import newtricks.torch as ntt
from newtricks import state as nstate
from conftest import schedule
from torchdata.stateful_dataloader import StatefulDataLoader
import webdataset as wds


def reader_steps(c, rank, start=0, spec=None):
    with newtricks.Reader(spec or schedule(steps=6), rank=rank, start_step=start, namenode=c.namenode,
                          namenode_ext=c.namenode_ext, datanodes=c.datanode_ext, user=c.superuser, max_wait=30) as r:
        return [(st.step, [s.key for s in st.ok], [np.array(st.batch(i)) for i in range(len(st.dtypes))] if st.ok else [])
                for st in r]


def dataset(c, rank, **kw):
    spec = kw.pop("spec", None) or schedule(steps=6)
    return ntt.StepDataset(spec, rank=rank, namenode=c.namenode, namenode_ext=c.namenode_ext,
                           datanodes=c.datanode_ext, user=c.superuser, max_wait=30, **kw)


def check_same(items, want):
    assert [it["step"] for it in items] == [w[0] for w in want]
    for it, (step, keys, arrays) in zip(items, want):
        assert it["keys"] == keys, step
        for t, a in zip(it["outputs"], arrays):
            assert isinstance(t, torch.Tensor) and t.shape == a.shape
            assert np.array_equal(t.view(torch.uint8).numpy() if t.dtype == torch.bfloat16 else t.numpy(),
                                  a.view(np.uint8) if t.dtype == torch.bfloat16 else a)


def test_in_process_items_share_memory_with_the_step(data):
    want = reader_steps(data, rank=0)
    items = list(DataLoader(dataset(data, 0), batch_size=None, num_workers=0))
    check_same(items, want)
    t = items[0]["outputs"][0]
    assert t.dtype == torch.float32 and t.shape[1:] == (3, 224, 224)
    # No copy: the tensor's memory is the reader's step buffer, not a torch allocation
    # (torch 2's storages say so; Debian 12's torch 1.13 has no resizable(): from_numpy shares).
    if hasattr(t, "untyped_storage"):
        assert not t.untyped_storage().resizable()


WORKERS_SCRIPT = """
import hashlib, json, sys
from torch.utils.data import DataLoader
import newtricks.torch as ntt, newtricks.transforms as nt
args = json.loads(sys.argv[1])
if __name__ == "__main__":
    ds = ntt.StepDataset(args["spec"], rank=1, namenode=args["nn"], namenode_ext=args["ext"], datanodes=args["dns"],
                         user=args["user"], max_wait=30)
    items = list(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=args["ctx"]))
    order = [(it["step"], it["part"]) for it in items]
    joined = [(it["step"], it["keys"], [hashlib.sha256(t.contiguous().view(-1).view(__import__("torch").uint8).numpy()).hexdigest()
               for t in it["outputs"]]) for it in ntt.join_parts(items)]
    print(json.dumps({"order": order, "joined": joined, "parent_loaded": nt.loaded()}))
"""


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_workers_shard_a_rank_and_join(data, ctx, tmp_path):
    # A fresh interpreter: this test process has loaded libnewtricks already, and a forked
    # worker of it would be refused (as it must be).
    want = [(step, keys, [hashlib.sha256(np.ascontiguousarray(a).view(np.uint8)).hexdigest() for a in arrays])
            for step, keys, arrays in reader_steps(data, rank=1)]
    script = tmp_path / "w.py"
    script.write_text(WORKERS_SCRIPT)
    args = {"spec": schedule(steps=6), "nn": data.namenode, "ext": data.namenode_ext, "dns": data.datanode_ext,
            "user": data.superuser, "ctx": ctx}
    r = subprocess.run([sys.executable, str(script), json.dumps(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["parent_loaded"] is False  # only the workers opened readers
    assert [tuple(o) for o in res["order"]] == [(s, p) for s in range(6) for p in range(2)]
    assert [tuple(j) for j in res["joined"]] == [tuple(w) for w in want]


def test_resume_and_bfloat16(data):
    spec = schedule(steps=6, graph="dtypes")
    want = reader_steps(data, rank=0, start=4, spec=spec)
    items = list(DataLoader(dataset(data, 0, start_step=4, spec=spec), batch_size=None))
    assert [it["step"] for it in items] == [4, 5]
    assert [o.dtype for o in items[0]["outputs"]] == [torch.float16, torch.bfloat16, torch.uint8]
    check_same(items, want)


def test_bad_worker_split_is_a_clear_error(data):
    dl = DataLoader(dataset(data, 0), batch_size=None, num_workers=3)
    with pytest.raises(Exception, match="does not divide"):
        list(dl)


def wds_spec(world=1, batch=2, steps=7, seed="3"):
    import xformcases

    return {"version": 1, "name": "samples", "seed": seed, "globalBatch": batch, "worldSize": world, "maxSteps": str(steps),
            "sources": [{"name": "s", "dataset": "/data/wds", "weight": 1, "graph": xformcases.GRAPHS["imagenet"]}]}


def wds_dataset(c, spec, rank=0, **kw):
    kw.setdefault("offload", True)
    return ntt.StepDataset(spec, rank=rank, namenode=c.namenode, namenode_ext=c.namenode_ext, user=c.superuser,
                           max_wait=30, **kw)


def ident(item):
    """What identifies a delivered sample and its bytes."""
    return (item["__step__"], item["__slot__"], item["__key__"], hashlib.sha256(item["jpg"].numpy().tobytes()).hexdigest(),
            item["cls"], item["txt"], json.dumps(item["json"], sort_keys=True))


def test_samples_are_what_webdataset_yields(wdsdata):
    want = {s["__key__"]: s for s in wds.WebDataset(wdsdata.wds_local, shardshuffle=False).decode()}
    items = list(DataLoader(wds_dataset(wdsdata, wds_spec(), samples=True), batch_size=None))
    assert sorted(it["__key__"] for it in items) == sorted(want)  # one epoch: every key once
    for it in items:
        w = want[it["__key__"]]
        assert set(it) == {"__key__", "__step__", "__slot__", "jpg", "cls", "txt", "json"}
        assert it["cls"] == w["cls"] and it["txt"] == w["txt"] and it["json"] == w["json"]
        assert isinstance(it["jpg"], torch.Tensor) and it["jpg"].shape == (3, 224, 224)
    # Step items: the same members over the rows, labels as one tensor.
    steps = list(DataLoader(wds_dataset(wdsdata, wds_spec(steps=2)), batch_size=None))
    for st in steps:
        assert st["__key__"] == st["keys"] and st["jpg"] is st["outputs"][0]
        assert st["cls"].dtype == torch.int64 and st["cls"].tolist() == [want[k]["cls"] for k in st["keys"]]
        assert st["txt"] == [want[k]["txt"] for k in st["keys"]]


@pytest.mark.parametrize("workers", [0, 2])
def test_stateful_dataloader_resumes_at_the_next_sample(wdsdata, workers):
    spec = wds_spec(batch=4, steps=4)
    # Workers are spawned: this process has loaded libnewtricks, which does not survive a fork.
    ctx = {"multiprocessing_context": "spawn"} if workers else {}
    full = [ident(it) for it in StatefulDataLoader(wds_dataset(wdsdata, spec, samples=True), batch_size=None, num_workers=workers, **ctx)]
    assert len(full) == 16
    for k in (3, 6, 9):  # mid-step (two samples per worker part of each step) and at step ends
        dl = StatefulDataLoader(wds_dataset(wdsdata, spec, samples=True), batch_size=None, num_workers=workers, **ctx)
        it = iter(dl)
        head = [ident(next(it)) for _ in range(k)]
        sd = dl.state_dict()
        del it, dl
        dl2 = StatefulDataLoader(wds_dataset(wdsdata, spec, samples=True), batch_size=None, num_workers=workers, **ctx)
        dl2.load_state_dict(json.loads(json.dumps(sd, default=list)) if workers == 0 else sd)  # a JSON value
        tail = [ident(x) for x in dl2]
        assert head + tail == full, (k, workers)
    # Step items resume at the next step.
    steps = StatefulDataLoader(wds_dataset(wdsdata, spec), batch_size=None)
    it = iter(steps)
    assert next(it)["step"] == 0
    sd = steps.state_dict()
    again = StatefulDataLoader(wds_dataset(wdsdata, spec), batch_size=None)
    again.load_state_dict(sd)
    assert [x["step"] for x in again] == [1, 2, 3]


def dataset_states(loader_state):
    """The newtricks states in a StatefulDataLoader's state_dict (one per worker)."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("kind") in ("rank", "job") and "schedule" in v:
                out.append(v)
                return
            for x in v.values():
                walk(x)

    walk(loader_state)
    return out


@pytest.mark.parametrize("new", [4, 16])
def test_elastic_resume_delivers_every_sample_once(wdsdata, new):
    # One uninterrupted reader of the schedule is the reference: 2 steps of 16 slots, more
    # than an epoch of the 14 samples (so epochs 0, 1 and 2 are drawn).
    B, S = 16, 2
    ref = []
    for it in DataLoader(wds_dataset(wdsdata, wds_spec(1, B, S), samples=True, offload=False), batch_size=None):
        ref.append((it["__step__"], it["__slot__"], it["__key__"]))
    assert len(ref) == B * S
    got = []
    states = []
    for r in range(8):  # world size 8: each rank stops somewhere, some mid-step
        dl = StatefulDataLoader(wds_dataset(wdsdata, wds_spec(8, B, S), rank=r, samples=True, offload=r % 3 == 0),
                                batch_size=None)
        it = iter(dl)
        for _ in range((r * 5) % 4):
            x = next(it)
            got.append((x["__step__"], x["__slot__"], x["__key__"]))
        states.extend(dataset_states(dl.state_dict()))
    job = nstate.merge(states)
    for r in range(new):  # world size `new`: every rank takes its share of what was left
        ds = wds_dataset(wdsdata, wds_spec(new, B, S), rank=r, samples=True, offload=r == 0)
        ds.load_state_dict(job)
        for x in DataLoader(ds, batch_size=None):
            got.append((x["__step__"], x["__slot__"], x["__key__"]))
    assert sorted(got) == sorted(ref)  # every slot of every step once: each sample of an epoch exactly once
    assert len(set(got)) == len(got)
