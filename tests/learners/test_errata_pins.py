"""Pins of the spec errata the learners implement (WDP 8.6, 8.8, 8.10; JKT 5.4.2, 5.5).

Each test fails if the erratum decision is reverted to what the paper prints. The expected
values are recomputed here from the spec text, not read back from the library.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from learner_cases import ball_projection

from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateOnlineFrankWolfe, PrivateQuadraticFTL
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import Box, ConvexHull, L2Ball, Simplex

MU = 1.0
OCTAHEDRON = np.vstack([np.eye(3), -np.eye(3)])  # 0 is interior: its projection is no vertex


def _frank_wolfe(domain, horizon, epsilon=math.inf, bound=1.0):
    # squared loss with ||x|| <= bound, |y| <= bound, plus MU/2 ||w||^2
    loss = Regularized(SquaredLoss(x_bound=bound, y_bound=bound), MU)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)  # epsilon = inf: no noise
        return PrivateOnlineFrankWolfe(domain.dim, loss=loss, domain=domain, horizon=horizon,
                                       epsilon=epsilon, delta=1e-5, seed=0)


def _stream(dim, horizon, bound=1.0, seed=0):
    # rows strictly inside the bounds (0.99 bound): nothing is clipped
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(horizon, dim))
    X *= 0.99 * bound / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.full(dim, 1.0 / dim) + 0.05 * bound * rng.normal(size=horizon),
                -0.99 * bound, 0.99 * bound)
    return X, y


def _record_oracle(monkeypatch, learner):
    """Wrap the oracle the learner calls; record (point, radius, cost) and call through."""
    domain, calls = learner.domain, []
    name = "lloo_weights" if isinstance(domain, ConvexHull) else "local_linear_oracle"
    inner = getattr(domain, name)

    def wrapper(x, r, c):
        point = np.asarray(x) @ domain.vertices if name == "lloo_weights" else np.array(x)
        calls.append((point, float(r), np.array(c)))
        return inner(x, r, c)

    monkeypatch.setattr(domain, name, wrapper)  # on the instance only
    return calls


def _exact_leader_gradient_sums(W, X, y):
    """g_t = sum_{tau <= t} grad f_tau(w_tau), f = 1/2 (<w, x> - y)^2 + MU/2 ||w||^2."""
    grads = (np.einsum("ij,ij->i", W, X) - y)[:, None] * X + MU * W
    return np.cumsum(grads, axis=0)


# ----------------------------------------------------------------- WDP erratum 8.6
@pytest.mark.parametrize("domain, epsilon", [
    (Simplex(4), math.inf), (Box(-0.5, 1.0, dim=3), math.inf), (ConvexHull(OCTAHEDRON), math.inf),
    (Simplex(4), 1.0)])
def test_lloo_receives_the_gradient_of_j_hat_at_the_current_point(domain, epsilon, monkeypatch):
    # The printed line 7 passes the unconstrained target sum x_tau + C0 x_1 - g_hat/mu; the
    # erratum requires grad J_hat_t(w_t) = g_hat_t + mu((t + C0) w_t - S_t - C0 w_1), with
    # the (t + C0) w_t term (spec 5, 5.2). C0 = 16 rho^2, rho = sqrt(d) for these sets.
    horizon, d = 80, domain.dim
    learner = _frank_wolfe(domain, horizon, epsilon)
    calls = _record_oracle(monkeypatch, learner)
    releases, add = [], learner._counter.add
    monkeypatch.setattr(learner._counter, "add", lambda v: releases.append(add(v)) or releases[-1])
    X, y = _stream(d, horizon, seed=3)
    W = learner.run(X, y).weights  # W[t - 1] = w_t, the point of step t
    assert learner.n_clipped_ == 0 and len(calls) == horizon
    S = np.cumsum(W, axis=0)
    exact = _exact_leader_gradient_sums(W, X, y)
    g_hat = np.array(releases) + MU * S  # the counter releases the data part only
    if math.isinf(epsilon):  # no noise: the released sums are the exact ones
        np.testing.assert_allclose(g_hat, exact, rtol=1e-10, atol=1e-12 * horizon)
    c0 = 16.0 * d
    for t in range(1, horizon + 1):
        point, _, cost = calls[t - 1]
        expected = g_hat[t - 1] + MU * ((t + c0) * W[t - 1] - S[t - 1] - c0 * W[0])
        np.testing.assert_allclose(point, W[t - 1], rtol=0, atol=1e-12)
        # atol: the terms are O(t + C0) and partly cancel, so a few ulps of that size
        np.testing.assert_allclose(cost, expected, rtol=1e-10, atol=1e-12 * (t + c0))


# ----------------------------------------------------- WDP erratum 8.8, spec 9 test 11
def _simplex_projection(v):
    # sort-based Euclidean projection on {x >= 0, sum x = 1} (Held, Wolfe & Crowder 1974)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.maximum(v - css[k] / (k + 1), 0.0)


INVARIANT_CASES = {
    # name: (domain, rho of its LLOO (spec 6.1; the L2 ball's oracle is exact), projection)
    "simplex": (Simplex(5), math.sqrt(5), _simplex_projection),
    "l2ball": (L2Ball(3), 1.0, ball_projection),
}


def _check_invariant(case, bound, monkeypatch):
    """Spec 5.2 invariant at every step: h_t <= K/sigma_t, ||w_t - x*_t|| <= r_t."""
    domain, rho, project = INVARIANT_CASES[case]
    horizon, d = 300, domain.dim
    learner = _frank_wolfe(domain, horizon, bound=bound)
    calls = _record_oracle(monkeypatch, learner)
    X, y = _stream(d, horizon, bound=bound, seed=1)
    W = learner.run(X, y).weights
    assert learner.n_clipped_ == 0
    # Spec 1: L bounds ||grad f_t|| on C for the whole loss f_t = phi + mu/2 ||w||^2, so
    # L = X (Y + R X) + mu R (R = 1: the radius of both sets; spec 5.2 step 3 needs the
    # full gradient u = grad f_{t+1}(w_{t+1})). epsilon = inf: E = 0, G_u = L.
    lipschitz = bound * (bound + bound) + MU * 1.0
    c0, k_const = 16.0 * rho**2, 74.0 * rho**4 * lipschitz**2
    assert learner.gradient_bound == pytest.approx(lipschitz, rel=1e-12)
    g_hat = _exact_leader_gradient_sums(W, X, y)
    for t in range(1, horizon + 1):
        sigma = MU * (t + c0)
        r_t = math.sqrt(2.0 * k_const) / sigma
        past, w_t, w_1 = W[:t], W[t - 1], W[0]

        def j_hat(x, g=g_hat[t - 1], past=past, w_1=w_1):  # spec 5, eqs. 17-18
            return (g @ x + MU / 2 * np.sum((x - past) ** 2)
                    + c0 * MU / 2 * float((x - w_1) @ (x - w_1)))

        # J_hat_t = sigma_t/2 ||x - m_t||^2 + const: its minimiser over C is Proj_C(m_t)
        m_t = (past.sum(axis=0) + c0 * w_1 - g_hat[t - 1] / MU) / (t + c0)
        x_star = project(m_t)
        grad = g_hat[t - 1] + MU * ((t + c0) * x_star - past.sum(axis=0) - c0 * w_1)
        # optimality of x_star: the projected-gradient fixed point x = Proj(x - grad/sigma)
        np.testing.assert_allclose(project(x_star - grad / sigma), x_star, atol=1e-12)
        h_t = j_hat(w_t) - j_hat(x_star)
        assert h_t <= k_const / sigma, (t, h_t * sigma / k_const)
        assert np.linalg.norm(w_t - x_star) <= r_t, (t, np.linalg.norm(w_t - x_star) / r_t)
        # the oracle's radius decays like 1/sigma_t (the printed r_t^2 = C1/sigma_t, a
        # length^2 only up to a lost factor, decays like 1/sqrt(sigma_t)) and is at most
        # the spec's r_t
        radius = calls[t - 1][1]
        assert radius * sigma == pytest.approx(calls[0][1] * MU * (1 + c0), rel=1e-12)
        assert radius <= r_t * (1 + 1e-12)


@pytest.mark.parametrize("case", sorted(INVARIANT_CASES))
def test_cocol_invariant_holds_at_every_step(case, monkeypatch):
    # Spec 9 test 11 with the default bounds X = Y = 1 (noise-free, so E = 0 is exact)
    _check_invariant(case, 1.0, monkeypatch)


@pytest.mark.parametrize("case", sorted(INVARIANT_CASES))
def test_cocol_invariant_holds_with_small_data_bounds(case, monkeypatch):
    # X = Y = 0.1: the data part of the gradient is <= 0.02 but mu ||w|| reaches 1, so a K
    # built from the data loss's Lipschitz constant alone (as before the fix) fails here
    _check_invariant(case, 0.1, monkeypatch)


# ---------------------------------------------------------------- WDP erratum 8.10
@pytest.mark.parametrize("domain", [Simplex(4), Box(-0.5, 1.0, dim=3), ConvexHull(OCTAHEDRON)],
                         ids=["simplex", "box", "hull"])
def test_first_released_point_is_a_vertex(domain):
    # The general-polytope LLOO needs x_1 with a known decomposition: a vertex, not e.g.
    # Proj_C(0) (the uniform point of the simplex, 0 in the box and the octahedron).
    learner = _frank_wolfe(domain, 5)
    X, y = _stream(domain.dim, 5)
    w_1 = learner.run(X, y).weights[0]
    if isinstance(domain, Simplex):
        assert sorted(w_1) == [0.0] * (domain.dim - 1) + [1.0]
    elif isinstance(domain, Box):
        assert np.all((w_1 == domain.low) | (w_1 == domain.high))
    else:
        assert np.any(np.all(domain.vertices == w_1, axis=1))


# ------------------------------------------------------------- JKT erratum 5.4 item 2
def test_pqftl_u_counter_bound_is_r_squared_and_extreme_elements_pass_unclipped():
    # R = 2, so R^2 = 4 != R. ||x|| = R and |y| = R give ||y x|| = R^2 and
    # ||svec(x x^T)|| = ||x||^2 = R^2: inside both counters' bounds, nothing clipped.
    # Algorithm 4 as printed passes bound R for the u tree, which would clip y x to norm R.
    R, d = 2.0, 3
    rows = np.array([[R, 0, 0], [0, -R, 0], [0, 0, R], [-R, 0, 0]])
    labels = np.array([R, -R, -R, R])
    looped = PrivateQuadraticFTL(d, horizon=8, epsilon=1.0, delta=1e-5, bound=R, seed=0)
    looped.learn_one(rows[0], labels[0])
    ran = PrivateQuadraticFTL(d, horizon=8, epsilon=1.0, delta=1e-5, bound=R, seed=0)
    ran.run(rows, labels)
    for learner in (looped, ran):
        v_counter, u_counter = learner._counters
        assert learner.n_clipped_ == v_counter.n_clipped_ == u_counter.n_clipped_ == 0
        assert v_counter.bound == u_counter.bound == R**2
    # noise-free: the released u sum is the exact sum of the y x (not of clipped ones)
    with pytest.warns(NonPrivateWarning):
        exact = PrivateQuadraticFTL(d, horizon=8, epsilon=math.inf, bound=R)
    released = exact._counters[1].run(labels[:, None] * rows)
    np.testing.assert_array_equal(released[-1], labels @ rows)
    assert exact._counters[1].n_clipped_ == 0


# ----------------------------------------------------------------- JKT erratum 5.5
def test_pqftl_clip_radius_keeps_the_counterexample_unclipped():
    # Spec 5.5: d = 1, v = y = R = 4, alpha = 100. The exact FTL iterate after t copies
    # of (v, y) is (t alpha + t v^2)^-1 t y v = 16/116 = 0.138: inside
    # min(R/sqrt(alpha), R^2/alpha) = min(0.4, 0.16), outside the printed 2R/alpha = 0.08.
    R, alpha, horizon = 4.0, 100.0, 3
    with pytest.warns(NonPrivateWarning):
        learner = PrivateQuadraticFTL(1, horizon=horizon, epsilon=math.inf, alpha=alpha,
                                      bound=R, fixes=True)
    trace = learner.run(np.full((horizon, 1), R), np.full(horizon, R))
    exact = R * R / (alpha + R * R)
    assert 2 * R / alpha < exact < min(R / math.sqrt(alpha), R**2 / alpha)
    assert exact == pytest.approx(0.138, abs=5e-4)
    np.testing.assert_allclose(trace.weights[1:, 0], exact, rtol=1e-12)  # after steps 1, 2
    np.testing.assert_allclose(trace.final_weights, [exact], rtol=1e-12)
    assert learner.n_clipped_ == 0
    assert learner.radius == pytest.approx(0.16, rel=1e-12)
    with pytest.warns(NonPrivateWarning):  # learn_one has its own solve-and-clip path
        looped = PrivateQuadraticFTL(1, horizon=1, epsilon=math.inf, alpha=alpha, bound=R)
    looped.learn_one([R], R)
    np.testing.assert_allclose(looped.weights, [exact], rtol=1e-12)


@pytest.mark.parametrize("R, alpha", [(4.0, 100.0), (1.0, 1.0), (2.0, 0.5), (0.5, 4.0),
                                      (3.0, 9.0), (10.0, 0.01)])
def test_pqftl_clip_radius_is_min_of_r_over_sqrt_alpha_and_r_squared_over_alpha(R, alpha):
    # ||w|| <= R/sqrt(alpha) (objective at w >= t alpha/2 ||w||^2, at 0 <= t R^2/2) and
    # ||w|| <= t R^2/(t alpha); neither is 2R/alpha (spec 5.5, first bullet)
    learner = PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, alpha=alpha, bound=R)
    expected = min(R / math.sqrt(alpha), R * R / alpha)
    assert learner.radius == pytest.approx(expected, rel=1e-12)
