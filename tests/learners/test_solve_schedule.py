"""PQFTL's public solve schedule (``solves_per_doubling``): it skips solves, never changes one.

The counters run at every step whatever the schedule, so the noise drawn is the every-step
learner's; a solved step must release exactly the every-step learner's w (same seed), a
skipped one the last solved w, and ``run`` must be the ``learn_one`` loop bit for bit,
through checkpoints, split runs and the helper process.
"""

from __future__ import annotations

import copy
import io
import math

import numpy as np
import pytest
from learner_cases import loop

from dpol._state_file import read_state, write_state
from dpol.datasets import linear_regression_stream
from dpol.errors import InvalidInputError
from dpol.learners import PrivateQuadraticFTL
from dpol.learners import _psd_solve as ps
from dpol.learners._solve_schedule import solved_steps


def reference_schedule(t: int, b: int, horizon: int) -> bool:
    """The rule as documented, written apart: every t < 2B, then multiples of 2^k for t
    in [2^k B, 2^(k+1) B), and the horizon."""
    if t < 2 * b or t == horizon:
        return True
    k = math.floor(math.log2(t / b))
    while b << k > t:  # guard the float log at exact powers
        k -= 1
    while b << (k + 1) <= t:
        k += 1
    return t % (1 << k) == 0


@pytest.mark.parametrize("b", [1, 3, 64, 100])
def test_schedule_is_the_documented_rule_with_b_solves_per_doubling(b):
    horizon = 20_000
    steps = np.arange(1, horizon + 1)
    mask = solved_steps(steps, b, horizon)
    assert mask.tolist() == [reference_schedule(int(t), b, horizon) for t in steps]
    assert bool(solved_steps(12_345, b, horizon)) == reference_schedule(12_345, b, horizon)
    for k in range(1, 7):  # B solves in each doubling [2^k B, 2^(k+1) B)
        assert mask[(b << k) - 1:(b << (k + 1)) - 1].sum() == b
    assert mask.sum() <= b * (1 + math.log2(horizon / b)) + 2
    assert solved_steps(steps, None, horizon).all()


@pytest.mark.parametrize("bad", [0, -3, 1.5, "8", True])
def test_bad_solves_per_doubling_is_refused(bad):
    with pytest.raises(InvalidInputError, match="solves_per_doubling"):
        PrivateQuadraticFTL(3, horizon=10, epsilon=1.0, solves_per_doubling=bad)


def _pair(d, horizon, b, **kw):
    kw = {"epsilon": 1.0, "delta": 1e-5, "seed": 3, **kw}
    return (PrivateQuadraticFTL(d, horizon=horizon, **kw),
            PrivateQuadraticFTL(d, horizon=horizon, solves_per_doubling=b, **kw))


@pytest.mark.filterwarnings("ignore::dpol.errors.NumericalWarning")  # fixes=False's
@pytest.mark.parametrize("d, kw", [
    (5, {}),  # dsyevd route
    (30, {"noise_ridge": True, "counter": "blt", "alpha": 0.01}),  # tridiagonal, BLT
    (4, {"fixes": False, "epsilon": 50.0}),  # JKT as printed (vec(x x^T), batched solve)
    (6, {"y_bound": 3.0, "counter": "honaker"}),  # labels rescaled
])
def test_solved_steps_release_the_every_step_w_and_skipped_ones_repeat_it(d, kw):
    horizon, b = 700, 8
    s = linear_regression_stream(horizon, d, seed=1)
    every, sched = _pair(d, horizon, b, **kw)
    full = every.run(s.X, s.y).weights
    loop_twin = copy.deepcopy(sched)
    got = sched.run(s.X, s.y).weights
    # got[t] is the release before step t + 1, i.e. after step t (t >= 1)
    after = np.vstack([got[1:], sched.weights])
    want = np.vstack([full[1:], every.weights])
    mask = solved_steps(np.arange(1, horizon + 1), b, horizon)
    assert np.array_equal(after[mask], want[mask])
    last = np.maximum.accumulate(np.where(mask, np.arange(horizon), -1))
    assert np.array_equal(after, want[last])  # skipped: the last solved w
    assert np.array_equal(sched.weights, every.weights)  # t = horizon is solved
    assert np.array_equal(loop(loop_twin, s.X, s.y), got)
    assert np.array_equal(loop_twin.weights, sched.weights)
    assert sched.privacy == every.privacy


def test_split_runs_and_checkpoints_continue_the_schedule():
    d, horizon, b = 7, 900, 5
    s = linear_regression_stream(horizon, d, seed=2)
    _, a = _pair(d, horizon, b, noise_ridge=True, counter="blt")
    fresh = copy.deepcopy(a)
    whole = copy.deepcopy(a).run(s.X, s.y).weights
    parts = []
    for lo, hi in [(0, 1), (1, 37), (37, 38), (38, 411)]:  # starts inside a stride
        parts.append(a.run(s.X[lo:hi], s.y[lo:hi]).weights)
    restored = PrivateQuadraticFTL.from_state(a.get_state())
    buf = io.BytesIO()
    write_state(buf, a)
    buf.seek(0)
    from_file = read_state(buf)
    rest = [m.run(s.X[411:], s.y[411:]).weights for m in (a, restored, from_file)]
    assert np.array_equal(np.vstack([*parts, rest[0]]), whole)
    assert np.array_equal(rest[1], rest[0]) and np.array_equal(rest[2], rest[0])
    # a state saved before the schedule existed (no attribute) solves every step
    old = fresh.get_state()
    del old["state"]["solves_per_doubling"]
    old["state"].pop("_lineage", None)
    legacy = PrivateQuadraticFTL.from_state(old)
    assert legacy.solves_per_doubling is None
    every, _ = _pair(d, horizon, b, noise_ridge=True, counter="blt")
    assert np.array_equal(legacy.run(s.X, s.y).weights, every.run(s.X, s.y).weights)


@pytest.mark.skipif(not ps._helper_possible(), reason="needs Linux and two cores")
def test_helper_process_solves_the_scheduled_steps_bit_for_bit(helpers):
    # d = 40, 1300 rows in three blocks of 576: ~120 solves, the helper takes chunks of
    # them into its compact shared array
    d, horizon, b = 40, 1300, 16
    s = linear_regression_stream(horizon, d, seed=4)
    every, a = _pair(d, horizon, b, n_jobs=2, noise_ridge=True, counter="blt")
    twin = copy.deepcopy(a)
    got = a.run(s.X, s.y).weights
    assert len(helpers) == 1 and not helpers[0].dead
    assert np.array_equal(got, loop(twin, s.X, s.y))
    assert np.array_equal(a.weights, twin.weights)
    full = every.run(s.X, s.y).weights
    mask = solved_steps(np.arange(1, horizon), b, horizon)
    assert np.array_equal(got[1:][mask], full[1:][mask])
