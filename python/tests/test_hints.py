"""newtricks.hint against a real cluster (namenode-ext's Hints service), and its input checks."""

from __future__ import annotations

import datetime
import os
import time

import pytest

import newtricks
from newtricks import _failover, errors


@pytest.mark.parametrize("kwargs, msg", [
    (dict(paths="hot/a", readers=4), "not absolute"),
    (dict(paths=[], readers=4), "no paths"),
    (dict(paths=42, readers=4), "iterable of paths"),
    (dict(paths=["/hot", 7], readers=4), "strings"),
    (dict(paths="/hot", readers=0), "readers must be a positive int"),
    (dict(paths="/hot", readers=True), "readers must be a positive int"),
    (dict(paths="/hot", readers="8"), "readers must be a positive int"),
    (dict(paths="/hot", readers=4, window=0), "window must be > 0"),
    (dict(paths="/hot", readers=4, hot_in=-1), "hot_in must be >= 0"),
    (dict(paths="/hot", readers=4, hot_in=float("nan")), "finite"),
    (dict(paths="/hot", readers=4, window="10m"), "number of seconds or a timedelta"),
    (dict(paths="/hot", readers=4, replication=-2), "replication must be an int >= 0"),
    (dict(paths="/hot", readers=4, user=""), "user must be a non-empty name"),
    (dict(paths="/hot", readers=4, addr="localhost"), "host:port"),
])
def test_bad_arguments_fail_before_sending(kwargs, msg):
    kwargs.setdefault("addr", "127.0.0.1:1")
    with pytest.raises(errors.ConfigError, match=msg) as ei:
        newtricks.hint(**kwargs)
    assert isinstance(ei.value, ValueError)


def test_no_address(monkeypatch):
    monkeypatch.delenv("NEWTRICKS_NAMENODE_EXT", raising=False)
    with pytest.raises(errors.ConfigError, match="NEWTRICKS_NAMENODE_EXT"):
        newtricks.hint("/hot", readers=4)


def test_unreachable_server_is_unavailable():
    t0 = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="127.0.0.1:1"):
        newtricks.hint("/hot", readers=4, addr="127.0.0.1:1", timeout=1.5)
    assert time.monotonic() - t0 < 10


@pytest.fixture(scope="module")
def hot(cluster):
    """/hot owned by alice with 1-block files at replication 1; /hot/bobs owned by bob."""
    fs, su = cluster.webhdfs, cluster.superuser
    fs.mkdirs("/hot", su)
    fs.chown("/hot", su, "alice")
    for name in ("a", "b", "c"):
        fs.create("/hot/" + name, "alice", os.urandom(512 << 10), replication=1)
    fs.mkdirs("/outside", su)
    fs.chown("/outside", su, "alice")
    fs.create("/outside/x", "alice", b"x" * 1024, replication=1)
    return cluster


def wait_replication(fs, path, want, within=60.0):
    end = time.monotonic() + within
    while True:
        r = fs.replication(path, "alice")
        if r == want or time.monotonic() > end:
            return r
        time.sleep(0.3)


def test_hint_raises_replication_and_restores_on_exit(hot):
    fs = hot.webhdfs
    assert fs.replication("/hot/a", "alice") == 1
    with newtricks.hint("/hot/[ab]", readers=16, hot_in=0, window=datetime.timedelta(minutes=2),
                        addr=hot.namenode_ext, user="alice", timeout=90) as h:
        assert h.id
        assert sorted(f.path for f in h.plan.files) == ["/hot/a", "/hot/b"]
        for f in h.plan.files:
            assert (f.original_replication, f.target_replication) == (1, 3), f  # capped at 3 live DataNodes
        st = h.wait_ready(timeout=90, poll=0.3)
        assert st.ready and st.state == "READY", st
        assert all(f.replicas_placed >= 3 for f in st.files), st.files
        assert fs.replication("/hot/a", "alice") == 3
        assert fs.replication("/hot/c", "alice") == 1  # not hinted
        ext = h.extend(30)
        assert ext.deadline > st.deadline
    assert h.done().state in ("RESTORING", "FINISHED")
    assert wait_replication(fs, "/hot/a", 1) == 1
    assert wait_replication(fs, "/hot/b", 1) == 1


def test_exception_in_block_cancels_the_hint(hot):
    with pytest.raises(RuntimeError, match="load failed"):
        with newtricks.hint("/hot/c", readers=8, window=60, addr=hot.namenode_ext, user="alice", timeout=90) as h:
            raise RuntimeError("load failed")
    assert h.done().state == "CANCELLED"  # done() returns the status recorded on exit
    assert wait_replication(hot.webhdfs, "/hot/c", 1) == 1


def test_dry_run_changes_nothing(hot):
    h = newtricks.hint("/hot/a", readers=64, addr=hot.namenode_ext, user="alice", dry_run=True, timeout=90)
    assert h.id == "" and h.plan.files[0].target_replication == 3
    h.done()
    assert hot.webhdfs.replication("/hot/a", "alice") == 1


def test_user_from_hadoop_user_name(hot, monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "alice")
    monkeypatch.setenv("NEWTRICKS_NAMENODE_EXT", hot.namenode_ext)
    with newtricks.hint("/hot/b", readers=2, window=30, dry_run=True) as h:
        assert h.user == "alice"


def test_permission_denied_for_another_user(hot):
    # bob may not change alice's files: HDFS's own permission check, through namenode-ext.
    with pytest.raises(errors.PermissionDeniedError, match="PERMISSION_DENIED") as ei:
        newtricks.hint("/hot/a", readers=8, addr=hot.namenode_ext, user="bob", timeout=90)
    assert isinstance(ei.value, PermissionError)
    assert "bob" in str(ei.value)
    assert hot.webhdfs.replication("/hot/a", "alice") == 1


def test_outside_allowed_prefixes_is_denied(hot):
    with pytest.raises(errors.PermissionDeniedError):
        newtricks.hint("/outside/x", readers=8, addr=hot.namenode_ext, user="alice", timeout=90)


def test_missing_path_is_not_found(hot):
    with pytest.raises(errors.NotFoundError) as ei:
        newtricks.hint("/hot/no-such-file", readers=8, addr=hot.namenode_ext, user="alice", timeout=90)
    assert isinstance(ei.value, FileNotFoundError)


@pytest.mark.parametrize("kwargs, msg", [
    (dict(paths="/hot/a", hot_in=7200), "maximum lead"),
    (dict(paths="/hot/a", window=7 * 3600), "maximum duration"),
    (dict(paths="/hot/[a", window=60), "bad glob"),
])
def test_server_rejects_invalid_hints(hot, kwargs, msg):
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        newtricks.hint(readers=8, addr=hot.namenode_ext, user="alice", timeout=90, **kwargs)


def test_another_users_hint_cannot_be_ended(hot):
    with newtricks.hint("/hot/b", readers=4, window=60, addr=hot.namenode_ext, user="alice", timeout=90) as h:
        stolen = newtricks.Hint.__new__(newtricks.Hint)
        stolen.__init__(_failover.Channels([hot.namenode_ext]), "bob", h.plan, 30)
        with pytest.raises(errors.PermissionDeniedError):
            stolen.done()
        assert h.status().state in ("PREPARING", "READY")
