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
``__iter__``; the dataset object itself holds only its configuration and pickles for spawn.
"""

from __future__ import annotations

from typing import Iterator, List, Optional

try:
    import torch as _torch
    from torch.utils.data import IterableDataset, get_worker_info
except ImportError as e:  # pragma: no cover - exercised without torch
    raise ImportError("newtricks.torch needs PyTorch: pip install 'newtricks[torch]' (or install torch)") from e

import json

from .errors import ConfigError
from .reader import Reader, Step, _schedule_json


def _tensor(a, dtype: str = "") -> "_torch.Tensor":
    """A tensor sharing memory with numpy array (or memoryview) a. bfloat16 outputs arrive as
    uint16 bit patterns and are reinterpreted, not converted."""
    if isinstance(a, memoryview):
        return _torch.frombuffer(a, dtype=_torch.uint8) if len(a) else _torch.empty(0, dtype=_torch.uint8)
    t = _torch.from_numpy(a)
    return t.view(_torch.bfloat16) if dtype == "bfloat16" else t


def collate(step: Step, part: int = 0, parts: int = 1) -> dict:
    """Turns a Step into a dict of tensors without copying: ``outputs`` is one tensor per
    graph output stacked over the good samples when the step is batched (a view of the step's
    buffer), else a list per output of per-sample tensors. ``keys``/``slots``/``paths`` list the
    good samples in row order; ``errors`` the failed ones as (key, message)."""
    ok = step.ok
    if step.batched:
        outs = [_tensor(step.batch(i), d) for i, d in enumerate(step.dtypes)]
    else:
        n = len(ok[0].outputs) if ok else 0
        outs = [[_tensor(s.outputs[i], s.dtypes[i]) for s in ok] for i in range(n)]
    return {
        "step": step.step, "part": part, "parts": parts, "outputs": outs,
        "keys": [s.key for s in ok], "slots": [s.slot for s in ok], "paths": [s.path for s in ok],
        "errors": [(s.key, str(s.error)) for s in step.errors],
    }


class StepDataset(IterableDataset):
    """The steps of one rank of a schedule, as tensors; see the module doc. Keyword arguments
    are those of newtricks.Reader. ``world_size`` may come from the schedule or the argument."""

    def __init__(self, schedule, *, rank: int = 0, world_size: Optional[int] = None, start_step: int = 0,
                 graphs=None, **reader_kwargs):
        super().__init__()
        self.schedule = _schedule_json(schedule, graphs, world_size)
        self.world_size = int(self.schedule["worldSize"])
        self.global_batch = int(self.schedule.get("globalBatch", 0))
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.world_size:
            raise ConfigError("rank %r outside world size %d" % (rank, self.world_size))
        if isinstance(start_step, bool) or not isinstance(start_step, int) or start_step < 0:
            raise ConfigError("start_step must be an int >= 0, got %r" % (start_step,))
        self.rank, self.start_step = rank, start_step
        self.reader_kwargs = reader_kwargs

    def _part(self):
        info = get_worker_info()
        if info is None:
            return 0, 1
        return info.id, info.num_workers

    def __iter__(self) -> Iterator[dict]:
        part, parts = self._part()
        sched = self.schedule
        rank = self.rank
        if parts > 1:
            if self.global_batch % (self.world_size * parts):
                raise ConfigError("global batch %d does not divide into world_size %d x %d DataLoader workers"
                                  % (self.global_batch, self.world_size, parts))
            sched = json.loads(json.dumps(sched))
            sched["worldSize"] = self.world_size * parts
            rank = self.rank * parts + part
        r = Reader(sched, rank=rank, start_step=self.start_step, **self.reader_kwargs)
        try:
            for st in r:
                yield collate(st, part, parts)
        finally:
            r.close()


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
