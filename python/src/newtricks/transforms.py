"""Transform graphs run in this process by the same Go code the DataNodes run.

    g = newtricks.transforms.Graph({"version": 1, "seed": 7, "nodes": [...], "outputs": ["t"]})
    (t,) = g.run(jpeg_bytes, key="train/000123.jpg", epoch=3)   # numpy arrays, no copy
    t.shape, t.dtype                                            # (3, 224, 224) float32

The work is done by libnewtricks (the Go transforms, built into a C shared library), so an output is
bit-identical to the DataNode's for the same (graph, sample key, epoch) within one
determinism domain (``domain()``; every output frame carries its writer's domain).

Fork and spawn: the Go runtime inside the library does not survive ``fork()``. The library is
therefore loaded lazily, by the first run in a process, and never used across a fork: a Graph
made in a parent compiles itself again in each worker. A process forked after its parent had
loaded the library gets a LibraryError saying so, instead of a hang. In PyTorch, keep
transforms out of the main process before the DataLoader starts its workers, or use the
"spawn"/"forkserver" start method. Graphs pickle as their spec.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
import weakref
from typing import List, Optional, Union

from . import frames
from .errors import GraphError, LibraryError, SampleError

#: Environment variable naming the library file, overriding the one bundled in the package.
LIB_ENV = "NEWTRICKS_LIB"

# Status codes of the C API (cmd/libnewtricks/handles.go).
_CODES = {1: "INVALID_GRAPH", 2: "UNKNOWN_OP", 3: "TYPE_MISMATCH", 4: "BAD_PARAM", 5: "LIMIT", 6: "DECODE",
          7: "UNSUPPORTED", 8: "BAD_HANDLE", 9: "BAD_ARGUMENT", 10: "INTERNAL", 11: "END"}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_pid = 0
_lib_path = ""
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


def library_path() -> str:
    """The libnewtricks file this process would load."""
    p = os.environ.get(LIB_ENV)
    if p:
        return p
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "libnewtricks.so")


def _load() -> ctypes.CDLL:
    global _lib, _lib_pid, _lib_path
    pid = os.getpid()
    lib = _lib
    if lib is not None and _lib_pid == pid:
        return lib
    with _lock:
        if _lib is not None:
            if _lib_pid == pid:
                return _lib
            raise LibraryError(
                "libnewtricks was loaded by process %d, and this process (%d) was forked from it: the Go "
                "runtime inside does not survive fork. Run no transform in the parent before it forks its "
                "workers (newtricks loads the library lazily in each worker), or start workers with the "
                "'spawn' or 'forkserver' method" % (_lib_pid, pid))
        path = library_path()
        if not os.path.isfile(path):
            raise LibraryError(
                "libnewtricks not found at %s: install the package from the newtricks repository with Go "
                "available (pip install ./python builds it), or set $%s to a library built with "
                "`go build -buildmode=c-shared ./cmd/libnewtricks`" % (path, LIB_ENV))
        try:
            # RTLD_LOCAL: the library's FFmpeg symbols never serve, nor come from, other FFmpeg
            # copies in the process (PyAV, torchvision, decord wheels bundle their own).
            lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as e:
            raise LibraryError("cannot load libnewtricks from %s: %s" % (path, e)) from None
        lib.ntx_compile.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_compile.restype = ctypes.c_uint64
        lib.ntx_run.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_void_p,
                                ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_run.restype = ctypes.c_int
        lib.ntx_graph_free.argtypes = [ctypes.c_uint64]
        lib.ntx_graph_free.restype = ctypes.c_int
        lib.ntx_domain.argtypes = []
        lib.ntx_domain.restype = ctypes.c_void_p
        lib.ntx_graph_count.argtypes = []
        lib.ntx_graph_count.restype = ctypes.c_int
        lib.ntx_reader_open.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_reader_open.restype = ctypes.c_uint64
        lib.ntx_reader_next.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                        ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_reader_next.restype = ctypes.c_int
        lib.ntx_reader_stats.argtypes = [ctypes.c_uint64]
        lib.ntx_reader_stats.restype = ctypes.c_void_p
        lib.ntx_reader_info.argtypes = [ctypes.c_uint64]
        lib.ntx_reader_info.restype = ctypes.c_void_p
        lib.ntx_reader_close.argtypes = [ctypes.c_uint64]
        lib.ntx_reader_close.restype = ctypes.c_int
        _lib, _lib_pid, _lib_path = lib, pid, path
        return lib


def _take_string(p: ctypes.c_void_p) -> str:
    """Reads and frees a C string the library returned."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8", "replace")
    finally:
        _libc.free(p.value)


def loaded() -> bool:
    """Whether this very process has loaded the library."""
    return _lib is not None and _lib_pid == os.getpid()


def domain() -> str:
    """This process's determinism domain: the library's output version, FFmpeg library
    versions and Go build level. Outputs are bit-identical across processes with equal
    domains. Loads the library."""
    lib = _load()
    return _take_string(ctypes.c_void_p(lib.ntx_domain()))


def live_graphs() -> int:
    """Compiled graphs alive in the library (for leak checks). Loads the library."""
    return _load().ntx_graph_count()


def _owned_buffer(ptr: ctypes.c_void_p, size: ctypes.c_size_t) -> memoryview:
    """A memoryview of size bytes of C memory at ptr that the library malloc'ed for us; freed
    (with libc's free, never a call into Go, so also harmless in a forked child) when the last
    view of it is gone."""
    arr = (ctypes.c_uint8 * size.value).from_address(ptr.value)
    weakref.finalize(arr, _libc.free, ptr.value)
    return memoryview(arr).cast("B")


def _spec_bytes(spec) -> bytes:
    if isinstance(spec, dict):
        return json.dumps(spec, separators=(",", ":")).encode("utf-8")
    if isinstance(spec, str):
        return spec.encode("utf-8")
    if isinstance(spec, (bytes, bytearray, memoryview)):
        return bytes(spec)
    if hasattr(spec, "SerializeToString") and getattr(getattr(spec, "DESCRIPTOR", None), "full_name", "") == "newtricks.xform.v1.Graph":
        return spec.SerializeToString(deterministic=True)
    raise GraphError("graph spec must be a dict, a JSON string or bytes, or a newtricks.xform.v1.Graph message, got %s"
                     % type(spec).__name__)


class _Handle:
    """A compiled graph in one process's library; freed when unreferenced, in that process only."""

    def __init__(self, lib: ctypes.CDLL, h: int):
        self.h, self.pid = h, os.getpid()
        self._fin = weakref.finalize(self, _Handle._free, lib, h, self.pid)

    @staticmethod
    def _free(lib, h, pid):
        if os.getpid() == pid:
            lib.ntx_graph_free(h)


class Graph:
    """A transform graph spec, compiled by libnewtricks in each process that runs it.

    Construction does not load the library (so a parent can build graphs and hand them to
    forked workers); ``validate()`` compiles now and raises GraphError for a bad spec. Safe to
    share between threads."""

    def __init__(self, spec: Union[dict, str, bytes]):
        self._spec = _spec_bytes(spec)
        if not self._spec.strip():
            raise GraphError("empty graph spec")
        self._handle: Optional[_Handle] = None
        self._hlock = threading.Lock()

    @property
    def spec(self) -> bytes:
        return self._spec

    def __reduce__(self):
        return (Graph, (self._spec,))

    def _compiled(self) -> int:
        pid = os.getpid()
        h = self._handle
        if h is not None and h.pid == pid:
            return h.h
        lib = _load()
        with self._hlock:
            if self._handle is not None and self._handle.pid == pid:
                return self._handle.h
            err = ctypes.c_void_p()
            hv = lib.ntx_compile(self._spec, len(self._spec), ctypes.byref(err))
            if hv == 0:
                raise GraphError("graph spec rejected: %s" % _take_string(err))
            self._handle = _Handle(lib, hv)
            return hv

    def validate(self) -> "Graph":
        """Compiles the graph in this process (loading the library); raises GraphError."""
        self._compiled()
        return self

    def run_frames(self, data, key: str, epoch: int = 0) -> memoryview:
        """Runs the graph on one sample and returns its encoded output frames (one per graph
        output, the format DataNodes send) as a memoryview of memory owned by this call, freed
        when the last view of it goes away."""
        if not isinstance(key, str):
            raise TypeError("key must be a str (the sample's stable key), got %s" % type(key).__name__)
        if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 1 << 64:
            raise ValueError("epoch must be an int in [0, 2**64), got %r" % (epoch,))
        h = self._compiled()
        lib = _load()
        if isinstance(data, bytes):
            buf, n = data, len(data)
        else:
            mv = memoryview(data).cast("B")
            buf = bytes(mv) if mv.readonly or not mv.c_contiguous else (ctypes.c_char * len(mv)).from_buffer(mv)
            n = len(mv)
        k = key.encode("utf-8")
        out, out_len, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        rc = lib.ntx_run(h, k, len(k), epoch, buf, n, ctypes.byref(out), ctypes.byref(out_len), ctypes.byref(err))
        if rc != 0:
            code = _CODES.get(rc, "INTERNAL")
            raise SampleError(_take_string(err) or code, code, key)
        return _owned_buffer(out, out_len)

    def run(self, data, key: str, epoch: int = 0) -> List:
        """Runs the graph on one sample (bytes or any buffer) and returns its outputs in
        graph order: numpy arrays for tensors (views of the output buffer, no copy),
        memoryviews for raw passthrough outputs. Raises SampleError naming the sample and
        node for a sample that cannot be transformed."""
        return [f.array if f.kind == "tensor" else f.data for f in frames.parse(self.run_frames(data, key, epoch), verify=False)]

    def __repr__(self) -> str:
        return "Graph(%d-byte spec)" % len(self._spec)
