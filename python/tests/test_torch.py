"""newtricks.torch against the real cluster (run by `make python-test-torch`: torch is large, so
these tests have their own venv and target; `make python-test` leaves this file out)."""

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
from conftest import schedule


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
    # No copy: the tensor's memory is the reader's step buffer, not a torch allocation.
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
