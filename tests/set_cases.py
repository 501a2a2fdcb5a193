"""The sets' shared test instances, scipy reference solutions and Assumption 1's check.

``make_set`` builds the instances the contract (tests/sets/test_sets.py) runs every set
through; the references solve the same problems by SLSQP on small instances.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import minimize

from dpol.sets import Box, ConvexHull, L1Ball, L2Ball, NuclearNormBall, Simplex

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


def lloo_instances(S, rng, n):
    for x in feasible_points(S, rng, n):
        r = S.diameter * 10 ** rng.uniform(-2.5, 0.3)
        yield x, r, rng.normal(size=S.dim) * rng.choice([0.1, 1.0, 10.0])


def check_lloo(S, x, r, c, p, opt, extra_tol=0.0):
    assert S.contains(p)
    assert c @ p <= opt + 1e-7 * (1 + np.linalg.norm(c)) + extra_tol  # (i)
    assert np.linalg.norm(p - x) <= S.rho * r * (1 + 1e-12) + 1e-12  # (ii)
