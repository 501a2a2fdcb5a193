"""The logistic loss: its exact gradient sensitivity and its stability at extreme margins.

The logistic gradient at w is -sigma(-<w, v>) v with v = y x, so one changed example moves
it by at most the diameter D of that set of vectors, not by 2 L (the two gradients cannot
both be as long as L and point in opposite directions). These tests check the certified
bound against brute force (it must never be exceeded) and against an explicit attaining
pair (it must not be loose). FTAL's use of it: tests/learners/test_private_ftal.py; the
constants every loss declares: test_losses.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import expit

from dpol.losses import LogisticLoss
from dpol.losses.logistic import logistic_gradient_diameter

#: the branch and bound returns the best value found plus this slack (its default tol)
TOL = 1e-3


def _attained(rho: float) -> float:
    """||h(v) - h(v')|| for the mirror pair v, v' = (cos t, +-sin t), w = rho e1, best t."""
    def gap(t):
        s = expit(-rho * math.cos(t))
        return -2.0 * s * math.sin(t)  # the pair differs only in the mirrored coordinate
    res = minimize_scalar(gap, bounds=(0.0, math.pi), method="bounded",
                          options={"xatol": 1e-10})
    return -float(res.fun)


@pytest.mark.parametrize(("rho", "slack"), [(0.1, 1e-2), (0.5, 1e-2), (1.0, 2 * TOL),
                                             (2.0, 2 * TOL), (4.0, 2 * TOL)])
def test_diameter_is_attained_within_its_tolerance(rho, slack):
    # Catches a loose bound: an explicit pair of gradients (w = rho e1, x and its mirror
    # image about w, y = y' = 1) is at least D - slack apart, so the bound is tight. The
    # slack is the branch and bound's tol (best found + tol, plus the best's own gap),
    # and 1% where a flat ridge of near-maximal pairs (small rho) stops it early.
    bound = logistic_gradient_diameter(rho)
    pair = _attained(rho)
    assert pair <= bound
    assert pair >= bound - slack
    # and the explicit pair really is a pair of logistic gradients
    loss, w = LogisticLoss(), np.array([rho, 0.0, 0.0])
    res = minimize_scalar(lambda a: -2 * expit(-rho * math.cos(a)) * math.sin(a),
                          bounds=(0.0, math.pi), method="bounded")
    a = float(res.x)
    x1, x2 = np.array([math.cos(a), math.sin(a), 0.0]), np.array([math.cos(a), -math.sin(a), 0.0])
    direct = np.linalg.norm(loss.grad(w, x1, 1.0) - loss.grad(w, x2, 1.0))
    assert direct == pytest.approx(pair, rel=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_diameter_is_never_exceeded_by_brute_force(seed):
    # Catches an unsound bound (a privacy failure): 200,000 random examples pairs at random
    # iterates in d = 4 (unit and shorter x, labels in [-1, 1] and +-1, iterates inside and
    # on the sphere), plus local ascent from the best pairs found, never exceed D.
    rng = np.random.default_rng(seed)
    radius = [0.5, 1.0, 2.0, 3.0][seed]
    loss = LogisticLoss()
    bound = loss.gradient_sensitivity(radius)
    n, d = 200_000, 4
    W = rng.normal(size=(n, d))
    W *= (radius * rng.uniform(0.5, 1.0, size=(n, 1)) ** 0.25) / np.linalg.norm(
        W, axis=1, keepdims=True)
    X1, X2 = (rng.normal(size=(n, d)) for _ in range(2))
    for X in (X1, X2):
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        X *= np.where(rng.random((n, 1)) < 0.5, 1.0, rng.uniform(size=(n, 1)))
    y1 = np.where(rng.random(n) < 0.5, rng.choice([-1.0, 1.0], n), rng.uniform(-1, 1, n))
    y2 = np.where(rng.random(n) < 0.5, rng.choice([-1.0, 1.0], n), rng.uniform(-1, 1, n))

    def grads(W, X, y):
        return (-y * expit(-y * np.einsum("ij,ij->i", W, X)))[:, None] * X

    gaps = np.linalg.norm(grads(W, X1, y1) - grads(W, X2, y2), axis=1)
    assert gaps.max() <= bound
    # local ascent on the best pair (sphere-constrained by normalisation)
    best = int(np.argmax(gaps))
    state = np.concatenate([W[best], X1[best], X2[best]])

    def neg_gap(z):
        w = z[:d] * min(1.0, radius / max(np.linalg.norm(z[:d]), 1e-300))
        a = z[d:2 * d] / max(1.0, np.linalg.norm(z[d:2 * d]))
        b = z[2 * d:] / max(1.0, np.linalg.norm(z[2 * d:]))
        ga = -expit(-(w @ a)) * a
        gb = -expit(-(w @ b)) * b
        return -float(np.linalg.norm(ga - gb))

    from scipy.optimize import minimize
    res = minimize(neg_gap, state, method="Nelder-Mead",
                   options={"maxiter": 4000, "xatol": 1e-9, "fatol": 1e-12})
    assert -res.fun <= bound
    assert -res.fun >= gaps.max() - 1e-12


def test_diameter_limits_and_scaling():
    # D(0) = 1 (gradients -y x / 2), D -> 2 as the radius grows, D < 2 sigma(rho) = 2 L
    # for a finite radius, increasing in the radius; X and Y scale it linearly.
    assert logistic_gradient_diameter(0.0) == 1.0
    assert logistic_gradient_diameter(math.inf) == 2.0
    values = [logistic_gradient_diameter(r) for r in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)]
    assert values == sorted(values)
    for r, v in zip((0.25, 0.5, 1.0, 2.0, 4.0, 8.0), values, strict=True):
        assert v < 2 * expit(r)
    loss = LogisticLoss(x_bound=2.0, y_bound=0.5)
    assert loss.gradient_sensitivity(3.0) == pytest.approx(
        1.0 * logistic_gradient_diameter(3.0), rel=1e-12)
    assert loss.gradient_sensitivity(3.0, "add_remove") == loss.lipschitz(3.0)
    assert LogisticLoss().gradient_sensitivity(None) == 2.0
    with pytest.raises(ValueError, match="neighbouring"):
        LogisticLoss().gradient_sensitivity(1.0, "replace")


def test_logistic_is_stable_at_extreme_margins():
    loss, x = LogisticLoss(), np.array([1.0])
    assert loss.value(np.array([800.0]), x, 1.0) == 0.0
    assert loss.value(np.array([-800.0]), x, 1.0) == 800.0
    np.testing.assert_array_equal(loss.grad(np.array([-800.0]), x, 1.0), [-1.0])
    np.testing.assert_array_equal(loss.grad(np.array([800.0]), x, 1.0), [-0.0])
