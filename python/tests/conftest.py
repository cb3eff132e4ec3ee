"""Fixtures for the newtricks Python tests. Real parts only: a real HDFS cluster with the
newtricks hooks (started with the `newtricks cluster up` CLI that `make build` puts in
$NEWTRICKS_BIN), libnewtricks built from this tree, and the generated test media. A missing
part fails the test that needs it; nothing is skipped. `make python-test` sets the
environment."""

from __future__ import annotations

import http.client
import io
import json
import os
import subprocess
import tarfile
import time
import urllib.parse

import pytest


def need_env(name: str) -> str:
    v = os.environ.get(name)
    if not v:
        pytest.fail("$%s is not set: run the tests with `make python-test`" % name)
    return v


def need_file(path: str) -> str:
    if not os.path.exists(path):
        pytest.fail("%s is missing: run the tests with `make python-test`" % path)
    return path


class WebHDFS:
    """The few WebHDFS calls the tests need, against the NameNode's HTTP port."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port

    def _req(self, method, path, op, user, body=None, host=None, port=None, **params):
        q = dict(params, op=op, **{"user.name": user})
        url = "/webhdfs/v1" + urllib.parse.quote(path) + "?" + urllib.parse.urlencode(q)
        c = http.client.HTTPConnection(host or self.host, port or self.port, timeout=60)
        try:
            c.request(method, url, body=body)
            r = c.getresponse()
            return r.status, r.getheader("Location"), r.read()
        finally:
            c.close()

    def _ok(self, what, status, body, want=(200,)):
        if status not in want:
            raise AssertionError("webhdfs %s: HTTP %d %s" % (what, status, body[:300]))
        return json.loads(body) if body else None

    def mkdirs(self, path, user):
        s, _, b = self._req("PUT", path, "MKDIRS", user)
        self._ok("mkdirs " + path, s, b)

    def chown(self, path, user, owner):
        s, _, b = self._req("PUT", path, "SETOWNER", user, owner=owner, group=owner)
        self._ok("setowner " + path, s, b)

    def chmod(self, path, user, mode):
        s, _, b = self._req("PUT", path, "SETPERMISSION", user, permission=mode)
        self._ok("setpermission " + path, s, b)

    def create(self, path, user, data: bytes, replication=1):
        s, loc, b = self._req("PUT", path, "CREATE", user, overwrite="true", replication=replication,
                              blocksize=1 << 20)
        if s != 307 or not loc:
            raise AssertionError("webhdfs create %s: HTTP %d %s" % (path, s, b[:300]))
        u = urllib.parse.urlsplit(loc)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        try:
            c.request("PUT", u.path + "?" + u.query, body=data)
            r = c.getresponse()
            body = r.read()
            if r.status != 201:
                raise AssertionError("webhdfs create %s at %s: HTTP %d %s" % (path, loc, r.status, body[:300]))
        finally:
            c.close()

    def read(self, path, user) -> bytes:
        s, loc, b = self._req("GET", path, "OPEN", user)
        if s != 307 or not loc:
            raise AssertionError("webhdfs open %s: HTTP %d %s" % (path, s, b[:300]))
        u = urllib.parse.urlsplit(loc)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        try:
            c.request("GET", u.path + "?" + u.query)
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                raise AssertionError("webhdfs read %s: HTTP %d" % (path, r.status))
            return body
        finally:
            c.close()

    def replication(self, path, user) -> int:
        s, _, b = self._req("GET", path, "GETFILESTATUS", user)
        return self._ok("getfilestatus " + path, s, b)["FileStatus"]["replication"]


class Cluster:
    def __init__(self, name, base, state, ext):
        self.name, self.base = name, base
        self.namenode_ext = ext["NameNodeAPI"]
        self.datanode_ext = list(ext["DataNodeAPI"])
        self.http_port = state["namenode"]["namenode_ports"]["http"]
        self.namenode = "127.0.0.1:%d" % state["namenode"]["namenode_ports"]["rpc"]
        self.webhdfs = WebHDFS("127.0.0.1", self.http_port)
        self.superuser = os.environ.get("USER") or __import__("getpass").getuser()


MIRROR_CORE = {
    # The mirror's service user may act as checkpoint owners from loopback; test users have
    # static groups (they are not OS users).
    "hadoop.proxyuser.mirror.hosts": "127.0.0.1",
    "hadoop.proxyuser.mirror.users": "*",
    "hadoop.user.group.static.mapping.overrides": "alice=alice;bob=bob;dr.who=;",
}


def _up(cli, name, base, args):
    r = subprocess.run([cli, "cluster", "up", "--name", name, "--dir", base, "--timeout", "180s"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        pytest.fail("newtricks cluster up %s failed (rc %d):\n%s" % (name, r.returncode, r.stdout[-4000:]))
    with open(os.path.join(base, "state.json")) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """dc-a: one NameNode and 3 DataNodes with the newtricks hooks, default replication 1, 1 MiB
    blocks (samples span blocks), hints allowed under /hot and /example, offload never
    shedding, checkpoints under /ckpt/{job}/step_{step} (marker _SUCCESS) mirrored to dc-b, a
    plain one-DataNode cluster (``cluster.dcb``). Both stopped and removed at the end."""
    bin_dir = need_env("NEWTRICKS_BIN")
    cli = need_file(os.path.join(bin_dir, "newtricks"))
    jar = need_file(need_env("NEWTRICKS_HOOKS_JAR"))
    need_env("NEWTRICKS_HADOOP_LIB")
    name = "pytest-%d" % os.getpid()
    base = str(tmp_path_factory.mktemp("cluster"))
    base_b = str(tmp_path_factory.mktemp("cluster-b"))
    core = [a for k, v in MIRROR_CORE.items() for a in ("--core", "%s=%s" % (k, v))]
    t0 = time.monotonic()
    started = []
    try:
        started.append((name + "-b", base_b))
        st_b = _up(cli, name + "-b", base_b, ["--datanodes", "1", "--conf", "dfs.replication=1"] + core)
        nn_b = "127.0.0.1:%d" % st_b["namenode"]["namenode_ports"]["rpc"]
        http_b = st_b["namenode"]["namenode_ports"]["http"]
        conf = {
            "dfs.replication": "1",
            "dfs.blocksize": "1048576",
            "newtricks.hotspot.allowed-prefixes": "/hot,/example",
            "newtricks.hotspot.poll-interval": "300ms",
            "newtricks.datanode.ext.offload.cpu.high": "1",
            "newtricks.datanode.ext.offload.cpu.low": "1",
            "newtricks.mirror.rules": "ck",
            "newtricks.mirror.dest.namenode": nn_b,
            "newtricks.mirror.dest.http": "127.0.0.1:%d" % http_b,
            "newtricks.mirror.proxy-user": "mirror",
            "newtricks.mirror.retry.interval": "200ms",
            "newtricks.mirror.rule.ck.source": "/ckpt/{job}/step_{step}",
            "newtricks.mirror.rule.ck.completion": "marker",
            "newtricks.mirror.rule.ck.marker": "_SUCCESS",
        }
        started.append((name, base))
        state = _up(cli, name, base, ["--datanodes", "3", "--jar", jar] + core +
                    [a for k, v in conf.items() for a in ("--conf", "%s=%s" % (k, v))])
        with open(os.path.join(base, "ext.json")) as f:
            ext = json.load(f)
        c = Cluster(name, base, state, ext)
        c.cli = cli
        c.dcb = WebHDFS("127.0.0.1", http_b)
        print("clusters %s and %s-b up in %.1fs, namenode-ext %s" % (name, name, time.monotonic() - t0, c.namenode_ext))
        yield c
    finally:
        for n, b in reversed(started):
            subprocess.run([cli, "cluster", "down", "--name", n, "--dir", b, "--purge"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def media():
    d = need_env("NEWTRICKS_XFORM_MEDIA")
    need_file(os.path.join(d, "images", "photo_q90_420.jpg"))
    need_file(os.path.join(d, "video", "tiny.mp4"))
    return d


@pytest.fixture(scope="session")
def refrun():
    return need_file(need_env("NEWTRICKS_XFORM_REFRUN"))


IMAGES = ["photo_q90_420.jpg", "baseline_444.jpg", "progressive.jpg", "gray.jpg", "odd_333x251.jpg",
          "large_1024.jpg", "rgb8.png", "lossy.webp"]


def schedule(dataset="/data/img", steps=6, world=2, batch=4, graph="imagenet"):
    """A one-source schedule over an indexed dataset of the session cluster."""
    import xformcases

    return {"version": 1, "name": "pytest", "seed": "11", "globalBatch": batch, "worldSize": world,
            "maxSteps": str(steps),
            "sources": [{"name": "img", "dataset": dataset, "weight": 1, "graph": xformcases.GRAPHS[graph]}]}


@pytest.fixture(scope="session")
def data(cluster, media):
    """/data/img: a WebDataset tar shard of 5 images, 3 single files and one truncated JPEG
    whose header still parses (it fails only when decoded); /data/secret readable by alice only.
    Both indexed by the real `newtricks dataset index`."""
    fs, su = cluster.webhdfs, cluster.superuser
    fs.mkdirs("/data", su)
    blobs = {n: open(os.path.join(media, "images", n), "rb").read() for n in IMAGES}
    tb = io.BytesIO()
    with tarfile.open(fileobj=tb, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i, n in enumerate(IMAGES[:5]):
            ti = tarfile.TarInfo("s%03d.%s" % (i, n.rsplit(".", 1)[1]))
            ti.size = len(blobs[n])
            tf.addfile(ti, io.BytesIO(blobs[n]))
    fs.mkdirs("/data/img", su)
    fs.create("/data/img/shard-000.tar", su, tb.getvalue())
    for n in IMAGES[5:]:
        fs.create("/data/img/" + n, su, blobs[n])
    big = blobs["large_1024.jpg"]
    fs.create("/data/img/broken.jpg", su, big[: len(big) // 3])
    fs.mkdirs("/data/secret", su)
    fs.create("/data/secret/a.jpg", su, blobs["gray.jpg"])
    fs.create("/data/secret/b.jpg", su, blobs["progressive.jpg"])
    for d in ("/data/img", "/data/secret"):
        r = subprocess.run([cluster.cli, "dataset", "index", "--namenode", cluster.namenode, "--user", su, d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        assert r.returncode == 0, "newtricks dataset index %s:\n%s" % (d, r.stdout)
    fs.chown("/data/secret", su, "alice")
    fs.chmod("/data/secret", su, "700")
    return cluster




# Shards written by the webdataset package (tests/test_samples.py, tests/test_torch.py).
N_SHARDS, PER_SHARD = 2, 7
IMAGES_WDS = ["photo_q90_420.jpg", "baseline_444.jpg", "progressive.jpg", "gray.jpg", "odd_333x251.jpg"]

# An image and a clip in one sample: "input" is the image (the first media member), the clip
# its own input ("input:mp4").
VIEWS_GRAPH = {"version": 1, "seed": "5", "nodes": [
    {"id": "img", "op": "decode_image", "input": "input"},
    {"id": "small", "op": "resize", "input": "img", "params": {"size": [32, 32]}},
    {"id": "t", "op": "to_tensor", "input": "small", "params": {"layout": "CHW", "dtype": "uint8"}},
    {"id": "clip", "op": "decode_video", "input": "input:mp4",
     "params": {"mode": "random_segment", "num": 2, "stride": 1, "width": 32, "height": 24}}],
    "outputs": ["t", "clip"]}


def caption(i):
    return "a photo \u2014 number %d, caf\u00e9" % i


def write_shards(local, media, views=False):
    import webdataset as wds

    """TarWriter shards: every sample a jpg, its label (cls), caption (txt) and metadata
    (json); with views also a clip (mp4). Returns the local shard paths."""
    os.makedirs(local, exist_ok=True)
    blobs = [open(os.path.join(media, "images", n), "rb").read() for n in IMAGES_WDS]
    clip = open(os.path.join(media, "video", "tiny.mp4"), "rb").read()
    paths, i = [], 0
    for s in range(N_SHARDS):
        p = os.path.join(local, "shard-%03d.tar" % s)
        with wds.TarWriter(p) as w:
            for j in range(PER_SHARD):
                smp = {"__key__": "s%d/%04d" % (s, j), "jpg": blobs[i % len(blobs)], "cls": i % 10,
                       "txt": caption(i), "json": {"i": i, "shard": s, "tags": ["x", "y"], "w": 0.25}}
                if views:
                    smp["mp4"] = clip
                w.write(smp)
                i += 1
        paths.append(p)
    return paths


def put_and_index(c, local_paths, d):
    fs, su = c.webhdfs, c.superuser
    fs.mkdirs(d, su)
    for p in local_paths:
        fs.create(d + "/" + os.path.basename(p), su, open(p, "rb").read())
    r = subprocess.run([c.cli, "dataset", "index", "--namenode", c.namenode, "--user", su, d],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert r.returncode == 0, r.stdout


@pytest.fixture(scope="session")
def wdsdata(cluster, media, tmp_path_factory):
    base = tmp_path_factory.mktemp("wds")
    plain = write_shards(str(base / "plain"), media)
    views = write_shards(str(base / "views"), media, views=True)
    put_and_index(cluster, plain, "/data/wds")
    put_and_index(cluster, views, "/data/views")
    cluster.wds_local, cluster.views_local = plain, views
    return cluster


