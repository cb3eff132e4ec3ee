"""The committed golden digests of xformgraph (package xformgraph/golden), checked from Python:
every case run through libnewtricks gives the recorded digest. The digest is recomputed here
from the frame format (each frame re-encoded without its domain string, SHA-256 of them all),
independently of the Go code that wrote the goldens."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess

import pytest

from newtricks import frames, transforms

INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "xformgraph", "golden", "testdata", "inputs")


def digest(buf) -> str:
    """golden.Digest: every frame as written with an empty domain (version 2, D = 0)."""
    h = hashlib.sha256()
    n = 0
    for f in frames.parse(buf):
        n += 1
        mv = f.raw
        _, _, kind, dtype, layout, rank, _, _, crc, plen = frames.HEADER.unpack_from(mv, 0)
        dims = bytes(mv[frames.HEADER.size:frames.HEADER.size + 8 * rank])
        h.update(frames.HEADER.pack(frames.MAGIC, 2, kind, dtype, layout, rank, 0, 0, crc, plen) + dims)
        h.update(f.payload if f.kind == "tensor" else f.data)
    assert n > 0
    return h.hexdigest()


@pytest.fixture(scope="module")
def cases(refrun):
    r = subprocess.run([refrun, "-golden"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cs = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(cs) >= 50
    return cs


def test_golden_digests_from_python(cases):
    dom = transforms.domain()
    assert dom == cases[0]["recorded_domain"], "this build's domain differs from the goldens': %s vs %s" % (
        dom, cases[0]["recorded_domain"])
    graphs = {}
    bad = []
    for c in cases:
        spec = json.dumps(c["graph"], sort_keys=True)
        g = graphs.setdefault(spec, transforms.Graph(c["graph"]))
        with open(os.path.join(INPUTS, c["sample"]), "rb") as f:
            data = f.read()
        got = digest(g.run_frames(data, key=c["key"], epoch=c["epoch"]))
        if got != c["digest"]:
            bad.append("%s: %s != golden %s" % (c["id"], got, c["digest"]))
    assert not bad, "\n".join(bad)


def test_digest_notices_a_changed_byte(cases):
    c = cases[0]
    g = transforms.Graph(c["graph"])
    with open(os.path.join(INPUTS, c["sample"]), "rb") as f:
        out = bytearray(g.run_frames(f.read(), key=c["key"], epoch=c["epoch"]))
    assert digest(out) == c["digest"]
    out[-1] ^= 1  # the last payload byte; fix the CRC so the frame still parses
    f0 = frames.parse(out, verify=False)[-1]
    import zlib
    off = len(out) - len(f0.raw)
    struct.pack_into("<I", out, off + 12, zlib.crc32(f0.payload))
    assert digest(out) != c["digest"]
