"""Constraint sets: projections, linear and local linear oracles, geometry, gauges, checks.

Reference solutions come from scipy (SLSQP for the non-linear problems, HiGHS linprog for
the ℓ₁-relaxed LPs) on small instances, and from exact optimality certificates: the
projection P(a) is correct iff max_{v in set} ⟨a − P(a), v − P(a)⟩ <= 0, a maximum the
linear oracle evaluates.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog, minimize, minimize_scalar
from scipy.spatial import ConvexHull as QHull
from scipy.spatial.distance import pdist

from dpol.errors import InvalidInputError
from dpol.sets import (
    Box,
    ConvexHull,
    GaugeUndefinedError,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    Simplex,
    min_norm_point,
)

DIMS = (2, 5, 20)
NAMES = ("l2", "l1", "simplex", "box", "box-shifted", "hull-simplex", "hull-random")


def make_set(name, d):
    rng = np.random.default_rng(100 + d)
    low, high = -rng.uniform(0.2, 1.0, d), rng.uniform(0.2, 1.5, d)
    return {
        "l2": lambda: L2Ball(d, 1.3),
        "l1": lambda: L1Ball(d, 0.8),
        "simplex": lambda: Simplex(d),
        "box": lambda: Box(low, high),
        "box-shifted": lambda: Box(low + 2.0, high + 2.5),
        "hull-simplex": lambda: ConvexHull(np.eye(d)),
        "hull-random": lambda: ConvexHull(rng.normal(size=(d + 6, d))),
        "nuclear": lambda: NuclearNormBall({2: (1, 2), 5: (2, 3), 20: (4, 5)}[d], 1.5),
    }[name]()


ALL = [(n, d) for n in (*NAMES, "nuclear") for d in DIMS]


def feasible_points(S, rng, n):
    """Feasible points: projections of Gaussians and random convex mixtures of LO outputs."""
    pts = []
    for i in range(n):
        if i % 2 == 0:
            pts.append(S.project(rng.normal(size=S.dim) * 2.0 * max(S.radius, 1.0)))
        else:
            verts = np.array([S.linear_oracle(rng.normal(size=S.dim)) for _ in range(4)])
            pts.append(rng.dirichlet(np.full(4, 0.5)) @ verts)
    return np.array(pts)


# ------------------------------------------------------------------ scipy references
def parametrisation(S):
    """y = M v + m0 over variables v, with the set's constraints and bounds in v."""
    d = S.dim
    if isinstance(S, L2Ball):
        R = S.radius
        cons = [{"type": "ineq", "fun": lambda v: 1 - v @ v / R**2, "jac": lambda v: -2 * v / R**2}]
        return np.eye(d), None, cons, lambda x: x
    if isinstance(S, Simplex):
        cons = [{"type": "eq", "fun": lambda v: v.sum() - 1, "jac": lambda v: np.ones(d)}]
        return np.eye(d), [(0, None)] * d, cons, lambda x: x
    if isinstance(S, Box):
        return np.eye(d), list(zip(S.low, S.high, strict=True)), [], lambda x: x
    if isinstance(S, L1Ball):
        R = S.radius
        cons = [{"type": "ineq", "fun": lambda v: 1 - v.sum() / R,
                 "jac": lambda v: -np.ones(2 * d) / R}]
        start = lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)])  # noqa: E731
        return np.hstack([np.eye(d), -np.eye(d)]), [(0, None)] * (2 * d), cons, start
    if isinstance(S, ConvexHull):
        k = S.vertices.shape[0]
        cons = [{"type": "eq", "fun": lambda v: v.sum() - 1, "jac": lambda v: np.ones(k)}]
        return S.vertices.T, [(0, 1)] * k, cons, S.decompose
    raise AssertionError(S)


def slsqp(fun, jac, v0, bounds, cons):
    with warnings.catch_warnings():
        # the reference solver's own step outside the bounds, which it clips back: older
        # scipy warns of it (seen with 1.10 and 1.13), 1.17 does not
        warnings.filterwarnings("ignore", "Values in x were outside bounds", RuntimeWarning)
        res = minimize(fun, v0, jac=jac, method="SLSQP", bounds=bounds, constraints=cons,
                       options={"ftol": 1e-15, "maxiter": 2000})
    assert res.status in (0, 8), res.message  # 8: positive directional derivative at optimum
    return res.x


def slsqp_local_opt(S, x, r, c):
    """min ⟨c, y⟩ over set ∩ B(x, r) by SLSQP: a lower estimate of OPT.

    SLSQP may end slightly infeasible, by ``viol`` (distance to the set plus excess
    distance from x). Moving back costs at most ‖c‖·viol, so OPT >= ⟨c, y⟩ − ‖c‖·viol;
    returning ⟨c, y⟩ + ‖c‖·viol would let a suboptimal p pass, so the value returned is
    ⟨c, y⟩ and the caller's tolerance adds ‖c‖·viol (checked to be tiny).
    """
    M, bounds, cons, start = parametrisation(S)
    ball = {"type": "ineq", "fun": lambda v: 1 - np.sum((M @ v - x) ** 2) / r**2,
            "jac": lambda v: -2 * (M.T @ (M @ v - x)) / r**2}
    g = M.T @ c
    y = M @ slsqp(lambda v: g @ v, lambda v: g, start(x), bounds, [*cons, ball])
    viol = max(np.linalg.norm(y - x) - r, 0.0) + np.linalg.norm(S.project(y) - y)
    assert viol <= 1e-6 * (r + 1e-3)
    return c @ y, np.linalg.norm(c) * viol


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


def test_closed_form_oracles_of_balls():
    rng = np.random.default_rng(9)
    for _ in range(20):
        c = rng.normal(size=6)
        np.testing.assert_allclose(L2Ball(6, 2.0).linear_oracle(c), -2.0 * c / np.linalg.norm(c))
        N = NuclearNormBall((2, 3), 1.5)
        s1 = np.linalg.svd(c.reshape(2, 3), compute_uv=False)[0]
        np.testing.assert_allclose(N.linear_oracle(c) @ c, -1.5 * s1, rtol=1e-12)


# --------------------------------------------------------------------------- LLOO
LLOO_CASES = [(n, d) for n in NAMES if n != "hull-random" for d in DIMS]


def lloo_instances(S, rng, n):
    for x in feasible_points(S, rng, n):
        r = S.diameter * 10 ** rng.uniform(-2.5, 0.3)
        yield x, r, rng.normal(size=S.dim) * rng.choice([0.1, 1.0, 10.0])


def check_lloo(S, x, r, c, p, opt, extra_tol=0.0):
    assert S.contains(p)
    assert c @ p <= opt + 1e-7 * (1 + np.linalg.norm(c)) + extra_tol  # (i)
    assert np.linalg.norm(p - x) <= S.rho * r * (1 + 1e-12) + 1e-12  # (ii)


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


@pytest.mark.parametrize(("name", "d"), ALL)
def test_lloo_limits(name, d):
    S, rng = make_set(name, d), np.random.default_rng(70 + d)
    for x in feasible_points(S, rng, 10):
        c = rng.normal(size=S.dim)
        for r in (math.inf, 1e6 * S.diameter):
            p = S.local_linear_oracle(x, r, c)
            np.testing.assert_allclose(p, S.linear_oracle(c), atol=1e-12)
        np.testing.assert_allclose(S.local_linear_oracle(x, 0.0, c), x, atol=1e-12)


@pytest.mark.parametrize("d", DIMS)
def test_nuclear_lloo_against_the_lagrangian_dual(d):
    # OPT = min ⟨c, y⟩ over ball ∩ B(x, r) >= g(λ) = ⟨c, P_λ⟩ + λ/2 (‖P_λ − x‖² − r²), with
    # P_λ the projection of x − c/λ, for every λ > 0; (i) passes only if ⟨c, p⟩ <= max g
    S, rng = make_set("nuclear", d), np.random.default_rng(80 + d)
    for x, r, c in lloo_instances(S, rng, 12):
        def neg_dual(log_lam, x=x, r=r, c=c):
            lam = math.exp(log_lam)
            P = S.project(x - c / lam)
            return -(c @ P + lam / 2 * (np.sum((P - x) ** 2) - r * r))

        best = min(minimize_scalar(neg_dual, bounds=(lo, lo + 8), method="bounded",
                                   options={"xatol": 1e-10}).fun for lo in range(-20, 20, 8))
        check_lloo(S, x, r, c, S.local_linear_oracle(x, r, c), -best)


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


def test_gauge_special_cases():
    assert L1Ball(3, 2.0).gauge([1.0, -0.5, 0.5]) == 1.0
    half_open = Box([0.0, -1.0], [1.0, 1.0])
    assert half_open.gauge([-0.1, 0.0]) == math.inf and half_open.gauge([0.5, -0.25]) == 0.5
    for S in (Simplex(3), Box(1.0, 2.0, dim=3)):
        with pytest.raises(GaugeUndefinedError, match="does not contain 0"):
            S.gauge(np.ones(3))
    with pytest.raises(GaugeUndefinedError, match="ConvexHull has no gauge"):
        ConvexHull(np.vstack([np.eye(3), -np.eye(3)])).gauge(np.ones(3))


# ------------------------------------------------------------------ bad arguments
@pytest.mark.parametrize(("name", "d"), [(n, 2) for n in (*NAMES, "nuclear")])
def test_bad_arguments_name_the_argument(name, d):
    S = make_set(name, d)
    inside = S.project(np.zeros(d))
    far = S.linear_oracle(np.ones(d)) - 10.0 * np.ones(d)
    cases = [
        (lambda: S.project([1.0, 2.0, 3.0]), r"x must have shape \(2,\)"),
        (lambda: S.project([np.nan, 1.0]), "x must contain only finite"),
        (lambda: S.linear_oracle([np.inf, 0.0]), "c must contain only finite"),
        (lambda: S.local_linear_oracle(inside, -1.0, [1.0, 0.0]), "r must be >= 0"),
        (lambda: S.local_linear_oracle(inside, np.nan, [1.0, 0.0]), "r must not be NaN"),
        (lambda: S.local_linear_oracle(inside, 0.1, [1.0]), r"c must have shape \(2,\)"),
        (lambda: S.local_linear_oracle(far, 0.1, [1.0, 0.0]), "x must lie in"),
        (lambda: S.contains(inside, tol=-1.0), "tol must be >= 0"),
    ]
    for call, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            call()


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: L2Ball(0), "dim must be an integer >= 1"),
        (lambda: L1Ball(3, radius=-1.0), "radius must be > 0"),
        (lambda: Simplex(2.5), "dim must be an integer"),
        (lambda: Box([0.0, 1.0], [1.0, 0.5]), "high must be >= low"),
        (lambda: Box(0.0, 1.0), "dim must be given"),
        (lambda: Box([0.0, np.nan], 1.0), "low must contain only finite"),
        (lambda: Box([0.0, 0.0], [1.0, 1.0, 1.0]), r"high must have shape \(2,\)"),
        (lambda: NuclearNormBall((2,)), "shape must be a pair"),
        (lambda: NuclearNormBall((2, 0)), r"shape\[1\] must be an integer >= 1"),
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
def test_bad_constructor_and_hull_arguments(build, match):
    with pytest.raises(InvalidInputError, match=match):
        build()
