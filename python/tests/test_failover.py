"""newtricks._failover: hints and the mirror over several namenode-ext addresses, against two
real in-process gRPC servers (one answering as namenode-ext beside a standby NameNode), with
the rules of the Go clients (internal/apiclient.Failover). The HA cluster run is in the Go
conformance (conformance/ha_clients_test.go runs newtricks.hint there)."""

from __future__ import annotations

import os
import socket
import threading
from concurrent import futures

import grpc
import pytest

import newtricks
from newtricks import _failover, errors
from newtricks.v1 import hotspot_pb2, hotspot_pb2_grpc, mirror_pb2, mirror_pb2_grpc

STANDBY = "standby: the NameNode beside this namenode-ext is standby, not active; call the active NameNode's namenode-ext"


class Server(hotspot_pb2_grpc.HintsServicer, mirror_pb2_grpc.MirrorServicer):
    """Acting ("active"), answering "standby", or failing as a connection broken in flight
    would ("broken"); counts the calls that reached it."""

    def __init__(self, name, mode):
        self.name, self.mode, self.calls = name, mode, 0
        self._lock = threading.Lock()
        self.srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        hotspot_pb2_grpc.add_HintsServicer_to_server(self, self.srv)
        mirror_pb2_grpc.add_MirrorServicer_to_server(self, self.srv)
        port = self.srv.add_insecure_port("127.0.0.1:0")
        self.addr = "127.0.0.1:%d" % port
        self.srv.start()

    def _refuse(self, ctx):
        with self._lock:
            self.calls += 1
        if self.mode == "standby":
            ctx.abort(grpc.StatusCode.UNAVAILABLE, STANDBY)
        if self.mode == "broken":
            ctx.abort(grpc.StatusCode.UNAVAILABLE, "Socket closed")
        if self.mode == "nn-standby":
            ctx.abort(grpc.StatusCode.FAILED_PRECONDITION, "locate /f: StandbyException: Operation category READ is not supported in state standby")

    def Create(self, req, ctx):
        self._refuse(ctx)
        return hotspot_pb2.HintPlan(hint_id="h-" + self.name)

    def Status(self, req, ctx):
        self._refuse(ctx)
        return hotspot_pb2.HintStatus(hint_id=req.hint_id, state="READY", ready=True, user=self.name)

    def Done(self, req, ctx):
        self._refuse(ctx)
        return hotspot_pb2.HintStatus(hint_id=req.hint_id, state="FINISHED", user=self.name)

    def Wait(self, req, ctx):
        self._refuse(ctx)
        for i in range(3):
            yield mirror_pb2.CheckpointStatus(ref=req.ref, owner=self.name, files_done=i,
                                              state=mirror_pb2.CheckpointStatus.COMMITTED if i == 2 else mirror_pb2.CheckpointStatus.COPYING)


@pytest.fixture
def servers():
    made = []

    def make(name, mode):
        s = Server(name, mode)
        made.append(s)
        return s

    yield make
    for s in made:
        s.srv.stop(None)


def refused_addr():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    a = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    return a


def test_hint_goes_to_the_active_and_stays_there(servers):
    a, b = servers("a", "standby"), servers("b", "active")
    h = newtricks.hint("/hot", readers=4, addr=[a.addr, b.addr], user="alice", timeout=20)
    assert h.id == "h-b"
    assert h.status().user == "b"
    assert h.done().state == "FINISHED"
    assert (a.calls, b.calls) == (1, 3)  # the standby was asked once, then remembered as not the one


def test_a_failover_back(servers):
    a, b = servers("a", "active"), servers("b", "standby")
    h = newtricks.hint("/hot", readers=4, addr="%s,%s" % (a.addr, b.addr), user="alice", timeout=20)
    a.mode, b.mode = "standby", "active"
    assert h.status().user == "b"
    h.done()


def test_past_an_unreachable_address(servers):
    b = servers("b", "active")
    with newtricks.hint("/hot", readers=4, addr=[refused_addr(), b.addr], user="alice", timeout=20) as h:
        assert h.id == "h-b"


def test_create_is_not_sent_again_after_a_break_in_flight(servers):
    a, b = servers("a", "broken"), servers("b", "active")
    with pytest.raises(errors.UnavailableError, match="Socket closed"):
        newtricks.hint("/hot", readers=4, addr=[a.addr, b.addr], user="alice", timeout=5)
    assert b.calls == 0
    # A read is: Status goes on to b.
    ch = _failover.Channels([a.addr, b.addr])
    try:
        st = ch.unary("/newtricks.v1.Hints/Status", hotspot_pb2.HintStatusRequest(hint_id="x"), hotspot_pb2.HintStatus, 10)
        assert st.user == "b"
    finally:
        ch.close()


def test_namenode_standby_exception_retries_only_reads(servers):
    a, b = servers("a", "nn-standby"), servers("b", "active")
    with pytest.raises(errors.FailedPreconditionError, match="StandbyException"):
        newtricks.hint("/hot", readers=4, addr=[a.addr, b.addr], user="alice", timeout=5)
    assert b.calls == 0
    ch = _failover.Channels([a.addr, b.addr])
    try:
        st = ch.unary("/newtricks.v1.Hints/Status", hotspot_pb2.HintStatusRequest(hint_id="x"), hotspot_pb2.HintStatus, 10)
        assert st.user == "b"
    finally:
        ch.close()


def test_bounded_with_no_active(servers, monkeypatch):
    a, b = servers("a", "standby"), servers("b", "standby")
    slept = []
    ch = _failover.Channels([a.addr, b.addr])
    ch.sleep = slept.append
    try:
        with pytest.raises(grpc.RpcError) as ei:
            ch.unary("/newtricks.v1.Hints/Status", hotspot_pb2.HintStatusRequest(hint_id="x"), hotspot_pb2.HintStatus, 600)
        assert ei.value.details().startswith("standby:")
    finally:
        ch.close()
    assert a.calls + b.calls == _failover.MAX_ATTEMPTS
    assert ei.value.details().endswith("(after %d attempts over %s,%s)" % (_failover.MAX_ATTEMPTS, a.addr, b.addr))
    # no sleep in the first pass, then BASE*2^k capped at MAX_SLEEP, +-50%
    assert len(slept) == _failover.MAX_ATTEMPTS - 2
    for k, d in enumerate(slept):
        w = min(_failover.MAX_SLEEP, _failover.BASE * 2 ** k)
        assert w / 2 <= d <= w * 1.5, (k, d, slept)


def test_nothing_listening_gives_up_after_three_passes():
    ch = _failover.Channels([refused_addr(), refused_addr()])
    slept = []
    ch.sleep = slept.append
    try:
        with pytest.raises(grpc.RpcError) as ei:
            ch.unary("/newtricks.v1.Hints/Status", hotspot_pb2.HintStatusRequest(hint_id="x"), hotspot_pb2.HintStatus, 600)
    finally:
        ch.close()
    assert ei.value.code() == grpc.StatusCode.UNAVAILABLE and "(after 6 attempts" in ei.value.details(), ei.value.details()
    assert len(slept) == 4


def test_mirror_wait_fails_over_at_stream_start(servers):
    a, b = servers("a", "standby"), servers("b", "active")
    seen = []
    cp = newtricks.mirror.wait("j", 7, addr=[refused_addr(), a.addr, b.addr], user="alice", timeout=20, progress=seen.append)
    assert cp.committed and cp.owner == "b" and cp.step == 7
    assert [c.files_done for c in seen] == [0, 1, 2]


def test_addresses():
    assert _failover.split_addrs(" a:1, b:2,,a:1") == ["a:1", "b:2"]
    assert _failover.split_addrs(["a:1", "b:2,c:3"]) == ["a:1", "b:2", "c:3"]
    for bad in ("", "a", "a:0", "a:1,b", ":1", 5, ["a:1", 2]):
        with pytest.raises(errors.ConfigError):
            _failover.split_addrs(bad)
    with pytest.raises(errors.ConfigError, match="not both"):
        newtricks.hint("/hot", readers=4, addr="a:1", nameservice="ns")


def test_nameservice_from_hdfs_site(tmp_path, servers):
    b = servers("b", "active")
    port = b.addr.rsplit(":", 1)[1]
    (tmp_path / "hdfs-site.xml").write_text("""<configuration>
<property><name>dfs.nameservices</name><value>prod</value></property>
<property><name>dfs.ha.namenodes.prod</name><value>nn1,nn2</value></property>
<property><name>dfs.namenode.rpc-address.prod.nn1</name><value>127.0.0.2:8020</value></property>
<property><name>dfs.namenode.rpc-address.prod.nn2</name><value>127.0.0.1:8020</value></property>
<property><name>newtricks.namenode.ext.api.address.prod.nn1</name><value>%s</value></property>
<property><name>newtricks.namenode.ext.api.address</name><value>:%s</value></property>
</configuration>""" % (refused_addr(), port))
    assert _failover.resolve(None, "prod", str(tmp_path))[1] == b.addr
    with newtricks.hint("/hot", readers=4, nameservice="prod", conf_dir=str(tmp_path), user="alice", timeout=20) as h:
        assert h.id == "h-b"
    with pytest.raises(errors.ConfigError, match="not in dfs.nameservices"):
        _failover.resolve(None, "other", str(tmp_path))
    with pytest.raises(errors.ConfigError, match="hdfs-site.xml"):
        _failover.resolve(None, "prod", os.path.join(str(tmp_path), "none"))
