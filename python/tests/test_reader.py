"""newtricks.Reader against a real cluster: datanode-ext transforms (offload), the local path
gives the same bytes, resume, per-sample errors, bad schedules and permission denial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest

import newtricks
from newtricks import errors

import xformcases

from conftest import schedule


def read_all(reader):
    out = []
    with reader:
        for st in reader:
            out.append(st)
        stats = reader.stats()
    return out, stats


def open_reader(c, datanodes=True, **kw):
    # Offload finds the DataNodes through namenode-ext's directory (no datanode list).
    spec = kw.pop("spec", None) or schedule()
    kw.setdefault("user", c.superuser)
    return newtricks.Reader(spec, namenode=c.namenode, namenode_ext=c.namenode_ext,
                            offload=bool(datanodes), max_wait=30, **kw)


def as_bytes(st):
    return [(s.key, s.epoch, None if s.error else [bytes(np.ascontiguousarray(o).view(np.uint8)) for o in s.outputs])
            for s in st.samples]


def test_offload_equals_local_byte_for_byte(data):
    off, off_stats = read_all(open_reader(data, rank=1))
    loc, loc_stats = read_all(open_reader(data, datanodes=False, rank=1))
    assert [s.step for s in off] == list(range(6))  # iteration ends with the schedule
    assert [as_bytes(s) for s in off] == [as_bytes(s) for s in loc]
    paths = {}
    for st in off:
        assert len(st) == 2  # global batch 4 over 2 ranks
        for s in st.ok:
            paths[s.path] = paths.get(s.path, 0) + 1
    assert paths.get("offload", 0) >= 6, paths  # DataNodes did the work
    assert off_stats["offloaded"] == paths.get("offload", 0) and off_stats["offloaded_fraction"] > 0.5, off_stats
    # steps counts Next calls that waited, including the one that met the schedule's end.
    assert off_stats["bytes_from_nodes"] > 0 and off_stats["steps"] >= 6
    assert off_stats["errors"] == sum(len(st.errors) for st in off)
    loc_errors = sum(len(st.errors) for st in loc)
    assert loc_stats["offloaded"] == 0 and loc_stats["errors"] == loc_errors and loc_stats["bytes_from_hdfs"] > 0
    assert loc_stats["local"] >= 12 - loc_errors and loc_stats["offloaded_fraction"] == 0
    for k in ("wait_p50_s", "wait_p99_s", "local_transform_s"):
        assert k in off_stats


def test_raw_answers_are_transformed_here_identically(data):
    # raw_only: the DataNodes read and send the encoded samples, this process transforms them
    # (the path taken when a node sheds load): same bytes as the DataNodes' tensors.
    off, _ = read_all(open_reader(data, rank=0, spec=schedule(steps=3)))
    raw, st = read_all(open_reader(data, rank=0, spec=schedule(steps=3), raw_only=True))
    assert [as_bytes(s) for s in raw] == [as_bytes(s) for s in off]
    assert {s.path for step in raw for s in step.ok} == {"raw"}
    assert st["raw"] >= 5 and st["offloaded"] == 0 and st["local_transform_s"] > 0, st
    assert st["raw_only"] and "ForceRawOnly" in st["raw_only_reason"] and st["refused_tensors"] == 0, st


def datanode_ext_pids(c):
    with open(os.path.join(c.base, "state.json")) as f:
        st = json.load(f)
    pids = []
    for d in st["datanodes"]:
        for child in subprocess.run(["pgrep", "-P", str(d["pid"])], stdout=subprocess.PIPE, text=True).stdout.split():
            with open("/proc/%s/comm" % child) as f:
                if f.read().strip().startswith("datanode-ext"):
                    pids.append(int(child))
    return pids


def wait_offload_serving(c, within=60):
    import grpc
    from newtricks.v1 import offload_pb2, offload_pb2_grpc

    end = time.monotonic() + within
    for addr in c.datanode_ext:
        with grpc.insecure_channel(addr) as ch:
            stub = offload_pb2_grpc.OffloadStub(ch)
            while True:
                try:
                    stub.NodeStatus(offload_pb2.OffloadNodeStatusRequest(user=c.superuser), timeout=2)
                    break
                except grpc.RpcError:
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.2)


def test_datanode_ext_down_falls_back_to_hdfs(data):
    # kill -9 every datanode-ext after the first step: their samples are read from HDFS and
    # transformed here ("local"), byte for byte as before; the hooks restart the co-processes.
    spec = schedule(steps=8)
    want, _ = read_all(open_reader(data, datanodes=False, rank=0, spec=spec))
    pids = datanode_ext_pids(data)
    assert len(pids) == 3, pids
    got = []
    with open_reader(data, rank=0, spec=spec, prefetch=1) as r:
        got.append(next(r))
        for p in pids:
            os.kill(p, signal.SIGKILL)
        got.extend(r)
        st = r.stats()
    assert [as_bytes(s) for s in got] == [as_bytes(s) for s in want]
    paths = [s.path for step in got for s in step.ok]
    assert "local" in paths and st["bytes_from_hdfs"] > 0, (paths, st)
    wait_offload_serving(data)


def test_batches_are_views_and_errors_name_the_sample(data):
    seen_error = False
    with open_reader(data, spec=schedule(steps=10), rank=0) as r:
        for st in r:
            for s in st.errors:
                seen_error = True
                assert s.key == "broken" and isinstance(s.error, errors.SampleError)
                assert '"broken"' in str(s.error) and s.outputs == []
            if st.ok:
                b = st.batch(0)
                assert b.shape == (len(st.ok), 3, 224, 224) and b.dtype == np.float32
                assert st.batched and not b.flags.owndata
                assert np.array_equal(b[0], st.ok[0].outputs[0])
    assert seen_error, "10 steps x 2 samples over 9 samples should meet broken.jpg"


def test_resume_from_a_step(data):
    full, _ = read_all(open_reader(data, rank=0))
    resumed, _ = read_all(open_reader(data, rank=0, start_step=4))
    assert [s.step for s in resumed] == [4, 5]
    assert [as_bytes(s) for s in resumed] == [as_bytes(s) for s in full[4:]]


def test_graphs_and_world_size_arguments(data):
    spec = schedule()
    del spec["worldSize"]  # the job's world size comes from the launcher
    spec["sources"][0]["graph"] = xformcases.GRAPHS["video"]  # wrong for images, replaced below
    r = open_reader(data, spec=spec, rank=3, world_size=4, graphs={"img": xformcases.GRAPHS["dtypes"]})
    with r:
        st = next(r)
        assert len(st) == 1
        if st.ok:
            assert [o.dtype for o in st.ok[0].outputs] == [np.float16, np.uint16, np.uint8]


@pytest.mark.parametrize("kw, msg", [
    (dict(spec=dict(schedule(), version=2)), "version"),
    (dict(spec=dict(schedule(), sources=[])), "source"),
    (dict(spec=schedule(graph="imagenet"), graphs={"img": {"version": 1, "nodes": [{"id": "x", "op": "nope", "input": "input"}], "outputs": ["x"]}}), "unknown op"),
    (dict(spec=schedule(), graphs={"other": xformcases.GRAPHS["imagenet"]}), "no source named"),
    (dict(rank=2), "rank 2"),
    (dict(world_size=3), "world_size=3"),
    (dict(spec={k: v for k, v in schedule().items() if k != "worldSize"}), "world"),
    (dict(spec="{not json"), "not valid JSON"),
])
def test_bad_schedule_is_a_clear_error(data, kw, msg):
    with pytest.raises(errors.ConfigError, match=msg):
        open_reader(data, **kw)


def test_bad_addresses_are_config_errors(data):
    with pytest.raises(errors.ConfigError, match="namenode must be host:port"):
        newtricks.Reader(schedule(), namenode="nn", namenode_ext=data.namenode_ext)
    with pytest.raises(errors.ConfigError, match="datanodes"):
        newtricks.Reader(schedule(), namenode=data.namenode, namenode_ext=data.namenode_ext, datanodes="dn:1")


def test_permission_denied(data):
    # alice reads her own dataset; bob is refused by HDFS when the index is read.
    with open_reader(data, spec=schedule("/data/secret", steps=1, world=1, batch=2), user="alice") as r:
        assert len(next(r).ok) == 2
    with pytest.raises(errors.NewtricksError, match="(?i)permission"):
        open_reader(data, spec=schedule("/data/secret", steps=1, world=1, batch=2), user="bob")
