"""newtricks.auth on a Kerberized cluster (`newtricks cluster up --secure`: a MiniKdc, TLS on
the APIs, SPNEGO on WebHDFS): hints as alice with a Kerberos ticket from her keytab and with
her HDFS delegation token; no credentials, plaintext and impersonation fail. The SPNEGO tokens
come from libnewtricks (the Go client code), also for the WebHDFS set-up calls. newtricks.Reader
with auth= trains alice through offload on her 0700 dataset (the bytes of the local path),
refuses bob, and takes an Auth pickled into another process."""

from __future__ import annotations

import http.client
import io
import json
import os
import pickle
import ssl
import subprocess
import sys
import tarfile
import time
import urllib.parse

import grpc
import numpy as np
import pytest

import newtricks
from newtricks import errors
from newtricks.auth import Auth
from newtricks.v1 import hotspot_pb2, hotspot_pb2_grpc

from conftest import IMAGES, need_env, need_file, schedule

SPN = "newtricks/localhost"


class SecureCluster:
    def __init__(self, base, state, ext):
        self.base = base
        self.api = ext["NameNodeAPI"]
        self.ca = need_file(os.path.join(base, "tls", "ca.pem"))
        self.krb5 = need_file(os.path.join(base, "kdc", "krb5.conf"))
        self.http = "127.0.0.1:%d" % state["namenode"]["namenode_ports"]["http"]
        self.namenode = "127.0.0.1:%d" % state["namenode"]["namenode_ports"]["rpc"]
        self.cli = None

    def datanode_https(self, info_port):
        c = http.client.HTTPConnection(self.http, timeout=30)
        try:
            c.request("GET", "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
            beans = json.loads(c.getresponse().read())["beans"]
        finally:
            c.close()
        for node in json.loads(beans[0]["LiveNodes"]).values():
            if node.get("infoAddr", "").endswith(":%d" % info_port) and node.get("infoSecureAddr"):
                host, _, port = node["infoSecureAddr"].rpartition(":")
                return host, int(port)
        raise AssertionError("no live DataNode with info port %d in the NameNode's JMX: %s" % (info_port, beans[0]["LiveNodes"]))

    def keytab(self, principal):
        return need_file(os.path.join(self.base, "kdc", "keytabs", principal.replace("/", "_") + ".keytab"))

    def kerberos(self, principal, spn=SPN):
        return Auth.kerberos(self.ca, spn, keytab=self.keytab(principal), principal=principal, krb5_conf=self.krb5)

    def webhdfs(self, principal, method, path, op, body=None, **params):
        """WebHDFS as principal: SPNEGO to the NameNode (HTTP/localhost), then the DataNode's
        HTTPS redirect (a delegation token in the URL) for CREATE."""
        a = self.kerberos(principal, spn="HTTP/localhost")
        try:
            hdr = a._plugin.header()
        finally:
            a.close()
        q = urllib.parse.urlencode(dict(params, op=op))
        c = http.client.HTTPConnection(self.http, timeout=60)
        try:
            c.request(method, "/webhdfs/v1" + urllib.parse.quote(path) + "?" + q, headers={"Authorization": hdr})
            r = c.getresponse()
            status, loc, data = r.status, r.getheader("Location"), r.read()
        finally:
            c.close()
        if status == 307 and loc:
            u = urllib.parse.urlsplit(loc)
            # The NameNode (plain HTTP) redirects to the DataNode's HTTP port, but the DataNodes
            # serve HTTPS only: their secure port is in the NameNode's JMX (not behind SPNEGO).
            host, port = self.datanode_https(u.port)
            # The DataNodes' keystore is the harness's own (keytool, self-signed).
            d = http.client.HTTPSConnection(host, port, timeout=60, context=ssl._create_unverified_context())
            try:
                d.request(method, u.path + "?" + u.query, body=body)
                r = d.getresponse()
                status, data = r.status, r.read()
            finally:
                d.close()
        if status not in (200, 201):
            raise AssertionError("webhdfs %s %s as %s: HTTP %d %s" % (op, path, principal, status, data[:300]))
        return json.loads(data) if data else None


@pytest.fixture(scope="module")
def secure():
    bin_dir = need_env("NEWTRICKS_BIN")
    cli = need_file(os.path.join(bin_dir, "newtricks"))
    jar = need_file(need_env("NEWTRICKS_HOOKS_JAR"))
    need_env("NEWTRICKS_HADOOP_LIB")
    need_env("NEWTRICKS_MINIKDC_LIB")
    import tempfile
    base = tempfile.mkdtemp(prefix="pytest-secure-")
    name = "pytest-secure-%d" % os.getpid()
    conf = {"dfs.replication": "1", "dfs.blocksize": "1048576", "newtricks.hotspot.allowed-prefixes": "/hot",
            "newtricks.hotspot.poll-interval": "300ms",
            # offload never sheds to raw on this busy machine: the reader tests count offloaded samples
            "newtricks.datanode.ext.offload.cpu.high": "1", "newtricks.datanode.ext.offload.cpu.low": "1"}
    args = [cli, "cluster", "up", "--secure", "--name", name, "--dir", base, "--timeout", "240s", "--datanodes", "3",
            "--jar", jar] + [a for k, v in conf.items() for a in ("--conf", "%s=%s" % (k, v))]
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            pytest.fail("newtricks cluster up --secure failed (rc %d):\n%s" % (r.returncode, r.stdout[-4000:]))
        with open(os.path.join(base, "state.json")) as f:
            state = json.load(f)
        with open(os.path.join(base, "ext.json")) as f:
            ext = json.load(f)
        s = SecureCluster(base, state, ext)
        s.cli = cli
        s.webhdfs("hdfs/localhost", "PUT", "/hot", "MKDIRS")
        s.webhdfs("hdfs/localhost", "PUT", "/hot", "SETOWNER", owner="alice", group="alice")
        s.webhdfs("alice", "PUT", "/hot/a", "CREATE", body=os.urandom(256 << 10), overwrite="true", replication=1)
        yield s
    finally:
        subprocess.run([cli, "cluster", "down", "--name", name, "--dir", base, "--purge"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def replication(s, path):
    return s.webhdfs("alice", "GET", path, "GETFILESTATUS")["FileStatus"]["replication"]


def wait_replication(s, path, want, within=30):
    end = time.monotonic() + within
    while True:
        r = replication(s, path)
        if r == want or time.monotonic() > end:
            return r
        time.sleep(0.3)


def test_kerberos_from_a_keytab(secure):
    auth = secure.kerberos("alice")
    try:
        assert auth.principal.startswith("alice@")
        with newtricks.hint("/hot/a", readers=8, window=60, addr=secure.api, auth=auth) as h:
            assert h.plan.files and h.plan.files[0].path == "/hot/a", h.plan
            assert h.status().user == "alice"  # auth_to_local of the cluster, not a claimed name
            assert replication(secure, "/hot/a") > 1
        assert wait_replication(secure, "/hot/a", 1) == 1
    finally:
        auth.close()


def test_delegation_token(secure):
    tok = secure.webhdfs("alice", "GET", "/", "GETDELEGATIONTOKEN", renewer="alice")["Token"]["urlString"]
    auth = Auth.token(secure.ca, tok)
    with newtricks.hint("/hot/a", readers=8, window=60, addr=secure.api, auth=auth) as h:
        assert h.status().user == "alice"
        assert replication(secure, "/hot/a") > 1
    assert wait_replication(secure, "/hot/a", 1) == 1


def test_without_credentials(secure):
    # Plaintext to the TLS listener: no answer.
    with pytest.raises(errors.UnavailableError):
        newtricks.hint("/hot/a", readers=8, addr=secure.api, user="alice", timeout=3)
    # TLS but no credential: UNAUTHENTICATED.
    with open(secure.ca, "rb") as f:
        ch = grpc.secure_channel(secure.api, grpc.ssl_channel_credentials(root_certificates=f.read()))
    try:
        with pytest.raises(grpc.RpcError) as ei:
            hotspot_pb2_grpc.HintsStub(ch).List(hotspot_pb2.ListHintsRequest(user="alice"), timeout=10)
        assert ei.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        ch.close()


def test_no_impersonation(secure):
    bob = secure.kerberos("bob")
    try:
        with pytest.raises(errors.PermissionDeniedError):
            newtricks.hint("/hot/a", readers=8, addr=secure.api, user="alice", auth=bob, timeout=10)
        # As himself, bob may not change alice's file: nothing to boost.
        with pytest.raises(errors.PermissionDeniedError):
            newtricks.hint("/hot/a", readers=8, addr=secure.api, auth=bob, timeout=10)
    finally:
        bob.close()
    assert replication(secure, "/hot/a") == 1


def test_bad_auth_arguments(secure):
    with pytest.raises(errors.ConfigError, match="ca must be"):
        Auth.token("/nonexistent.pem", "x")
    with pytest.raises(errors.ConfigError, match="keytab"):
        Auth.kerberos(secure.ca, SPN, keytab="/nonexistent.keytab", principal="alice", krb5_conf=secure.krb5)


@pytest.fixture(scope="module")
def alice_ds(secure):
    """/alice/ds: alice's 0700 dataset (a tar shard of labelled images and two single images),
    written with WebHDFS as alice and indexed by `newtricks dataset index` with her keytab."""
    media = need_env("NEWTRICKS_XFORM_MEDIA")
    s = secure
    s.webhdfs("hdfs/localhost", "PUT", "/alice", "MKDIRS")
    s.webhdfs("hdfs/localhost", "PUT", "/alice", "SETOWNER", owner="alice", group="alice")
    s.webhdfs("hdfs/localhost", "PUT", "/alice", "SETPERMISSION", permission="700")
    blobs = {n: open(os.path.join(media, "images", n), "rb").read() for n in IMAGES}
    tb = io.BytesIO()
    with tarfile.open(fileobj=tb, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i, n in enumerate(IMAGES[:6]):
            for name, data in (("s%03d.%s" % (i, n.rsplit(".", 1)[1]), blobs[n]), ("s%03d.cls" % i, b"%d" % (i % 3))):
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
    s.webhdfs("alice", "PUT", "/alice/ds/shard-000.tar", "CREATE", body=tb.getvalue(), overwrite="true", replication=1)
    for n in IMAGES[6:]:
        s.webhdfs("alice", "PUT", "/alice/ds/" + n, "CREATE", body=blobs[n], overwrite="true", replication=1)
    r = subprocess.run([s.cli, "dataset", "index", "--namenode", s.namenode, "--keytab", s.keytab("alice"),
                        "--principal", "alice", "--krb5-conf", s.krb5, "/alice/ds"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert r.returncode == 0, "newtricks dataset index /alice/ds with alice's keytab:\n%s" % r.stdout
    return s


def _bytes(steps):
    return [[(x.key, x.epoch, x.error and str(x.error), [bytes(np.ascontiguousarray(o).view(np.uint8)) for o in x.outputs],
              x.members) for x in st.samples] for st in steps]


def _read(s, auth, **kw):
    spec = schedule(dataset="/alice/ds", steps=4, world=1, batch=4)
    with newtricks.Reader(spec, namenode=s.namenode, namenode_ext=s.api, auth=auth, max_wait=30, open_timeout=90, **kw) as r:
        steps = list(r)
        return steps, r.stats()


def test_reader_trains_alice_through_offload(alice_ds):
    s = alice_ds
    auth = s.kerberos("alice")
    try:
        got, stats = _read(s, auth)
        want, local = _read(s, auth, offload=False)
    finally:
        auth.close()
    print("alice's Reader with auth: offloaded_fraction %.2f, offloaded %d, raw %d, local %d" % (
        stats["offloaded_fraction"], stats["offloaded"], stats["raw"], stats["local"]))
    assert stats["offloaded_fraction"] > 0 and stats["errors"] == 0 and not stats["node_error"], stats
    assert local["offloaded_fraction"] == 0 and local["local"] > 0, local
    assert _bytes(got) == _bytes(want)  # the DataNodes' tensors are the local transform's bytes
    assert any(x.meta.get("cls") is not None for st in got for x in st.samples)  # labels travel too


def test_reader_refuses_bob_and_the_unauthenticated(alice_ds):
    s = alice_ds
    bob = s.kerberos("bob")
    try:
        with pytest.raises(errors.NewtricksError, match="(?i)permission denied"):
            _read(s, bob)
    finally:
        bob.close()
    # A delegation token serves the APIs, but not the reader's HDFS client: a clear error.
    tok = s.webhdfs("alice", "GET", "/", "GETDELEGATIONTOKEN", renewer="alice")["Token"]["urlString"]
    with pytest.raises(errors.ConfigError, match="delegation token"):
        _read(s, Auth.token(s.ca, tok))
    # No credentials: a name typed under simple authentication is not enough on this cluster.
    spec = schedule(dataset="/alice/ds", steps=4, world=1, batch=4)
    t0 = time.monotonic()
    with pytest.raises(errors.NewtricksError):
        newtricks.Reader(spec, namenode=s.namenode, namenode_ext=s.api, user="alice", open_timeout=30)
    assert time.monotonic() - t0 < 60


def test_reader_auth_pickles_as_its_config(alice_ds):
    # What a spawned DataLoader worker (newtricks.torch.StepDataset) receives: the Auth's
    # configuration, which logs in again in that process; no ticket crosses.
    s = alice_ds
    auth = s.kerberos("alice")
    try:
        blob = pickle.dumps(auth)
        again = pickle.loads(blob)
        assert again.config == auth.config and b"krbtgt" not in blob
        got, stats = _read(s, again)
        want, _ = _read(s, auth, offload=False)
    finally:
        auth.close()
    assert stats["offloaded_fraction"] > 0, stats
    assert _bytes(got) == _bytes(want)
    with pytest.raises(errors.ConfigError, match="auth must be"):
        newtricks.Reader(schedule(dataset="/alice/ds", world=1), namenode=s.namenode, namenode_ext=s.api, auth="alice")


def test_auth_pickles_without_a_login(tmp_path):
    # No cluster: an Auth made without logging in (a parent that forks DataLoader workers) and
    # its pickled copy carry the same configuration, paths and names only.
    ca = tmp_path / "ca.pem"
    ca.write_text("not parsed by Python")
    a = Auth.kerberos(str(ca), SPN, keytab=str(tmp_path / "alice.keytab"), principal="alice", krb5_conf="/k/krb5.conf",
                      hdfs_spn="hdfs/_HOST", login=False)
    b = pickle.loads(pickle.dumps(a))
    assert b.config == a.config and b.config["hdfs_spn"] == "hdfs/_HOST" and b.config["ca"] == str(ca)
    assert a.principal == "" and b.principal == ""
    with pytest.raises(errors.ConfigError, match="data_transfer_protection"):
        Auth.kerberos(str(ca), SPN, keytab="k", principal="alice", data_transfer_protection="secret", login=False)
    with pytest.raises(errors.ConfigError, match="hdfs_spn"):
        Auth.kerberos(str(ca), SPN, keytab="k", principal="alice", hdfs_spn="hdfs", login=False)
    t = pickle.loads(pickle.dumps(Auth.token(str(ca), "tok")))
    assert t.config == {"ca": str(ca), "token": "tok"}


WORKERS_SCRIPT = """
import json, multiprocessing as mp, pickle, sys
import newtricks, newtricks.transforms as nt
from newtricks.auth import Auth

def read(auth, args):
    with newtricks.Reader(args["spec"], namenode=args["nn"], namenode_ext=args["ext"], auth=auth, max_wait=30,
                          open_timeout=90) as r:
        keys = [s.key for st in r for s in st.ok]
        return {"keys": keys, "stats": r.stats(), "loaded": nt.loaded()}

if __name__ == "__main__":
    args = json.loads(sys.argv[1])
    # As a DataLoader's parent: the Auth is made without logging in, so this process never
    # loads libnewtricks and may fork; a spawned worker gets it pickled (its configuration).
    auth = Auth.kerberos(args["ca"], "newtricks/_HOST", keytab=args["keytab"], principal="alice",
                         krb5_conf=args["krb5"], login=False)
    out = {}
    for ctx in ("fork", "spawn"):
        with mp.get_context(ctx).Pool(1) as p:
            out[ctx] = p.apply(read, (auth, args))
    out["parent_loaded"] = nt.loaded()
    print(json.dumps(out))
"""


def test_reader_auth_in_forked_and_spawned_workers(alice_ds, tmp_path):
    # What newtricks.torch.StepDataset's DataLoader workers do with auth=: each opens its own
    # Reader; the parent, with login=False, never loads libnewtricks.
    s = alice_ds
    script = tmp_path / "workers.py"
    script.write_text(WORKERS_SCRIPT)
    args = {"spec": schedule(dataset="/alice/ds", steps=4, world=1, batch=4), "nn": s.namenode, "ext": s.api,
            "ca": s.ca, "keytab": s.keytab("alice"), "krb5": s.krb5}
    r = subprocess.run([sys.executable, str(script), json.dumps(args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["parent_loaded"] is False
    for ctx in ("fork", "spawn"):
        w = res[ctx]
        assert w["loaded"] and len(w["keys"]) == 16, (ctx, w)
        assert w["stats"]["offloaded_fraction"] > 0, (ctx, w["stats"])
    assert res["fork"]["keys"] == res["spawn"]["keys"]
