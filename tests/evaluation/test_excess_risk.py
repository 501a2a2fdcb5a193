"""KNJ's excess empirical risk at every step (dpol.evaluation.excess_risk)."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError, NonPrivateWarning, NumericalWarning
from dpol.evaluation import best_fixed_point
from dpol.evaluation.excess_risk import (
    excess_empirical_risk,
    project_rows,
    released_models,
)
from dpol.learners import PrivateQuadraticFTL
from dpol.losses import SquaredLoss
from dpol.sets import Box, ConvexHull, L1Ball, L2Ball, Simplex

SETS = {
    "l2": lambda d: L2Ball(d, 0.6),
    "l1": lambda d: L1Ball(d, 0.8),
    "simplex": Simplex,
    "box": lambda d: Box(-0.3, 0.3, dim=d),
    "hull": lambda d: ConvexHull(np.vstack([np.eye(d), -np.eye(d)]) * 0.7),
    "none": lambda d: None,
}


def _stream(n=400, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.clip(X @ rng.normal(size=d) + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


@pytest.mark.parametrize("name", sorted(SETS))
def test_optimum_matches_a_direct_solve_and_the_certificate_holds(name):
    X, y = _stream()
    domain = SETS[name](5)
    W = np.random.default_rng(1).normal(size=X.shape) * 0.1
    if domain is not None:
        W = project_rows(domain, W)
    steps = np.array([1, 3, 10, 57, 400])
    r = excess_empirical_risk(W, X, y, domain, steps=steps)
    for k, t in enumerate(steps):
        ref = best_fixed_point(SquaredLoss(), X[:t], y[:t], domain, tol=1e-13, max_iter=200_000)
        # SquaredLoss carries 1/2: KNJ's loss is twice it
        opt = float(np.sum((y[:t] - X[:t] @ ref) ** 2))
        # the reported optimum is a feasible value (>= true min) within the certified gap;
        # 1e-9 absorbs the reference solver's own accuracy (tol 1e-13 on the mean gradient)
        assert r.optimum[k] >= opt - 1e-9
        assert r.optimum[k] <= opt + r.gap[k] + 1e-9
        risk = float(np.sum((y[:t] - X[:t] @ W[t - 1]) ** 2))
        np.testing.assert_allclose(r.risk[k], risk, rtol=1e-10, atol=1e-12)
    assert np.all(r.excess >= -1e-9)  # W lies in the domain, so it cannot beat the optimum
    np.testing.assert_allclose(r.excess, r.risk - r.optimum, rtol=1e-9, atol=1e-10)


def test_excess_of_the_exact_minimiser_is_zero():
    X, y = _stream(200, 4)
    domain = L1Ball(4, 0.5)
    r = excess_empirical_risk(np.zeros((200, 4)), X, y, domain)
    again = excess_empirical_risk(r.minimizers, X, y, domain)
    assert np.all(np.abs(again.excess) <= r.gap + 1e-9)


def test_released_models_shift_the_online_trace_by_one():
    X, y = _stream(30, 3)
    with pytest.warns(NonPrivateWarning):
        learner = PrivateQuadraticFTL(3, horizon=30, epsilon=float("inf"), delta=0.0)
    trace = learner.run(X, y)
    W = released_models(trace)
    np.testing.assert_array_equal(W[:-1], trace.weights[1:])
    np.testing.assert_array_equal(W[-1], trace.final_weights)
    direct = excess_empirical_risk(W, X, y)
    np.testing.assert_array_equal(excess_empirical_risk(trace, X, y).excess, direct.excess)


def test_unconverged_blocks_warn_and_report_their_gap():
    X, y = _stream(300, 6)
    with pytest.warns(NumericalWarning, match="max_iter"):
        r = excess_empirical_risk(np.zeros((300, 6)), X, y, L1Ball(6, 5.0), max_iter=1,
                                  tol=0.0, rtol=0.0)
    assert np.all(r.gap >= 0)


@pytest.mark.parametrize("kwargs, match", [
    ({"steps": [3, 2]}, "steps must be increasing"),
    ({"steps": [0, 2]}, "steps must be increasing"),
    ({"steps": [1.5]}, "steps must be increasing"),
    ({"domain": L2Ball(2)}, "domain must be None or a dpol.sets.ConvexSet of dim 3"),
    ({"tol": -1.0}, "tol must be >= 0"),
])
def test_bad_arguments_are_refused_by_name(kwargs, match):
    X, y = _stream(10, 3)
    with pytest.raises(InvalidInputError, match=match):
        excess_empirical_risk(np.zeros((10, 3)), X, y, **kwargs)


def test_bad_arrays_are_refused_by_name():
    X, y = _stream(10, 3)
    with pytest.raises(InvalidInputError, match="weights must have 10 rows"):
        excess_empirical_risk(np.zeros((9, 3)), X, y)
    with pytest.raises(InvalidInputError, match=r"y must have shape \(10,\)"):
        excess_empirical_risk(np.zeros((10, 3)), X, y[:-1])
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(InvalidInputError, match="X must contain only finite values"):
        excess_empirical_risk(np.zeros((10, 3)), bad, y)


@pytest.mark.parametrize("name", ["l2", "l1", "simplex", "box", "hull"])
def test_project_rows_matches_the_sets_projection(name):
    domain = SETS[name](4)
    V = np.random.default_rng(3).normal(size=(50, 4)) * 2
    expected = np.stack([domain.project(v) for v in V])
    np.testing.assert_allclose(project_rows(domain, V), expected, rtol=1e-12, atol=1e-12)
