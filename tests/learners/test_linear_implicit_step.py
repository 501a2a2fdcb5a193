"""The implicit step's root finds at the ends of float64: no data-dependent crash, and an
active ball constraint met exactly (docs/errata.md, JKT-7)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.adapters.registry import make_learner
from dpol.learners._linear import implicit_step
from dpol.losses import HingeLoss, LogisticLoss


@pytest.mark.parametrize("name", ["igd", "pol"])
@pytest.mark.parametrize("x_bound", [1e20, 1e30, 1e60])
def test_rows_of_a_huge_declared_scale_are_learned_without_a_crash(name, x_bound):
    # at x_bound = 1e20 brentq gave up after its default 100 iterations (RuntimeError),
    # or was handed a bracket without a sign change when the step fell below an ulp of
    # the margin (ValueError): an exception that depends on the data tells streams apart
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * x_bound / 3.0
    y = np.sign(rng.normal(size=40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows beyond the bound: clipping is warned
        learner = make_learner(name, 3, horizon=40, epsilon=1.0, seed=0, x_bound=x_bound)
        learner.run(X, y)
    assert np.all(np.isfinite(learner.weights))


def test_a_step_below_an_ulp_of_the_margin_returns_the_margin():
    # s0 = <w, x> / c ~ 4e19 with c = 1 + eta alpha; the step eta gg phi'(s0) / c ~ 1e-22
    # leaves s1 == s0, and c s0 - <w, x> rounds below 0 while phi'(s0) > 0: the bracket
    # [s0, s0] had no sign change (ValueError; found by a seeded search)
    eta, alpha = 1e-22, 5.768959017160943e22
    w, x = np.array([2.770888466262316e20, 0.0]), np.array([1.0, 0.0])
    v = implicit_step(LogisticLoss(), alpha, w, x, -1.0, eta, None)
    np.testing.assert_array_equal(v, w / (1.0 + eta * alpha))


@pytest.mark.parametrize("loss", [LogisticLoss(), HingeLoss(h=0.25)])
def test_an_active_ball_is_met_on_its_sphere(loss):
    # the argmin lies on the sphere when the constraint is active; the multiplier's root
    # find leaves an error either way, and the final scaling removes its radial part
    # (seeded: 1,000 draws, nearly all active; the scaling leaves ||v|| within an ulp of
    # the radius, where an undershoot of the root find left up to 6.5 ulps)
    rng = np.random.default_rng(3)
    for _ in range(1000):
        w = rng.normal(size=4) * 3.0
        x = rng.normal(size=4)
        if np.linalg.norm(implicit_step(loss, 0.1, w, x, 1.0, 2.0, None)) <= 1.0:
            continue  # inactive: nothing to meet
        v = implicit_step(loss, 0.1, w, x, 1.0, 2.0, 1.0)
        assert abs(np.linalg.norm(v) - 1.0) <= 2 * np.finfo(float).eps
