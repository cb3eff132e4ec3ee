"""newtricks.mirror against two real clusters: a checkpoint written on dc-a is waited for from
Python until it is committed on dc-b, byte for byte; urgent; permission; bad input."""

from __future__ import annotations

import os
import threading
import time

import pytest

import newtricks
from newtricks import errors


@pytest.fixture(scope="module")
def ckpt(cluster):
    for fs in (cluster.webhdfs, cluster.dcb):
        for d in ("/ckpt", "/tmp/newtricks-mirror"):
            fs.mkdirs(d, cluster.superuser)
            fs.chmod(d, cluster.superuser, "1777")
    return cluster


def diagnose(c):
    """What the mirror saw, for a failure message: its status and namenode-ext's log tail."""
    out = []
    try:
        out.append(repr(newtricks.mirror.status(addr=c.namenode_ext, user=c.superuser)))
    except Exception as e:
        out.append("status: %s" % e)
    for root, _, files in os.walk(os.path.join(c.base, "ext-logs")):
        for f in files:
            if "namenode" in f or "namenode" in root:
                with open(os.path.join(root, f), errors="replace") as fh:
                    out.append("%s:\n%s" % (f, "".join(fh.readlines()[-40:])))
    return "\n".join(out)


def write_checkpoint(c, job, step, files):
    d = "/ckpt/%s/step_%d" % (job, step)
    for name, data in files.items():
        c.webhdfs.create("%s/%s" % (d, name), "alice", data)
    c.webhdfs.create(d + "/_SUCCESS", "alice", b"")
    return d


def test_wait_returns_when_committed_on_dcb(ckpt):
    files = {"model.bin": os.urandom(1536 << 10), "optim.bin": os.urandom(300 << 10)}
    seen = []
    result = {}

    def waiter():  # waits before the checkpoint exists, as an evaluator would
        try:
            result["cp"] = newtricks.mirror.wait("job1", 5, timeout=120, interval=0.2, progress=seen.append,
                                                 addr=ckpt.namenode_ext, user="alice")
        except Exception as e:  # surfaced below
            result["err"] = e

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.5)
    src = write_checkpoint(ckpt, "job1", 5, files)
    t.join(150)
    assert "err" not in result, "%s\n%s" % (result.get("err"), diagnose(ckpt))
    cp = result["cp"]
    assert cp.committed and cp.owner == "alice" and cp.source_path == src and cp.files_done == 3, cp
    assert seen and seen[-1].state == "COMMITTED"
    for name, data in files.items():
        assert ckpt.dcb.read("%s/%s" % (cp.dest_path, name), "alice") == data
    listed = newtricks.mirror.status("job1", addr=ckpt.namenode_ext, user="alice")
    assert any(c.step == 5 and c.committed for c in listed)
    # bob may not wait on alice's checkpoint, nor sees it listed.
    with pytest.raises(errors.PermissionDeniedError):
        newtricks.mirror.wait("job1", 5, timeout=30, addr=ckpt.namenode_ext, user="bob")
    assert not [c for c in newtricks.mirror.status("job1", addr=ckpt.namenode_ext, user="bob") if c.owner == "alice"]


def test_urgent_before_the_checkpoint_exists(ckpt):
    cp = newtricks.mirror.urgent("job2", 9, addr=ckpt.namenode_ext, user="alice")
    assert cp.urgent and cp.job == "job2" and cp.step == 9
    write_checkpoint(ckpt, "job2", 9, {"w": os.urandom(100 << 10)})
    cp = newtricks.mirror.wait("job2", 9, timeout=120, addr=ckpt.namenode_ext, user="alice")
    assert cp.committed and cp.urgent


def test_wait_times_out_clearly(ckpt):
    with pytest.raises(errors.DeadlineExceededError):
        newtricks.mirror.wait("never", 1, timeout=1.5, addr=ckpt.namenode_ext, user="alice")


@pytest.mark.parametrize("kw, msg", [
    (dict(job="", step=1), "job"),
    (dict(job="a/b", step=1), "job"),
    (dict(job="j", step=-1), "step"),
    (dict(job="j", step=1.5), "step"),
])
def test_bad_input(kw, msg):
    with pytest.raises(errors.ConfigError, match=msg):
        newtricks.mirror.urgent(addr="127.0.0.1:1", user="alice", **kw)


def test_signal_on_a_marker_rule_is_refused(ckpt):
    with pytest.raises(errors.NewtricksError, match="marker"):
        newtricks.mirror.complete("job3", 1, addr=ckpt.namenode_ext, user="alice")
