"""newtricks.transforms: libnewtricks from Python gives the same bytes as Go, fails clearly on
bad graphs and samples, survives fork and spawn workers, and coexists with PyAV's FFmpeg."""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import newtricks
from newtricks import frames, transforms
from newtricks.errors import FrameError, GraphError, SampleError

import xformcases

HERE = os.path.dirname(os.path.abspath(__file__))


def run_py(script: str, timeout=300) -> dict:
    """Runs script in a fresh interpreter (no library loaded yet) and returns its last stdout
    line as JSON."""
    env = dict(os.environ, PYTHONPATH=HERE)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, "child failed (rc %d):\n%s\n%s" % (r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def go(refrun, media, tmp_path_factory):
    d = str(tmp_path_factory.mktemp("specs"))
    return {g: xformcases.go_digests(refrun, media, g, d) for g in xformcases.GRAPHS}


@pytest.mark.parametrize("graph", sorted(xformcases.GRAPHS))
def test_bit_identical_to_go(go, media, graph):
    py = xformcases.python_digests(media, graph)
    assert py == go[graph]
    assert not any(v.startswith("error") for v in py.values()), py  # the cases are all valid
    assert len(set(py.values())) > len(py) // len(xformcases.EPOCHS)  # epochs change random ops


def test_outputs_are_numpy_views(media):
    g = transforms.Graph(xformcases.GRAPHS["dtypes"])
    data = open(os.path.join(media, "images", "photo_q90_420.jpg"), "rb").read()
    t16, bf, u8 = g.run(data, key="k", epoch=2)
    assert (t16.shape, t16.dtype) == ((80, 80, 3), np.float16)
    assert (bf.shape, bf.dtype) == ((3, 80, 80), np.uint16)  # bfloat16 bit patterns
    assert (u8.shape, u8.dtype) == ((3, 80, 80), np.uint8)
    assert t16.base is not None and not t16.flags.owndata  # a view of the output buffer
    # bfloat16 and float16 hold the same pixels to their precision.
    f_from_bf = (bf.astype(np.uint32) << 16).view(np.float32).transpose(1, 2, 0)
    assert np.allclose(f_from_bf, t16.astype(np.float32), atol=1e-2)
    fs = frames.parse(g.run_frames(data, key="k", epoch=2))
    assert [f.dtype for f in fs] == ["float16", "bfloat16", "uint8"]
    assert fs[0].domain == transforms.domain() and "xformgraph=" in fs[0].domain
    del t16, bf, u8, fs
    gc.collect()


@pytest.mark.parametrize("spec, code, msg", [
    ({"version": 1, "nodes": [{"id": "d", "op": "no_such_op", "input": "input"}], "outputs": ["d"]},
     None, "unknown op"),
    ({"version": 1, "nodes": [{"id": "d", "op": "decode_image", "input": "input"},
                              {"id": "r", "op": "resize", "input": "d", "params": {"size": [-3]}}], "outputs": ["r"]},
     None, "bad parameter"),
    ({"version": 1, "nodes": [{"id": "d", "op": "decode_image", "input": "nowhere"}], "outputs": ["d"]},
     None, "invalid graph"),
    ({"version": 2, "nodes": [], "outputs": []}, None, "invalid graph"),
    ('{"version": 1, "nodes": [', None, "invalid graph"),
    ({"version": 1, "nodes": [{"id": "d", "op": "decode_image", "input": "input", "params": {"colour": 1}}],
      "outputs": ["d"]}, None, "colour"),
])
def test_bad_graph_is_a_clear_error(spec, code, msg):
    g = transforms.Graph(spec)  # nothing compiled yet
    with pytest.raises(GraphError, match=msg) as ei:
        g.validate()
    assert isinstance(ei.value, ValueError)


def test_bad_spec_types():
    with pytest.raises(GraphError, match="dict, a JSON string"):
        transforms.Graph(42)
    with pytest.raises(GraphError, match="empty"):
        transforms.Graph("  ")


def test_bad_sample_names_key_and_node(media):
    g = transforms.Graph(xformcases.GRAPHS["imagenet"])
    jpeg = open(os.path.join(media, "images", "photo_q90_420.jpg"), "rb").read()
    with pytest.raises(SampleError) as ei:
        g.run(jpeg[: len(jpeg) // 3], key="train/broken.jpg", epoch=0)
    assert ei.value.key == "train/broken.jpg" and ei.value.code == "DECODE"
    # The message names the sample and the failing op (decoding is fused into to_tensor, so
    # the node reported is the one that ran the decode).
    assert "train/broken.jpg" in str(ei.value) and "decode_image" in str(ei.value)
    with pytest.raises(SampleError) as ei:
        g.run(b"", key="empty")
    assert ei.value.code == "DECODE"
    with pytest.raises(TypeError, match="key must be a str"):
        g.run(jpeg, key=7)
    with pytest.raises(ValueError, match="epoch"):
        g.run(jpeg, key="k", epoch=-1)
    # The graph still works after errors.
    (t,) = g.run(bytearray(jpeg), key="k", epoch=0)
    assert t.shape == (3, 224, 224)


def test_handles_are_freed():
    gc.collect()
    before = transforms.live_graphs()
    gs = [transforms.Graph(xformcases.GRAPHS["video"]).validate() for _ in range(5)]
    assert transforms.live_graphs() == before + 5
    del gs
    gc.collect()
    assert transforms.live_graphs() == before


def test_graph_pickles_as_its_spec(media):
    g = transforms.Graph(xformcases.GRAPHS["imagenet"]).validate()
    g2 = pickle.loads(pickle.dumps(g))
    data = open(os.path.join(media, "images", "gray.jpg"), "rb").read()
    assert bytes(g.run_frames(data, "k", 3)) == bytes(g2.run_frames(data, "k", 3))


def test_frames_reject_corruption(media):
    g = transforms.Graph(xformcases.GRAPHS["dtypes"])
    data = open(os.path.join(media, "images", "photo_q90_420.jpg"), "rb").read()
    b = bytearray(g.run_frames(data, "k", 0))
    assert len(frames.parse(b)) == 3
    bad = bytearray(b)
    bad[-1] ^= 0xFF
    with pytest.raises(FrameError, match="checksum"):
        frames.parse(bad)
    with pytest.raises(FrameError, match="truncated"):
        frames.parse(b[:-5])
    with pytest.raises(FrameError, match="magic"):
        frames.parse(b"XXXX" + b[4:])
    bad = bytearray(b)
    bad[4] = 9
    with pytest.raises(FrameError, match="version"):
        frames.parse(bad)


# A byte-level BPE tokenizer.json small enough to write by hand: "ab a" is [ab, Ġ, a] = [2, 3, 0].
TINY_TOKENIZER = json.dumps({
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 4, "content": "<pad>", "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}],
    "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                          "use_regex": True},
    "post_processor": None, "decoder": None,
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3}, "merges": [["a", "b"]]}})


def test_token_tensors():
    """The tokenize op's int32/int64 tensors (layouts L and NL) come back as numpy arrays."""
    tok = {"tokenizer": TINY_TOKENIZER, "max_length": 6, "truncation": "right", "padding": "max_length", "pad_id": 4}
    g = transforms.Graph({"version": 1, "nodes": [
        {"id": "tok", "op": "tokenize", "input": "input", "params": tok},
        {"id": "ids", "op": "token_ids", "input": "tok", "params": {"dtype": "int64"}},
        {"id": "mask", "op": "attention_mask", "input": "tok"}], "outputs": ["tok", "ids", "mask"]})
    raw, ids, mask = g.run("ab a".encode(), key="caption")
    assert (raw.dtype, raw.shape, raw.tolist()) == (np.int32, (6,), [2, 3, 0, 4, 4, 4])
    assert (ids.dtype, ids.tolist()) == (np.int64, [2, 3, 0, 4, 4, 4])
    assert (mask.dtype, mask.tolist()) == (np.int32, [1, 1, 1, 0, 0, 0])
    fs = frames.parse(g.run_frames(b"ab a", key="caption"))
    assert [(f.dtype, f.layout) for f in fs] == [("int32", "L"), ("int64", "L"), ("int32", "L")]
    packed = transforms.Graph({"version": 1, "nodes": [
        {"id": "tok", "op": "tokenize", "input": "input",
         "params": {"tokenizer": TINY_TOKENIZER, "input": "jsonl", "pack": True, "max_length": 4, "padding": "max_length",
                    "pad_id": 4}}], "outputs": ["tok"]})
    (rows,) = packed.run(b'{"text": "ab a"}\n{"text": "b"}\n{"text": "ab ab"}\n', key="shard-0")
    assert rows.shape == (2, 4) and rows.tolist() == [[2, 3, 0, 1], [2, 3, 2, 4]]
    with pytest.raises(SampleError, match="not UTF-8"):
        g.run(b"a\xff", key="bad")


def test_missing_library_is_a_clear_error(tmp_path):
    out = run_py("""
        import json, os
        os.environ["NEWTRICKS_LIB"] = "%s"
        from newtricks import transforms
        from newtricks.errors import LibraryError
        try:
            transforms.Graph({"version": 1}).validate()
        except LibraryError as e:
            print(json.dumps({"err": str(e)}))
    """ % (tmp_path / "nope.so"))
    assert "not found" in out["err"] and "nope.so" in out["err"]


FORK_SCRIPT = """
    import json, multiprocessing as mp, os
    import xformcases
    from newtricks import transforms
    media = os.environ["NEWTRICKS_XFORM_MEDIA"]

    def work(graph):
        d = xformcases.python_digests(media, graph)
        return graph, os.getpid(), {{"%s@%d" % k: v for k, v in d.items()}}

    if __name__ == "__main__":
        method, preload = {method!r}, {preload!r}
        g = transforms.Graph(xformcases.GRAPHS["imagenet"])  # built in the parent, not compiled
        if preload:
            g.validate()
        ctx = mp.get_context(method)
        res = {{}}
        with ctx.Pool(2) as pool:
            try:
                for graph, pid, d in pool.map(work, ["imagenet", "video", "dtypes"]):
                    assert pid != os.getpid()
                    res[graph] = d
            except Exception as e:
                res = {{"error": type(e).__name__ + ": " + str(e)}}
        res["parent_loaded"] = transforms.loaded()
        print(json.dumps(res))
"""


def _keyed(d):
    return {"%s@%d" % k: v for k, v in d.items()}


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_workers_fork_and_spawn(go, tmp_path, method):
    script = tmp_path / "w.py"
    script.write_text(textwrap.dedent(FORK_SCRIPT.format(method=method, preload=False)))
    r = subprocess.run([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=HERE))
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res.pop("parent_loaded") is False  # the parent never loaded the Go runtime
    for graph in ("imagenet", "video", "dtypes"):
        assert res[graph] == _keyed(go[graph]), graph


def test_fork_after_load_is_refused_not_hung(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(textwrap.dedent(FORK_SCRIPT.format(method="fork", preload=True)))
    r = subprocess.run([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120, env=dict(os.environ, PYTHONPATH=HERE))
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["parent_loaded"] is True
    assert res["error"].startswith("LibraryError") and "forked" in res["error"] and "spawn" in res["error"], res


@pytest.mark.parametrize("global_av", [False, True])
def test_pyav_imported_first(go, media, global_av):
    """PyAV's wheel bundles its own FFmpeg (another major version). Import it first and use it
    (optionally with RTLD_GLOBAL, so its symbols are visible to everything loaded later), then
    run libnewtricks: both FFmpegs are mapped, and our output is still Go's."""
    res = run_py("""
        import json, os, sys
        if %r:
            sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
        import av
        sys.setdlopenflags(os.RTLD_NOW)
        media = os.environ["NEWTRICKS_XFORM_MEDIA"]
        with av.open(os.path.join(media, "video", "tiny.mp4")) as c:
            n = sum(1 for _ in c.decode(video=0))
        import xformcases
        out = {g: {"%%s@%%d" %% k: v for k, v in xformcases.python_digests(media, g).items()} for g in ("imagenet", "video")}
        maps = open("/proc/self/maps").read()
        libs = sorted({l.split()[-1] for l in maps.splitlines() if "libavcodec" in l})
        print(json.dumps({"frames": n, "av": av.__version__, "ffmpeg": av.library_versions["libavcodec"], "libs": libs, "out": out}))
    """ % global_av)
    assert res["frames"] > 0
    assert len(res["libs"]) == 2, res["libs"]  # PyAV's bundled libavcodec and the system's
    for g in ("imagenet", "video"):
        assert res["out"][g] == _keyed(go[g]), g


def test_package_exports():
    assert callable(newtricks.hint)
    assert issubclass(newtricks.SampleError, newtricks.NewtricksError)


def test_threads_share_a_graph(go, media):
    # ctypes releases the GIL during the call: several Python threads run one compiled graph
    # concurrently inside the Go runtime, each getting Go's bytes.
    import concurrent.futures
    import hashlib

    g = transforms.Graph(xformcases.GRAPHS["imagenet"])
    jobs = [(p, e) for p in xformcases.inputs(media, "imagenet") for e in xformcases.EPOCHS] * 3
    blobs = {p: open(p, "rb").read() for p, _ in jobs}

    def one(job):
        p, e = job
        key = os.path.basename(p)
        return (key, e), hashlib.sha256(g.run_frames(blobs[p], key=key, epoch=e)).hexdigest()

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for k, d in ex.map(one, jobs):
            assert d == go["imagenet"][k], k
