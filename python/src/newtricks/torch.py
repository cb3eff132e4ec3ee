"""PyTorch adapter: ``StepDataset``, an IterableDataset of a schedule's steps for one rank.

    ds = newtricks.torch.StepDataset(schedule, rank=rank, world_size=world, namenode="nn:8020",
                                     namenode_ext="nn:9880", start_step=resume_at)
    for b in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0):
        loss = model(b["outputs"][0]).loss(...)   # b["outputs"][0]: a [n, 3, 224, 224] tensor

torch is an optional dependency (``pip install ./python[torch]``); importing this module
without it raises ImportError with that hint.

Sharding: a rank's samples of a step are split between the DataLoader's workers (worker w of W
reads the w-th part of the rank's slots, as virtual rank rank*W+w of world_size*W; the global
batch must divide by world_size*W). Each item is therefore one *part* of a step: ``step``,
``part`` (w) and ``parts`` (W) say which; the DataLoader yields the parts of step s in worker
order before those of step s+1, so consume them as micro-batches or join them with
``join_parts``. With ``num_workers=0`` (the Go reader already prefetches and transforms on its
own threads, so workers buy little) every item is a whole step and its tensors share memory
with the received buffer: no copy. In worker processes, DataLoader moves tensors to the main
process through shared memory (PyTorch's own copy).

Each worker opens its own Reader (libnewtricks is never used across a fork), lazily, in
``__iter__``; the dataset object itself holds only its configuration and pickles for spawn
(an ``auth=`` newtricks.auth.Auth pickles as its configuration and logs in again in the worker;
with fork, make it with ``login=False`` so that the parent does not load libnewtricks).
"""

from __future__ import annotations

from typing import Iterator, List, Optional

try:
    import torch as _torch
    from torch.utils.data import IterableDataset, get_worker_info
except ImportError as e:  # pragma: no cover - exercised without torch
    raise ImportError("newtricks.torch needs PyTorch: pip install 'newtricks[torch]' (or install torch)") from e

import json
import warnings

from . import state as _state
from .errors import ConfigError
from .reader import Reader, Step, _schedule_json


def _tensor(a, dtype: str = "") -> "_torch.Tensor":
    """A tensor sharing memory with numpy array (or memoryview) a. bfloat16 outputs arrive as
    uint16 bit patterns and are reinterpreted, not converted."""
    if isinstance(a, memoryview):
        return _torch.frombuffer(a, dtype=_torch.uint8) if len(a) else _torch.empty(0, dtype=_torch.uint8)
    if dtype == "bfloat16":  # the uint16 bits as int16 (torch before 2.3 has no uint16), reinterpreted
        return _torch.from_numpy(a.view("<i2")).view(_torch.bfloat16)
    return _torch.from_numpy(a)


_BUILTIN = ("step", "part", "parts", "outputs", "keys", "slots", "paths", "errors", "__key__")


def _values(vals: list):
    """A batch of one member's decoded values: int64 tensor for integers (labels), else the list."""
    if vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return _torch.tensor(vals, dtype=_torch.int64)
    return vals


def collate(step: Step, part: int = 0, parts: int = 1) -> dict:
    """Turns a Step into a dict of tensors without copying: ``outputs`` is one tensor per
    graph output stacked over the good samples when the step is batched (a view of the step's
    buffer), else a list per output of per-sample tensors. ``keys``/``slots``/``paths`` list the
    good samples in row order; ``errors`` the failed ones as (key, message).

    As a batched WebDataset pipeline gives them, ``__key__`` lists the keys, and there is one
    entry per member: a media member's graph output (the ``outputs`` entry made from it; a
    tuple when the graph makes several), and every other member decoded by WebDataset's rules
    (newtricks.members) over the rows: integers (``cls``) as an int64 tensor, others as a
    list. A member named like one of the entries above is only in ``members``."""
    ok = step.ok
    if step.batched:
        outs = [_tensor(step.batch(i), d) for i, d in enumerate(step.dtypes)]
    else:
        n = len(ok[0].outputs) if ok else 0
        outs = [[_tensor(s.outputs[i], s.dtypes[i]) for s in ok] for i in range(n)]
    item = {
        "step": step.step, "part": part, "parts": parts, "outputs": outs,
        "keys": [s.key for s in ok], "slots": [s.slot for s in ok], "paths": [s.path for s in ok],
        "errors": [(s.key, str(s.error)) for s in step.errors], "__key__": [s.key for s in ok],
    }
    members: dict = {}
    if ok:
        by: dict = {}
        for m, o in zip(ok[0].output_members, outs):
            by.setdefault(m, []).append(o)
        for m, os_ in by.items():
            members[m] = os_[0] if len(os_) == 1 else tuple(os_)
        names: List[str] = []
        for smp in ok:
            names.extend(n for n in smp.members if n not in names)
        metas = [smp.meta for smp in ok]
        for n in names:
            members[n] = _values([md.get(n) for md in metas])
    item["members"] = members
    for k, v in members.items():
        if k not in _BUILTIN:
            item[k] = v
    return item


def sample_entries(smp, step: int) -> dict:
    """One sample as WebDataset yields it: ``__key__``, then one entry per member: a media
    member's graph output (a tensor sharing memory with the step; a tuple when the graph makes
    several from it), every other member decoded (newtricks.members); ``__step__`` and
    ``__slot__`` say where it is in the schedule."""
    if smp.error is not None:
        raise smp.error
    out = {"__key__": smp.key, "__step__": step, "__slot__": smp.slot}
    by: dict = {}
    for m, o, d in zip(smp.output_members, smp.outputs, smp.dtypes):
        by.setdefault(m, []).append(_tensor(o, d))
    for m, ts in by.items():
        out[m] = ts[0] if len(ts) == 1 else tuple(ts)
    out.update(smp.meta)
    return out


class StepDataset(IterableDataset):
    """The steps of one rank of a schedule, as tensors; see the module doc. Keyword arguments
    are those of newtricks.Reader. ``world_size`` may come from the schedule or the argument.

    ``samples=True`` yields one item per sample instead of one per step, each as WebDataset
    yields it (sample_entries: ``__key__``, one entry per member); a failed sample is skipped
    with a warning (``on_error="raise"`` raises its SampleError instead).

    ``state_dict()`` / ``load_state_dict()`` say and set where the iteration is (newtricks.state):
    with torchdata's StatefulDataLoader, a loader restored from its state_dict goes on with
    exactly the next step, or in ``samples`` mode the next sample, not delivered; a job state
    (newtricks.state.merge of every rank's) resumes at another world size."""

    def __init__(self, schedule, *, rank: int = 0, world_size: Optional[int] = None, start_step: int = 0,
                 graphs=None, samples: bool = False, on_error: str = "skip", **reader_kwargs):
        super().__init__()
        if on_error not in ("skip", "raise"):
            raise ConfigError("on_error must be 'skip' or 'raise', got %r" % (on_error,))
        self.samples, self.on_error = bool(samples), on_error
        self._resume: Optional[dict] = reader_kwargs.pop("state", None)
        self._pos = None
        self.schedule = _schedule_json(schedule, graphs, world_size)
        self.world_size = int(self.schedule["worldSize"])
        self.global_batch = int(self.schedule.get("globalBatch", 0))
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.world_size:
            raise ConfigError("rank %r outside world size %d" % (rank, self.world_size))
        if isinstance(start_step, bool) or not isinstance(start_step, int) or start_step < 0:
            raise ConfigError("start_step must be an int >= 0, got %r" % (start_step,))
        self.rank, self.start_step = rank, start_step
        self.reader_kwargs = reader_kwargs

    def _schedule_for(self, part: int, parts: int):
        """The schedule and rank a DataLoader worker reads as (virtual rank rank*W+w)."""
        if parts == 1:
            return self.schedule, self.rank
        if self.global_batch % (self.world_size * parts):
            raise ConfigError("global batch %d does not divide into world_size %d x %d DataLoader workers"
                              % (self.global_batch, self.world_size, parts))
        sched = json.loads(json.dumps(self.schedule))
        sched["worldSize"] = self.world_size * parts
        return sched, self.rank * parts + part

    def _part(self):
        info = get_worker_info()
        if info is None:
            return 0, 1
        return info.id, info.num_workers

    def __iter__(self) -> Iterator[dict]:
        part, parts = self._part()
        sched, rank = self._schedule_for(part, parts)
        resume, self._resume = self._resume, None
        r = Reader(sched, rank=rank, start_step=self.start_step, state=resume, **self.reader_kwargs)
        # Steps: the reader's own position. Samples: one advanced sample by sample below.
        pos = _state.Position(sched, rank, r._pos.step, dict(r._pos.partial))
        self._pos = pos if self.samples else r._pos
        try:
            for st in r:
                if not self.samples:
                    yield collate(st, part, parts)
                    continue
                for smp in st.samples:
                    pos.sample_done(st.step, smp.slot)  # before the yield: the item is delivered with it
                    if smp.error is not None:
                        if self.on_error == "raise":
                            raise smp.error
                        warnings.warn("newtricks: skipping sample %r: %s" % (smp.key, smp.error))
                        continue
                    yield sample_entries(smp, st.step)
        finally:
            r.close()

    def state_dict(self) -> dict:
        """Where this dataset's iteration is: what has been yielded (newtricks.state); before the
        first item, the state it was loaded with, or its start."""
        if self._resume is not None:
            return self._resume
        if self._pos is not None:
            return self._pos.state_dict()
        part, parts = self._part()
        sched, rank = self._schedule_for(part, parts)
        return _state.Position(sched, rank, self.start_step).state_dict()

    def load_state_dict(self, state: dict) -> None:
        """The next iteration resumes from ``state`` (this rank's, or a job state)."""
        if not isinstance(state, dict):
            raise ConfigError("load_state_dict: a state is a dict, got %s" % type(state).__name__)
        self._resume, self._pos = state, None


def join_parts(items) -> Iterator[dict]:
    """Joins the consecutive parts of each step that a multi-worker DataLoader yields into one
    item per step (outputs concatenated: one copy)."""
    buf: List[dict] = []
    for it in items:
        buf.append(it)
        if len(buf) < it["parts"]:
            continue
        if len({b["step"] for b in buf}) != 1:
            raise RuntimeError("parts of different steps interleaved: %s" % [b["step"] for b in buf])
        full = [b for b in buf if b["outputs"]]  # a part whose samples all failed has none
        n = len(full[0]["outputs"]) if full else 0
        if all(isinstance(o, _torch.Tensor) for b in full for o in b["outputs"]):
            outs = [_torch.cat([b["outputs"][i] for b in full]) for i in range(n)]
        else:
            outs = [[t for b in full for t in (b["outputs"][i] if isinstance(b["outputs"][i], list) else list(b["outputs"][i]))]
                    for i in range(n)]
        yield {"step": buf[0]["step"], "part": 0, "parts": 1, "outputs": outs,
               "keys": [k for b in buf for k in b["keys"]], "slots": [s for b in buf for s in b["slots"]],
               "paths": [p for b in buf for p in b["paths"]], "errors": [e for b in buf for e in b["errors"]]}
        buf = []
