"""Every constraint set, one contract: projections, linear and local linear oracles, geometry.

Reference solutions come from scipy (SLSQP for the non-linear problems, HiGHS linprog for
the ℓ₁-relaxed LPs) on small instances, and from exact optimality certificates: the
projection P(a) is correct iff max_{v in set} ⟨a − P(a), v − P(a)⟩ <= 0, a maximum the
linear oracle evaluates. What a single set does beyond this contract, and the checks every
set inherits, are in that set's own file (test_box.py, ..., test_sets_base.py).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.spatial.distance import pdist
from set_cases import (
    ALL,
    DIMS,
    NAMES,
    check_lloo,
    feasible_points,
    lloo_instances,
    make_set,
    parametrisation,
    slsqp,
    slsqp_local_opt,
)

from dpol.sets import Box, L1Ball, L2Ball, Simplex


# ------------------------------------------------------------------ scipy references
def slsqp_projection(S, a):
    M, bounds, cons, start = parametrisation(S)
    v0 = start(S.project(a) * 0.5 + S.linear_oracle(a) * 0.5)
    return M @ slsqp(lambda v: np.sum((M @ v - a) ** 2), lambda v: 2 * M.T @ (M @ v - a),
                     v0, bounds, cons)


def l1_relaxed_lp(S, x, budget, c):
    """min ⟨c, y⟩ s.t. y in set, ‖y − x‖₁ <= budget, by HiGHS (variables y, e, t)."""
    d, eye, zero = S.dim, np.eye(S.dim), np.zeros((S.dim, S.dim))
    A = [np.hstack([eye, -eye, zero]), np.hstack([-eye, -eye, zero]),
         np.concatenate([np.zeros(d), np.ones(d), np.zeros(d)])[None]]
    b = [x, -x, [budget]]
    bounds, A_eq, b_eq = [(None, None)] * d + [(0, None)] * (2 * d), None, None
    if isinstance(S, L1Ball):
        A += [np.hstack([eye, zero, -eye]), np.hstack([-eye, zero, -eye]),
              np.concatenate([np.zeros(2 * d), np.ones(d)])[None]]
        b += [np.zeros(d), np.zeros(d), [S.radius]]
    elif isinstance(S, Box):
        bounds = list(zip(S.low, S.high, strict=True)) + bounds[d:]
    else:  # simplex
        bounds = [(0, None)] * d + bounds[d:]
        A_eq, b_eq = np.concatenate([np.ones(d), np.zeros(2 * d)])[None], [1.0]
    res = linprog(np.concatenate([c, np.zeros(2 * d)]), A_ub=np.vstack(A), b_ub=np.concatenate(b),
                  A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return res.fun


# ----------------------------------------------------------------------- projection
@pytest.mark.parametrize(("name", "d"), ALL)
def test_projection_is_idempotent_inside_and_satisfies_the_vi(name, d):
    S, rng = make_set(name, d), np.random.default_rng(d)
    for scale in (0.1, 1.0, 5.0):
        for _ in range(15):
            a = rng.normal(size=S.dim) * scale * max(S.radius, 1.0) / math.sqrt(d)
            p = S.project(a)
            assert S.contains(p)
            np.testing.assert_allclose(S.project(p), p, atol=1e-12 * (1 + S.radius))
            g = a - p  # exact VI: max over the set of ⟨a − p, v − p⟩ is at v = LO(−g)
            tol = 1e-10 * (1 + np.linalg.norm(a)) ** 2
            assert g @ (S.linear_oracle(-g) - p) <= tol
            for v in feasible_points(S, rng, 6):
                assert g @ (v - p) <= tol
            b = a + rng.normal(size=S.dim) * scale  # non-expansive
            assert np.linalg.norm(S.project(b) - p) <= np.linalg.norm(b - a) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("name", [n for n in NAMES])
@pytest.mark.parametrize("d", (2, 5))
def test_projection_matches_slsqp(name, d):
    S, rng = make_set(name, d), np.random.default_rng(7 + d)
    for _ in range(8):
        a = rng.normal(size=S.dim) * 2.0
        ref = slsqp_projection(S, a)
        np.testing.assert_allclose(S.project(a), ref, atol=1e-6)


# ------------------------------------------------------------------- linear oracle
@pytest.mark.parametrize(("name", "d"), ALL)
def test_linear_oracle_is_optimal(name, d):
    S, rng = make_set(name, d), np.random.default_rng(20 + d)
    points = feasible_points(S, rng, 200)
    for _ in range(30):
        c = rng.normal(size=S.dim)
        v = S.linear_oracle(c)
        assert S.contains(v)
        assert np.all(points @ c >= v @ c - 1e-12)
        assert np.linalg.norm(v) <= S.radius * (1 + 1e-12)


def known_vertices(S):
    d = S.dim
    if isinstance(S, L1Ball):
        return np.vstack([np.eye(d), -np.eye(d)]) * S.radius
    if isinstance(S, Simplex):
        return np.eye(d)
    if isinstance(S, Box):
        return np.array([np.where(m, S.high, S.low) for m in itertools.product([0, 1], repeat=d)])
    return S.vertices


@pytest.mark.parametrize("name", ["l1", "simplex", "box", "hull-random"])
@pytest.mark.parametrize("d", (2, 5))
def test_linear_oracle_beats_every_vertex(name, d):
    S, rng = make_set(name, d), np.random.default_rng(30 + d)
    V = known_vertices(S)
    for _ in range(50):
        c = rng.normal(size=S.dim)
        np.testing.assert_allclose(S.linear_oracle(c) @ c, (V @ c).min(), rtol=1e-13)


# --------------------------------------------------------------------------- LLOO
LLOO_CASES = [(n, d) for n in NAMES if n != "hull-random" for d in DIMS]


@pytest.mark.parametrize(("name", "d"), LLOO_CASES)
def test_lloo_satisfies_assumption_1(name, d):
    S, rng = make_set(name, d), np.random.default_rng(40 + d)
    for x, r, c in lloo_instances(S, rng, {2: 40, 5: 30, 20: 8}[d]):
        p = S.local_linear_oracle(x, r, c)
        opt, extra = slsqp_local_opt(S, x, r, c)
        check_lloo(S, x, r, c, p, opt, extra)
        if isinstance(S, L2Ball):  # exact oracle: equal to the optimum, rho = 1
            assert abs(c @ p - opt) <= 1e-7 * (1 + np.linalg.norm(c)) + extra


@pytest.mark.parametrize("name", ["l1", "simplex", "box", "box-shifted"])
@pytest.mark.parametrize("d", DIMS)
def test_l1_relaxation_lloo_solves_the_relaxed_lp_exactly(name, d):
    S, rng = make_set(name, d), np.random.default_rng(50 + d)
    for x, r, c in lloo_instances(S, rng, 40):
        p = S.local_linear_oracle(x, r, c)
        assert np.abs(p - x).sum() <= math.sqrt(d) * r * (1 + 1e-12) + 1e-12
        lp = l1_relaxed_lp(S, x, math.sqrt(d) * r, c)
        np.testing.assert_allclose(c @ p, lp, atol=1e-9 * (1 + np.abs(c).sum()))


@pytest.mark.parametrize(("name", "d"), ALL)
def test_lloo_limits(name, d):
    S, rng = make_set(name, d), np.random.default_rng(70 + d)
    for x in feasible_points(S, rng, 10):
        c = rng.normal(size=S.dim)
        for r in (math.inf, 1e6 * S.diameter):
            p = S.local_linear_oracle(x, r, c)
            np.testing.assert_allclose(p, S.linear_oracle(c), atol=1e-12)
        np.testing.assert_allclose(S.local_linear_oracle(x, 0.0, c), x, atol=1e-12)


# ---------------------------------------------------------------- geometry, gauge
@pytest.mark.parametrize(("name", "d"), ALL)
def test_diameter_radius_and_contains(name, d):
    S, rng = make_set(name, d), np.random.default_rng(100 + d)
    pts = np.array([S.linear_oracle(rng.normal(size=S.dim)) for _ in range(200)])
    assert pdist(pts).max() <= S.diameter * (1 + 1e-12)
    assert np.linalg.norm(pts, axis=1).max() <= S.radius * (1 + 1e-12)
    # outside: step back from an LO vertex against c; every y in the set has ⟨c, y⟩ >= ⟨c, v⟩
    for _ in range(20):
        c = rng.normal(size=S.dim)
        v = S.linear_oracle(c)
        assert S.contains(v, tol=1e-12)
        assert not S.contains(v - 1e-6 * c / np.linalg.norm(c), tol=1e-8)


@pytest.mark.parametrize("d", DIMS)
def test_diameter_and_radius_are_attained(d):
    e = np.eye(d)[0]
    for S, a, b in [
        (L2Ball(d, 1.3), 1.3 * e, -1.3 * e),
        (L1Ball(d, 0.8), 0.8 * e, -0.8 * e),
        (Simplex(d), np.eye(d)[0], np.eye(d)[1]),
        (make_set("box", d), make_set("box", d).low, make_set("box", d).high),
    ]:
        np.testing.assert_allclose(np.linalg.norm(a - b), S.diameter, rtol=1e-12)
    hull = make_set("hull-random", d)
    np.testing.assert_allclose(hull.diameter, pdist(hull.vertices).max(), rtol=1e-12)
    np.testing.assert_allclose(hull.radius, np.linalg.norm(hull.vertices, axis=1).max())
    box = make_set("box", d)
    corner = np.where(np.abs(box.low) > box.high, box.low, box.high)
    np.testing.assert_allclose(box.radius, np.linalg.norm(corner), rtol=1e-12)
    N = make_set("nuclear", d)
    u = np.zeros(N.shape)
    u[0, 0] = N.radius
    assert N.contains(u.ravel()) and N.diameter == 2 * N.radius == 2 * np.linalg.norm(u)


@pytest.mark.parametrize("name", ["l2", "l1", "box", "nuclear"])
@pytest.mark.parametrize("d", DIMS)
def test_gauge_is_the_minkowski_functional(name, d):
    S, rng = make_set(name, d), np.random.default_rng(110 + d)
    checked = 0
    for scale in (0.2, 0.5, 1.0, 2.0):
        for _ in range(50):
            x = rng.normal(size=S.dim) * scale * S.radius / math.sqrt(d)
            g = S.gauge(x)
            np.testing.assert_allclose(S.gauge(2.5 * x), 2.5 * g, rtol=1e-12)
            if abs(g - 1) > 1e-9:
                assert (g <= 1) == S.contains(x, tol=0.0)
                checked += 1
            if g > 0:
                np.testing.assert_allclose(S.gauge(x / g), 1.0, rtol=1e-12)
                assert S.contains(x / g)
    assert checked > 150
    assert S.gauge(S.linear_oracle(rng.normal(size=S.dim))) == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------------ bad arguments
