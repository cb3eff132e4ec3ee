"""newtricks.Reader: one rank's steps of a training schedule, transformed next to the data.

    r = newtricks.Reader(schedule, rank=0, namenode="nn:8020", namenode_ext="nn:9880")
    # an HA nameservice: namenode=["nn1:8020", "nn2:8020"], namenode_ext=[...], or
    # nameservice="prod" (and conf_dir=..., default $HADOOP_CONF_DIR)
    for step in r:
        x = step.batch(0)          # the first graph output of every good sample: one array
        ...
    print(r.stats())               # offloaded fraction, wait per step, bytes moved

The reader is the Go implementation of the offload session protocol (package reader),
running inside libnewtricks: it computes this rank's samples of every step from the
schedule, asks the datanode-ext nodes that own them for transformed tensors (it finds them in
namenode-ext's directory of the live DataNodes, and follows it: nodes that join or leave are
picked up between steps), transforms
locally (the same Go code, so the same bytes) whatever comes back raw, reads plain HDFS bytes
when a node is unreachable, and prefetches the next steps on its own threads while Python
trains. A failed sample is reported in its step (``sample.error``); iteration goes on.

Like every use of libnewtricks, a Reader belongs to the process that opened it: open it in
each DataLoader worker (newtricks.torch.StepDataset does), never before a fork.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import struct
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _failover, frames, transforms
from . import state as _state
from ._user import resolve_user
from .auth import Auth
from .errors import ConfigError, LibraryError, NewtricksError, SampleError
from .members import decode_members


@dataclasses.dataclass
class Sample:
    """One sample of a step. ``outputs`` are the graph's outputs (numpy views of the step's
    buffer; empty when the sample failed, then ``error`` says why)."""

    slot: int
    source: int
    key: str
    epoch: int
    path: str  # "offload" (tensor from a DataNode), "raw" (raw from a DataNode, transformed here), "local"
    outputs: List[np.ndarray]
    error: Optional[SampleError] = None
    domain: str = ""
    #: element type of each output: uint8, float16, float32, bfloat16 (held as uint16 bits),
    #: int32 or int64 (token ids and masks)
    dtypes: List[str] = dataclasses.field(default_factory=list)
    #: the sample's members that are not media (labels, captions, metadata: "cls", "txt",
    #: "json", ...), raw, in the order of the tar; empty for a failed sample
    members: Dict[str, bytes] = dataclasses.field(default_factory=dict)
    #: name of the primary media member (the graph's "input"), e.g. "jpg"
    primary: str = ""
    #: names of the graph's outputs, and for each the member it is made from (the primary's
    #: name for "input", NAME for "input:NAME")
    output_names: List[str] = dataclasses.field(default_factory=list)
    output_members: List[str] = dataclasses.field(default_factory=list)

    @property
    def meta(self) -> Dict[str, Any]:
        """The non-media members decoded by WebDataset's default rules (newtricks.members):
        cls -> int, txt -> str, json -> object, others raw bytes."""
        return decode_members(self.members)

    def entries(self) -> Dict[str, Any]:
        """The sample as WebDataset yields it: ``__key__``, then one entry per member: a media
        member's graph output (a tuple when the graph makes several outputs from it), and
        every other member decoded (``meta``). Raises the sample's error for a failed one."""
        if self.error is not None:
            raise self.error
        out: Dict[str, Any] = {"__key__": self.key}
        by: Dict[str, list] = {}
        for m, o in zip(self.output_members, self.outputs):
            by.setdefault(m, []).append(o)
        for m, os_ in by.items():
            out[m] = os_[0] if len(os_) == 1 else tuple(os_)
        out.update(self.meta)
        return out


class Step:
    """The samples of one step for this rank, in slot order."""

    def __init__(self, step: int, samples: List[Sample], batches: Optional[List[np.ndarray]], buf: memoryview,
                 dtypes: Optional[List[str]] = None):
        self.step = step
        #: element type of each batched output (see Sample.dtypes)
        self.dtypes = dtypes or []
        self.samples = samples
        self._batches = batches
        self._buf = buf  # keeps the memory alive as long as the step is

    @property
    def ok(self) -> List[Sample]:
        """The samples without error, in slot order: the rows of ``batch()``."""
        return [s for s in self.samples if s.error is None]

    @property
    def errors(self) -> List[Sample]:
        return [s for s in self.samples if s.error is not None]

    @property
    def batched(self) -> bool:
        """Whether batch() is a view (every good sample has the same output shapes)."""
        return self._batches is not None

    def batch(self, output: int = 0) -> np.ndarray:
        """Graph output ``output`` of every good sample stacked on a new first axis. A view of
        the received buffer when the step is batched (no copy), else an np.stack (a copy; it
        raises if shapes differ, e.g. videos of different sizes)."""
        if self._batches is not None:
            return self._batches[output]
        ok = self.ok
        if not ok:
            raise NewtricksError("step %d: no sample without error" % self.step)
        return np.stack([s.outputs[output] for s in ok])

    def __len__(self) -> int:
        return len(self.samples)

    def __repr__(self) -> str:
        return "Step(%d, samples=%d, errors=%d)" % (self.step, len(self.samples), len(self.errors))


_STEP_HEAD = struct.Struct("<4sIQQ")


def _decode_step(buf: memoryview, info: Optional[List[dict]] = None) -> Step:
    magic, _, step, hlen = _STEP_HEAD.unpack_from(buf, 0)
    if magic != b"NTST":
        raise NewtricksError("reader returned a malformed step")
    h = json.loads(bytes(buf[24:24 + hlen]))
    data = buf[24 + ((hlen + 7) & ~7):]
    batches = None
    dtypes: List[str] = []
    if h.get("batched"):
        batches = []
        dtypes = [frames.DTYPES[o["dtype"]][0] for o in h["outputs"]]
        rows = sum(1 for m in h["samples"] if m["row"] >= 0)
        for o in h["outputs"]:
            npd = frames.DTYPES[o["dtype"]][1]
            batches.append(np.frombuffer(data[o["off"]:o["off"] + o["len"]], dtype=npd).reshape([rows] + o["shape"]))
    samples = []
    for m in h["samples"]:
        err = None
        outs: List[np.ndarray] = []
        dts: List[str] = []
        if m.get("error"):
            err = SampleError(m["error"], "SAMPLE", m["key"])
        elif batches is not None:
            outs, dts = [b[m["row"]] for b in batches], dtypes
        else:
            fs = frames.parse(data[m["off"]:m["off"] + m["len"]], verify=False)
            outs = [f.array if f.kind == "tensor" else f.data for f in fs]
            dts = [f.dtype if f.kind == "tensor" else "raw" for f in fs]
        mem = {} if err else {x["name"]: bytes(data[x["off"]:x["off"] + x["len"]]) for x in m.get("members") or ()}
        primary = m.get("primary", "")
        names: List[str] = []
        of: List[str] = []
        if info is not None and m["source"] < len(info):
            names = list(info[m["source"]]["outputs"])
            of = [x or primary or "input" for x in info[m["source"]]["sources"]]
        samples.append(Sample(m["slot"], m["source"], m["key"], m["epoch"], m["path"], outs, err, m.get("domain", ""), dts,
                              mem, primary, names, of))
    return Step(step, samples, batches, buf, dtypes)


def _schedule_json(schedule, graphs, world_size) -> dict:
    if isinstance(schedule, (str, bytes)):
        try:
            s = json.loads(schedule)
        except ValueError as e:
            raise ConfigError("schedule is not valid JSON: %s" % e) from None
    elif isinstance(schedule, dict):
        s = json.loads(json.dumps(schedule))  # a private deep copy
    elif hasattr(schedule, "DESCRIPTOR") and schedule.DESCRIPTOR.full_name == "newtricks.v1.ScheduleSpec":
        from google.protobuf import json_format

        s = json_format.MessageToDict(schedule)
    else:
        raise ConfigError("schedule must be a dict, JSON text or a newtricks.v1.ScheduleSpec, got %s" % type(schedule).__name__)
    if not isinstance(s, dict):
        raise ConfigError("schedule must be a JSON object")
    if graphs:
        if not isinstance(graphs, dict):
            raise ConfigError("graphs must map source names to graph specs")
        srcs = {src.get("name"): src for src in s.get("sources", [])}
        for name, g in graphs.items():
            if name not in srcs:
                raise ConfigError("graphs: no source named %r in the schedule (sources: %s)" % (name, sorted(srcs)))
            spec = g.spec if isinstance(g, transforms.Graph) else g
            srcs[name]["graph"] = json.loads(spec) if isinstance(spec, (str, bytes)) else spec
    ws = s.get("worldSize", s.get("world_size"))
    if world_size is not None:
        if ws is not None and int(ws) != world_size:
            raise ConfigError("world_size=%d but the schedule says %s" % (world_size, ws))
        s.pop("world_size", None)
        s["worldSize"] = world_size
    elif ws is None:
        raise ConfigError("no world size: pass world_size=... or set worldSize in the schedule")
    return s


class Reader:
    """Iterates over the steps of one rank (see the module doc). Opening checks everything
    (schedule, graphs, indexes, permissions) and raises ConfigError or NewtricksError naming
    the problem; then each ``next()`` returns a Step.

    ``namenode`` is the HDFS NameNode RPC address, ``namenode_ext`` namenode-ext's API (block
    locations, and the directory of datanode-ext nodes the reader uses); for an HA nameservice
    each takes its NameNodes' addresses (a list or comma-separated; the reader fails over as
    the Go clients do), or give ``nameservice`` and/or ``conf_dir`` (default $HADOOP_CONF_DIR)
    instead to read both from hdfs-site.xml (libnewtricks resolves them as the CLI does). ``offload=False``
    reads plain HDFS bytes and transforms everything here; ``datanodes``, if given, are
    datanode-ext API addresses to use instead of the directory's (for tests and tools).
    ``graphs`` optionally maps source names to graph specs (overriding the schedule's),
    ``world_size`` the schedule's world size. ``max_wait`` seconds is how long a node may take
    before answering raw.

    ``auth`` (a newtricks.auth.Auth: Kerberos from a keytab or a ticket cache) is required on a
    Kerberized cluster: the reader proves that identity on every connection (namenode-ext, each
    datanode-ext over TLS, HDFS with Kerberos), and ``user`` then defaults to it (another name
    is a proxy-user request, which the cluster's hadoop.proxyuser.* rules decide)."""

    def __init__(self, schedule, *, namenode: Union[str, Sequence[str], None] = None,
                 namenode_ext: Union[str, Sequence[str], None] = None, offload: bool = True,
                 datanodes: Optional[Sequence[str]] = None,
                 rank: int = 0, world_size: Optional[int] = None, start_step: int = 0,
                 graphs: Optional[Dict[str, Union[dict, str, "transforms.Graph"]]] = None, user: Optional[str] = None,
                 prefetch: int = 2, max_wait: float = 2.0, local_workers: int = 1, raw_only: bool = False,
                 open_timeout: float = 60.0, state: Optional[dict] = None, auth: Optional["Auth"] = None,
                 nameservice: Optional[str] = None, conf_dir: Optional[str] = None):
        addrs = {}
        for name, v in (("namenode", namenode), ("namenode_ext", namenode_ext)):
            if v is None and (nameservice is not None or conf_dir is not None):
                addrs[name] = []  # filled from the nameservice by libnewtricks
            elif v is None:
                raise ConfigError("%s is required (host:port, a list for an HA pair), or nameservice=/conf_dir=" % name)
            else:
                addrs[name] = _failover.split_addrs(v, name)
        for name, v in (("nameservice", nameservice), ("conf_dir", conf_dir)):
            if v is not None and not isinstance(v, str):
                raise ConfigError("%s must be a string, got %r" % (name, v))
        if datanodes is None:
            datanodes = ()
        if isinstance(datanodes, str):
            raise ConfigError("datanodes must be a list of host:port, not one string")
        if not isinstance(offload, bool):
            raise ConfigError("offload must be True or False, got %r" % (offload,))
        for d in datanodes:
            if not isinstance(d, str) or ":" not in d:
                raise ConfigError("datanodes: each must be host:port, got %r" % (d,))
        for name, v, lo in (("rank", rank, 0), ("start_step", start_step, 0), ("prefetch", prefetch, 1),
                            ("local_workers", local_workers, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError("%s must be an int >= %d, got %r" % (name, lo, v))
        if world_size is not None and (isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1):
            raise ConfigError("world_size must be a positive int, got %r" % (world_size,))
        if world_size is not None and rank >= world_size:
            raise ConfigError("rank %d outside world_size %d" % (rank, world_size))
        if not isinstance(max_wait, (int, float)) or max_wait <= 0:
            raise ConfigError("max_wait must be > 0 seconds, got %r" % (max_wait,))
        if auth is not None and not isinstance(auth, Auth):
            raise ConfigError("auth must be a newtricks.auth.Auth, got %r" % (auth,))
        sched = _schedule_json(schedule, graphs, world_size)
        cfg = {
            "user": resolve_user(user) if auth is None or user is not None else "",
            "namenode": addrs["namenode"], "namenode_ext": addrs["namenode_ext"],
            "nameservice": nameservice or "", "conf_dir": conf_dir or "",
            "offload": offload, "datanodes": list(datanodes), "schedule": sched,
            "rank": rank, "start_step": start_step, "prefetch": prefetch, "max_wait_ms": int(max_wait * 1000),
            "local_workers": local_workers, "raw_only": bool(raw_only), "open_timeout_ms": int(open_timeout * 1000),
        }
        if auth is not None:
            cfg["auth"] = dict(auth.config)
        #: the user the calls name ("" with auth and no user: the authenticated caller)
        self.user, self.rank = cfg["user"], rank
        self._pid = os.getpid()
        self._h = 0
        self._cfg = cfg
        self._lib = transforms._load()
        self._open(state)

    def _open(self, state: Optional[dict]) -> None:
        cfg = dict(self._cfg)
        start, partial = cfg["start_step"], {}
        if state is not None:
            start, partial = _state.plan(state, cfg["schedule"], self.rank)
        cfg["start_step"] = start
        cfg["partial"] = {str(k): v for k, v in partial.items()}
        self._pos = _state.Position(cfg["schedule"], self.rank, start, partial)
        b = json.dumps(cfg).encode("utf-8")
        err = ctypes.c_void_p()
        h = self._lib.ntx_reader_open(b, len(b), ctypes.byref(err))
        if h == 0:
            msg = transforms._take_string(err)
            if "bad argument" in msg or "invalid spec" in msg or "bad configuration" in msg:
                raise ConfigError("reader: " + msg)
            raise NewtricksError("reader: " + msg, "OPEN")
        self._h = h
        p = self._lib.ntx_reader_info(h)
        self._info = json.loads(transforms._take_string(ctypes.c_void_p(p)))["sources"] if p else None

    def state_dict(self) -> dict:
        """Where this reader is: after the last step next() returned (newtricks.state). Save it
        with the checkpoint; ``load_state_dict`` (or ``Reader(..., state=...)``) resumes at the
        next step. ``newtricks.state.merge`` of every rank's state resumes at another world
        size."""
        return self._pos.state_dict()

    def load_state_dict(self, state: dict) -> None:
        """Resumes from a state (this rank's, or a job state from newtricks.state.merge): the
        reader is opened again there; the next next() returns what comes after it."""
        if os.getpid() != self._pid:
            raise LibraryError("this Reader was opened by process %d; open one in each worker process" % self._pid)
        self.close()
        self._open(state)

    def _handle(self) -> int:
        if os.getpid() != self._pid:
            raise LibraryError("this Reader was opened by process %d; open one in each worker process" % self._pid)
        if not self._h:
            raise NewtricksError("reader is closed", "CLOSED")
        return self._h

    def __iter__(self) -> "Reader":
        return self

    def __next__(self) -> Step:
        h = self._handle()
        out, n, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        rc = self._lib.ntx_reader_next(h, ctypes.byref(out), ctypes.byref(n), ctypes.byref(err))
        if rc == 11:
            raise StopIteration
        if rc != 0:
            raise NewtricksError("reader: " + transforms._take_string(err), transforms._CODES.get(rc, "INTERNAL"))
        st = _decode_step(transforms._owned_buffer(out, n), self._info)
        self._pos.step_done(st.step)
        return st

    def outputs(self, source: int = 0) -> List[str]:
        """The names of a source's graph outputs (the order of Sample.outputs)."""
        return list(self._info[source]["outputs"]) if self._info else []

    def stats(self) -> dict:
        """Totals since open: steps; samples offloaded / raw / local / errors and
        offloaded_fraction; bytes_from_nodes and bytes_from_hdfs; wait_s (time next() blocked,
        summed), wait_p50_s, wait_p99_s, wait_max_s per step; local_transform_s; reconnects;
        raw_only (every sample is transformed in this process, one path for all) with
        raw_only_reason (raw_only=True, or the DataNode whose determinism domain differs from
        this process's) and refused_tensors (tensors not used because of that); node_error, the
        last reason a listed node was not used (e.g. it does not serve TLS and the reader has
        credentials), "" when none."""
        p = self._lib.ntx_reader_stats(self._handle())
        if not p:
            raise NewtricksError("reader: no stats (closed?)")
        return json.loads(transforms._take_string(ctypes.c_void_p(p)))

    def close(self) -> None:
        """Stops prefetching and closes the sessions. Idempotent."""
        if self._h and os.getpid() == self._pid:
            self._lib.ntx_reader_close(self._h)
        self._h = 0

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
