"""Learners on a counter of an endless stream (``counter="unbounded_tree"``).

The learner has a horizon, the counter needs none: it is built with ``horizon=None``, its
noise sized by the one calibrator (:func:`dpol.accounting.calibrate` on the noise kind's
events, alone or jointly) at the learner's epsilon, so the learner's
guarantee stays exact: the same target epsilon as on the binary tree, certified by
dp-accounting from the events, with noise of the counter's own (horizon-free) sensitivity.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.accounting import calibrate, noise_events
from dpol.accounting.closed_forms import gaussian_noise_multiplier
from dpol.counters import COUNTER_NAMES, UnboundedTreeCounter
from dpol.errors import HorizonExceededError
from dpol.evaluation.audit_suite import CASES, SUITE_DELTA, SUITE_EPSILON
from dpol.learners import PrivateFTAL, PrivateQuadraticFTL
from dpol.losses import Regularized, SquaredLoss
from dpol.noise import noise_kind
from dpol.sets import L2Ball

ENDLESS = [name for name, case in CASES.items() if case.counter == "unbounded_tree"]


def counters_of(learner):
    return list(getattr(learner, "_counters", None) or [learner._counter])


def test_every_learner_with_a_counter_takes_the_unbounded_tree():
    assert "unbounded_tree" in COUNTER_NAMES
    with_counter = {case.learner for case in CASES.values() if case.counter is not None}
    assert {CASES[name].learner for name in ENDLESS} == with_counter


@pytest.mark.parametrize("name", ENDLESS)
def test_privacy_is_exact_and_the_counter_has_no_horizon(name):
    learner = CASES[name].build(0)
    counters = counters_of(learner)
    assert all(isinstance(c, UnboundedTreeCounter) and c.horizon is None for c in counters)
    # the target, certified from the events (not typed in), as on the binary tree
    tree = CASES[name.replace("unbounded_tree", "binary_tree")].build(0)
    assert learner.privacy.epsilon == tree.privacy.epsilon == SUITE_EPSILON
    assert learner.privacy.delta == SUITE_DELTA
    # the noise: the multiplier of the one calibrator times the counter's sensitivity
    # (joint counters share one std, sized for the stacked sensitivity)
    if len(counters) == 1:
        z = calibrate(noise_events(noise_kind("gaussian")), SUITE_EPSILON, SUITE_DELTA)
        (c,) = counters
        assert c.noise_multiplier == z
        assert c.noise_scale == pytest.approx(z * c.sensitivity, rel=1e-12)
    else:
        assert len({c.noise_scale for c in counters}) == 1


def test_ftal_noise_does_not_grow_with_the_learner_horizon_and_the_horizon_holds():
    # the unbounded tree's std is z Delta at every horizon (one unit column); the binary
    # tree's grows with sqrt(floor(log2 T) + 1)
    def ftal(horizon, counter):
        return PrivateFTAL(2, loss=Regularized(SquaredLoss(), 0.5), domain=L2Ball(2),
                           horizon=horizon, epsilon=1.0, delta=1e-5, counter=counter,
                           seed=0)

    scales = [ftal(T, "unbounded_tree")._counter.noise_scale for T in (16, 2**10, 2**20)]
    assert scales[0] == scales[1] == scales[2]
    z = gaussian_noise_multiplier(1.0, 1e-5)
    assert scales[0] == pytest.approx(z * ftal(16, "unbounded_tree")._counter.sensitivity,
                                      rel=1e-12)
    assert ftal(2**10, "tree")._counter.noise_scale > scales[0]
    learner = ftal(8, "unbounded_tree")
    X = np.random.default_rng(0).uniform(-0.5, 0.5, (9, 2))
    learner.run(X[:8], X[:8, 0])
    with pytest.raises(HorizonExceededError):
        learner.learn_one(X[8], X[8, 0])
    assert learner._counter.t == 8


def test_pqftl_joint_counters_on_the_unbounded_tree_are_one_mechanism():
    # the stacked element moves the stacked node vectors by its bound times the common
    # unit column: the events compose to the target, no more
    m = PrivateQuadraticFTL(3, horizon=64, epsilon=1.0, delta=1e-5, counter="unbounded_tree",
                            seed=0)
    assert m.privacy.epsilon == 1.0
    assert [c.strategy.column_norm_sq() for c in counters_of(m)] == [1.0, 1.0]
