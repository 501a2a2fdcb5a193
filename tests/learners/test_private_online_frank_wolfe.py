"""WDP-COCOL (online Frank-Wolfe): the first step's direction carries the counter noise at
the stated scale, and without noise it follows WDP's recursion (an independent reference);
it stays feasible without a projection, on a polytope through its decomposition.

The noise scale comes from the window tree's Privacy section and dp-accounting's sigma,
not from the learner; the counter-input sensitivity: test_learner_sensitivity.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from learner_cases import (
    HALF_HINGE,
    data_grad,
    nonprivate,
    released_path,
    unit_stream,
    window_node_sigma,
)
from scipy import stats

from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateOnlineFrankWolfe
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import ConvexHull, L2Ball, Simplex

EPS, DELTA = 1.0, 1e-5


def _ks_accepts(q: np.ndarray, df: int, nc: float, level: float = 1e-4) -> bool:
    """One-sample KS test of 'q is an i.i.d. nct(df, nc) sample' at size ``level``."""
    assert np.all(np.isfinite(stats.nct(df, nc).cdf(q)))  # scipy's nct is nan far out
    return stats.kstest(q, stats.nct(df, nc).cdf).pvalue > level


def test_frank_wolfe_first_step_direction_has_the_counter_noise_scale():
    # The LLOO step depends on the release only through the direction of
    # c_1 = e_1 + mu w_1 (x = 0: zero data gradients; S_1 = w_1 cancels the C0 terms), so
    # the scale of e_1 is seen against the known offset mu w_1, w_1 = -R 1/sqrt(d) (LO of
    # the ones vector). With r_1 >= 2R = diam C (asserted) the LLOO returns the global
    # minimiser p = -R c/||c||, and w_2 = w_1 + (p - w_1)/2 (a = 1/(2 rho^2), rho = 1).
    # Splitting e_1 ~ N(0, s^2 I) along w_1 and across it,
    #   Q = sqrt(d-1) <c, w1/R> / ||c_perp|| = (Z + k) / sqrt(chi2_{d-1}/(d-1)),
    # k = mu R / s: noncentral t with d-1 df and noncentrality k, exactly. s = node sigma
    # (t = 1: one node). d = 20, N = 200 learners, k ~ 4.8: the KS test at level 1e-4 has
    # critical distance 0.156 while the sup-distance to nct(19, k/1.5) or nct(19, 1.5k) is
    # 0.50 resp. 0.61 (nct CDFs computed apart), so those are rejected unless the ECDF is
    # 0.34 off (DKW: probability < 2 exp(-2 N 0.34^2) ~ 1e-20); the correct scale is
    # accepted with probability 1 - 1e-4.
    d, T, N, mu, R = 20, 16, 200, 40.0, 1.0
    w1 = -R * np.ones(d) / math.sqrt(d)
    stat = np.empty(N)
    for seed in range(N):
        m = PrivateOnlineFrankWolfe(d, loss=Regularized(HALF_HINGE, mu), domain=L2Ball(d, R),
                                    horizon=T, epsilon=EPS, delta=DELTA, seed=seed)
        np.testing.assert_array_equal(m.weights, w1)
        assert m.radius(1) >= 2 * R  # the local constraint of the LLOO is inactive
        m.learn_one(np.zeros(d), 0.0)
        u = -(2 * m.weights - w1) / R  # c_1 / ||c_1||, from p = 2 w_2 - w_1
        along = float(u @ w1) / R  # (e_par + mu R) / ||c_1||
        stat[seed] = math.sqrt(d - 1) * along / np.linalg.norm(u - along * w1 / R)
    s = window_node_sigma(T, 16)
    k = mu * R / s
    assert _ks_accepts(stat, d - 1, k), (k, stats.kstest(stat, stats.nct(d - 1, k).cdf))
    assert not _ks_accepts(stat, d - 1, k / 1.5) and not _ks_accepts(stat, d - 1, 1.5 * k)


def _ref_ball_lloo(x, r, c, R):
    """argmin <c, y> over {||y|| <= R} n {||y - x|| <= r}, unique for c != 0: either the
    minimiser of one ball (-R c^ or x - r c^) if it lies in the other ball, or a point on
    both spheres; those minimising <c, .> lie in span(x, c): the two circle points there.
    Returns the cheapest feasible candidate and which kind it was."""
    ch = c / np.linalg.norm(c)
    cands = [(-R * ch, "ball"), (x - r * ch, "local")]
    nx = np.linalg.norm(x)
    perp = ch - (ch @ x) * x / nx**2 if nx > 0 else np.zeros_like(x)
    if np.linalg.norm(perp) > 1e-12:  # else c is along x: a ball minimiser is feasible
        e1, e2 = x / nx, perp / np.linalg.norm(perp)
        a = (R * R - r * r + nx * nx) / (2 * nx)
        if R * R >= a * a:
            b = math.sqrt(R * R - a * a)
            cands += [(a * e1 + b * e2, "circle"), (a * e1 - b * e2, "circle")]
    tol = 1e-12 * (R + r)
    feasible = [(float(p @ c), k, p) for p, k in cands
                if np.linalg.norm(p) <= R + tol and np.linalg.norm(p - x) <= r + tol]
    _, kind, p = min(feasible, key=lambda f: f[0])
    return p, kind


def test_frank_wolfe_without_noise_follows_the_wdp_recursion():
    # WDP Alg. 2 as the PrivateOnlineFrankWolfe docstring parameterises it, on the unit
    # ball (rho = 1: a = 1/2, C0 = 16) without noise (E = 0): K = 74 L^2 with L = X (Y + R X)
    # + mu R = 3 (squared loss plus its regulariser: spec 5.2 step 3 bounds the whole
    # gradient), r_t = sqrt(2K)/(mu (t + C0)), c_t = G_t + mu((t + C0) w_t - S_t - C0 w_1),
    # w_{t+1} = w_t + a (LLOO(w_t, r_t, c_t) - w_t), w_1 = LO(1) = -1/sqrt(d).
    T, d, mu, R = 300, 3, 1.0, 1.0
    X, y = unit_stream(np.random.default_rng(5), T, d, "real")
    K, c0, a = 74.0 * (2.0 + mu * R) ** 2, 16.0, 0.5
    w1 = -R * np.ones(d) / math.sqrt(d)
    expected, w, G, S, kinds = [w1], w1.copy(), np.zeros(d), np.zeros(d), set()
    for t in range(1, T + 1):
        G += data_grad("squared", w, X[t - 1], y[t - 1]) + mu * w
        S += w
        c = G + mu * ((t + c0) * w - S - c0 * w1)
        p, kind = _ref_ball_lloo(w, math.sqrt(2 * K) / (mu * (t + c0)), c, R)
        kinds.add(kind)
        w = w + a * (p - w)
        expected.append(w)
    got = released_path(nonprivate(PrivateOnlineFrankWolfe, d, loss=Regularized(SquaredLoss(), mu),
                      domain=L2Ball(d, R), horizon=T), X, y)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-10, atol=1e-13)
    assert kinds == {"ball", "local", "circle"}, kinds  # every branch of the LLOO is used


@pytest.mark.parametrize("eps", [0.1, 1.0, float("inf")])
def test_frank_wolfe_stays_feasible_and_never_projects(eps, monkeypatch):
    # WDP spec test 8: simplex, no projection routine is ever called
    calls = []
    monkeypatch.setattr(Simplex, "project", lambda self, x: calls.append(x))
    rng = np.random.default_rng(0)
    d, horizon = 20, 2000
    X = np.abs(rng.normal(size=(horizon, d)))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ rng.dirichlet(np.ones(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        learner = PrivateOnlineFrankWolfe(d, domain=Simplex(d), horizon=horizon,
                                          loss=Regularized(SquaredLoss(), 1.0), epsilon=eps,
                                          delta=1e-5, seed=0)
    w = learner.run(X, y).weights
    assert not calls
    assert w.min() >= -1e-12
    assert np.max(np.abs(w.sum(axis=1) - 1.0)) <= 1e-12


def test_frank_wolfe_on_a_polytope_keeps_its_decomposition():
    # WDP spec test 8 (polytope given by vertices) and 10 (decomposition reproduces w)
    rng = np.random.default_rng(1)
    vertices = rng.normal(size=(7, 3))
    hull = ConvexHull(vertices)
    X = rng.normal(size=(300, 3)) * 0.5
    y = X @ [0.2, 0.1, -0.3]
    learner = PrivateOnlineFrankWolfe(3, domain=hull, horizon=300, epsilon=1.0, delta=1e-5,
                                      loss=Regularized(SquaredLoss(), 1.0), seed=0)
    w = learner.run(X, y).weights
    assert all(hull.contains(v, tol=1e-9) for v in w)
    np.testing.assert_allclose(learner._hull_weights @ vertices, learner.weights, atol=1e-12)
