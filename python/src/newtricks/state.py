"""Where a reader is in its schedule, to save with a checkpoint and resume from, PyTorch style
(``state_dict()`` / ``load_state_dict()`` on newtricks.Reader and newtricks.torch.StepDataset).

A schedule says which samples every step holds, independently of the world size: step ``s``
is ``global_batch`` slots, rank ``r`` of ``W`` reads slots ``[r*B/W, (r+1)*B/W)``. So where
a job is can be said in slots: a rank's state is the step it is in, the slots of that step it
has delivered, and the slots it reads at later steps when it runs a resume plan (below).

- **Same world size**: each rank restores its own state (``load_state_dict(its state)``) and
  goes on with exactly the next sample it had not delivered.
- **Another world size** (elastic: saved at 8 ranks, restored at 4 or 16): ``merge`` the
  states of *all* the old ranks into one job state; every new rank loads that same job state
  and takes its share: for each step some slots of which were delivered, the undelivered slots
  are split over the new ranks in order; later steps are the new ranks' usual ranges. Every
  sample of the schedule is delivered exactly once across the change.

A state names the schedule it belongs to (a fingerprint of the schedule without its world
size); loading it into a reader of another schedule is a ConfigError. States are plain JSON
values (dicts of ints, strings and lists).
"""

from __future__ import annotations

import hashlib
import json
from typing import Dict, Iterable, List, Optional, Tuple

from .errors import ConfigError

VERSION = 1


def fingerprint(schedule: dict) -> str:
    """SHA-256 of the schedule without its world size (canonical JSON)."""
    s = {k: v for k, v in schedule.items() if k not in ("worldSize", "world_size")}
    return hashlib.sha256(json.dumps(s, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _range(rank: int, world: int, batch: int) -> List[int]:
    return list(range(rank * batch // world, (rank + 1) * batch // world))


class Position:
    """One rank's place: the step it is in, the slots of it delivered, its resume plan
    (``partial``: step -> slots it reads instead of its range)."""

    def __init__(self, schedule: dict, rank: int, start_step: int = 0, partial: Optional[Dict[int, List[int]]] = None):
        self.fp = fingerprint(schedule)
        self.world = int(schedule["worldSize"])
        self.batch = int(schedule["globalBatch"])
        self.rank = rank
        self.step = start_step
        self.delivered: List[int] = []
        self.partial: Dict[int, List[int]] = {int(k): sorted(v) for k, v in (partial or {}).items()}

    def assigned(self, step: int) -> List[int]:
        p = self.partial.get(step)
        return list(p) if p is not None else _range(self.rank, self.world, self.batch)

    def _next_step(self) -> None:
        self.step += 1
        self.delivered = []
        self.partial = {k: v for k, v in self.partial.items() if k >= self.step}
        while self.partial.get(self.step) == []:  # steps with nothing left for this rank
            self.step += 1
            self.partial.pop(self.step - 1, None)

    def sample_done(self, step: int, slot: int) -> None:
        """One sample delivered (the reader yields a step's samples in slot order)."""
        if step != self.step:
            self.step, self.delivered = step, []
        self.delivered.append(slot)
        if len(self.delivered) >= len(self.assigned(step)):
            self._next_step()

    def step_done(self, step: int) -> None:
        """A whole step delivered."""
        self.step = step
        self._next_step()

    def state_dict(self) -> dict:
        return {"version": VERSION, "kind": "rank", "schedule": self.fp, "world_size": self.world,
                "global_batch": self.batch, "rank": self.rank, "step": self.step, "delivered": list(self.delivered),
                "partial": {str(k): list(v) for k, v in sorted(self.partial.items())}}


def _check(state, what: str = "state") -> dict:
    if not isinstance(state, dict) or state.get("version") != VERSION or state.get("kind") not in ("rank", "job"):
        raise ConfigError("%s is not a newtricks reader state (version %d)" % (what, VERSION))
    return state


def merge(states: Iterable[dict]) -> dict:
    """The job's state from the states of all its ranks (every rank of one world size,
    each once): for each step from the earliest rank's, the slots not delivered yet."""
    states = [_check(s) for s in states]
    if not states:
        raise ConfigError("merge: no states")
    if any(s["kind"] != "rank" for s in states):
        raise ConfigError("merge: give the states of the ranks (state_dict() of each), not a job state")
    fp, world, batch = states[0]["schedule"], states[0]["world_size"], states[0]["global_batch"]
    for s in states:
        if (s["schedule"], s["world_size"], s["global_batch"]) != (fp, world, batch):
            raise ConfigError("merge: states of different schedules or world sizes")
    ranks = sorted(s["rank"] for s in states)
    if ranks != list(range(world)):
        raise ConfigError("merge: need the state of every rank 0..%d once, got ranks %s" % (world - 1, ranks))
    lo = min(s["step"] for s in states)
    hi = max([s["step"] for s in states] + [int(k) for s in states for k in s["partial"]])
    pending: Dict[str, List[int]] = {}
    for t in range(lo, hi + 1):
        left: List[int] = []
        for s in states:
            if t < s["step"]:
                continue
            p = s["partial"].get(str(t))
            assigned = p if p is not None else _range(s["rank"], world, batch)
            done = set(s["delivered"]) if t == s["step"] else set()
            left.extend(k for k in assigned if k not in done)
        pending[str(t)] = sorted(left)
    # Trailing steps that are whole are the ranks' usual ranges at any world size.
    full = list(range(batch))
    while pending and pending[str(hi)] == full:
        del pending[str(hi)]
        hi -= 1
    while pending and pending.get(str(lo)) == []:
        del pending[str(lo)]
        lo += 1
    return {"version": VERSION, "kind": "job", "schedule": fp, "global_batch": batch, "step": lo, "pending": pending}


def plan(state: dict, schedule: dict, rank: int) -> Tuple[int, Dict[int, List[int]]]:
    """What a rank of ``schedule`` (its world size) reads to resume from ``state``: the start
    step and the partial steps (step -> the slots it reads there, ascending)."""
    _check(state)
    if state["schedule"] != fingerprint(schedule):
        raise ConfigError("the state is of another schedule (fingerprint %s..., this schedule's %s...)"
                          % (state["schedule"][:12], fingerprint(schedule)[:12]))
    world, batch = int(schedule["worldSize"]), int(schedule["globalBatch"])
    if state["global_batch"] != batch:
        raise ConfigError("the state has global batch %d, the schedule %d" % (state["global_batch"], batch))
    if state["kind"] == "rank":
        if state["world_size"] != world or state["rank"] != rank:
            raise ConfigError("a rank's state restores that rank at its world size (rank %d of %d, not %d of %d): "
                              "merge the states of all ranks (newtricks.state.merge) to change the world size"
                              % (state["rank"], state["world_size"], rank, world))
        partial = {int(k): list(v) for k, v in state["partial"].items()}
        step = state["step"]
        done = set(state["delivered"])
        if done:
            p = partial.get(step)
            assigned = p if p is not None else _range(rank, world, batch)
            partial[step] = [k for k in assigned if k not in done]
        return step, partial
    partial = {}
    for k, left in state["pending"].items():
        n = len(left)
        partial[int(k)] = left[rank * n // world:(rank + 1) * n // world]
    return state["step"], partial
