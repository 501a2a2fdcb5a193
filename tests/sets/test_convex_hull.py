"""ConvexHull: its min-norm point, its LLOO on maintained weights, Garber–Hazan's rho.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull as QHull
from set_cases import check_lloo, feasible_points, slsqp, slsqp_local_opt

from dpol.errors import InvalidInputError
from dpol.sets import ConvexHull, GaugeUndefinedError, min_norm_point


def test_min_norm_point_matches_slsqp_and_is_sparse():
    rng = np.random.default_rng(3)
    for k, d in [(3, 2), (10, 3), (40, 5), (8, 12)]:
        for shift in (0.0, 2.0):
            P = rng.normal(size=(k, d)) + shift
            support, lam = min_norm_point(P)
            assert len(support) <= d + 1 and np.all(lam > 0) and abs(lam.sum() - 1) < 1e-15
            y = lam @ P[support]
            assert y @ y - (P @ y).min() <= 1e-12 * (P * P).sum(1).max()  # Frank–Wolfe gap
            cons = [{"type": "eq", "fun": lambda v: v.sum() - 1, "jac": lambda v, k=k: np.ones(k)}]
            v = slsqp(lambda v, P=P: np.sum((v @ P) ** 2), lambda v, P=P: 2 * P @ (v @ P),
                      np.full(k, 1 / k), [(0, 1)] * k, cons)
            np.testing.assert_allclose(y, v @ P, atol=1e-6)


@pytest.mark.parametrize("d", (2, 5))
def test_hull_lloo_with_the_garber_hazan_rho(d):
    rng = np.random.default_rng(60 + d)
    pts = rng.normal(size=(d + 8, d))
    eq = QHull(pts).equations  # rows (a, b0) with a·y + b0 <= 0
    S0 = ConvexHull(pts)
    S = ConvexHull(pts, rho=S0.rho_bound(eq[:, :-1], -eq[:, -1]))
    partial = 0
    for x in feasible_points(S, rng, 25):
        c = rng.normal(size=S.dim)
        r = S.diameter / S.rho * rng.uniform(0.05, 1.5)  # so that Δ = ρr/D is often < 1
        lam = S.decompose(x)
        p = S.local_linear_oracle(x, r, c, weights=lam)
        check_lloo(S, x, r, c, p, *slsqp_local_opt(S, x, r, c))
        partial += not np.allclose(p, S.linear_oracle(c))
    assert partial >= 10  # the test exercises the partial moves, not only the LO


def test_hull_maintained_decomposition_and_small_rho_keep_feasibility():
    rng = np.random.default_rng(90)
    V = rng.normal(size=(15, 4))
    for S in (ConvexHull(V), ConvexHull(V, rho=1e-3)):
        lam = np.zeros(15)
        lam[0] = 1.0
        x = V[0].copy()
        for _ in range(300):  # a COCOL-like loop: x ← (1 − α)x + α·p, weights alike
            lam_p = S.lloo_weights(lam, rng.uniform(0, 1), rng.normal(size=4))
            lam, x = 0.5 * lam + 0.5 * lam_p, 0.5 * x + 0.5 * (lam_p @ V)
            assert np.all(lam >= 0) and abs(lam.sum() - 1) < 1e-12
            np.testing.assert_allclose(lam @ V, x, atol=1e-12)
            assert S.contains(x)
        p = S.local_linear_oracle(x, 0.3, rng.normal(size=4), weights=lam)
        assert S.contains(p) and np.linalg.norm(p - x) <= S.rho * 0.3 + 1e-12
        w = S.decompose(x)
        np.testing.assert_allclose(w @ V, x, atol=1e-12)
        assert np.count_nonzero(w) <= 5



def test_convex_hull_has_no_gauge():
    with pytest.raises(GaugeUndefinedError, match="ConvexHull has no gauge"):
        ConvexHull(np.vstack([np.eye(3), -np.eye(3)])).gauge(np.ones(3))


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: ConvexHull([1.0, 2.0]), "vertices must be a numeric array of shape"),
        (lambda: ConvexHull([[1.0, np.inf]]), "vertices must contain only finite"),
        (lambda: ConvexHull(np.eye(2), rho=0.0), "rho must be > 0"),
        (lambda: ConvexHull(np.eye(2)).decompose([2.0, 2.0]), "x must lie in the convex hull"),
        (lambda: ConvexHull(np.eye(2)).lloo_weights([0.5, 0.6], 1.0, [1, 0]), "weights must"),
        (lambda: ConvexHull(np.eye(2)).local_linear_oracle([0.5, 0.5], 1.0, [1, 0],
                                                           weights=[1.0, 0.0]), "weights must"),
        (lambda: ConvexHull(np.eye(2)).rho_bound([[1.0, 0.0]], [0.5]), "b must satisfy"),
    ],
)
def test_bad_constructor_arguments(build, match):
    with pytest.raises(InvalidInputError, match=match):
        build()
