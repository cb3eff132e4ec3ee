"""newtricks.state without a cluster: positions, merging every rank's state and the resume
plans at another world size deliver every slot of every step exactly once (the readers'
side of it runs against the cluster in test_torch.py)."""

from __future__ import annotations

import random

import pytest

from newtricks import state
from newtricks.errors import ConfigError


def spec(world, batch=16):
    return {"version": 1, "seed": "1", "globalBatch": batch, "worldSize": world, "maxSteps": "40",
            "sources": [{"name": "s", "dataset": "/d", "weight": 1}]}


def run(pos, n, delivered):
    """Delivers n more samples of pos's rank (slot order within a step), recording them."""
    for _ in range(n):
        step = pos.step
        slots = pos.assigned(step)
        left = [k for k in slots if k not in pos.delivered]
        if not left:
            pos.step_done(step)
            continue
        k = left[0]
        delivered.append((step, k))
        pos.sample_done(step, k)


@pytest.mark.parametrize("old, new", [(8, 4), (8, 16), (8, 8), (4, 16), (16, 2)])
def test_elastic_resume_delivers_every_slot_once(old, new):
    rnd = random.Random(old * 100 + new)
    batch, steps = 16, 10
    delivered = []
    positions = [state.Position(spec(old), r) for r in range(old)]
    for p in positions:  # ranks at different places: some steps ahead, mid-step
        run(p, rnd.randrange(0, 3 * batch // old + 1), delivered)
    job = state.merge([p.state_dict() for p in positions])
    # A second change of world size while the first resume plan still runs.
    mid = []
    for r in range(new):
        start, partial = state.plan(job, spec(new), r)
        p = state.Position(spec(new), r, start, partial)
        run(p, rnd.randrange(0, batch // new + 2), delivered)
        mid.append(p)
    job2 = state.merge([p.state_dict() for p in mid])
    for r in range(old):
        start, partial = state.plan(job2, spec(old), r)
        p = state.Position(spec(old), r, start, partial)
        while p.step < steps:
            run(p, 1, delivered)
    done = [(s, k) for s, k in delivered if s < steps]
    assert sorted(done) == sorted(set(done)), "a slot delivered twice"
    assert set(done) == {(s, k) for s in range(steps) for k in range(batch)}, "a slot never delivered"


def test_same_world_size_resumes_each_rank_from_its_own_state():
    p = state.Position(spec(4), 2)
    got = []
    run(p, 6, got)  # 4 slots of step 0, 2 of step 1
    assert got == [(0, 8), (0, 9), (0, 10), (0, 11), (1, 8), (1, 9)]
    st = p.state_dict()
    assert st["step"] == 1 and st["delivered"] == [8, 9]
    start, partial = state.plan(st, spec(4), 2)
    assert (start, partial) == (1, {1: [10, 11]})
    with pytest.raises(ConfigError, match="merge the states of all ranks"):
        state.plan(st, spec(8), 2)
    with pytest.raises(ConfigError, match="rank 2 of 4, not 1 of 4"):
        state.plan(st, spec(4), 1)


def test_bad_states_are_config_errors():
    st = [state.Position(spec(2), r).state_dict() for r in range(2)]
    with pytest.raises(ConfigError, match="every rank"):
        state.merge(st[:1])
    with pytest.raises(ConfigError, match="every rank"):
        state.merge([st[0], st[0]])
    other = dict(spec(2), seed="2")
    with pytest.raises(ConfigError, match="another schedule"):
        state.plan(st[0], other, 0)
    with pytest.raises(ConfigError, match="not a newtricks reader state"):
        state.plan({"step": 3}, spec(2), 0)
    with pytest.raises(ConfigError, match="not a job state|states of the ranks"):
        state.merge([state.merge(st)])
