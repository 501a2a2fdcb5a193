"""PQFTL's post-processing kernels: svec elements, and the PSD-projected solve on every route.

svec(x x^T) is C-ordered, the same for a row or a block, an isometry that keeps the joint
sensitivity. The solve w = (P(S) + ridge I)^-1 u goes through Cholesky, a tridiagonal
route, bisection, or the eigendecomposition; every route must give the
eigendecomposition's w, for one right-hand side or K. The helper process, which runs
these solves beside a learner: test_private_quadratic_ftl_scale.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from learner_cases import psd_reference, svec

from dpol.learners import _psd_solve as ps
from dpol.learners._joint_counters import outer_product_sensitivity


# ---------------------------------------------------------------- svec elements
@pytest.mark.parametrize("d", [1, 2, 5, 40])
def test_svec_outer_is_c_ordered_and_the_same_for_one_row_or_a_block(d):
    # C order: the counters' clipping norms of a block must sum like add()'s single row
    X = np.random.default_rng(d).normal(size=(7, d))
    layout = ps._svec_layout(d)
    block = ps._svec_outer(X, layout)
    rows = np.vstack([ps._svec_outer(x[None, :], layout) for x in X])
    assert block.flags.c_contiguous and block.shape == (7, d * (d + 1) // 2)
    assert np.array_equal(block.view(np.int64), rows.view(np.int64))  # bit for bit
    expected = np.array([svec(np.outer(x, x)) for x in X])
    np.testing.assert_allclose(block, expected, rtol=1e-15, atol=0)


def test_svec_is_an_isometry_and_keeps_the_joint_sensitivity():
    # ||svec(A)|| = ||A||_F for every symmetric A (exact up to rounding), so the element
    # svec(x x^T) has norm ||x||^2 <= R^2 (the counter's bound) and two elements are as far
    # apart as vec(x x^T) and vec(x' x'^T): sqrt(2) R^2 at most, attained at orthogonal unit
    # x, x'. Brute force over x, x' in the plane at d = 2 and d = 3 (the difference of two
    # rank-one matrices only depends on norms and angle) on a grid of norms and angles.
    rng = np.random.default_rng(0)
    for d in (2, 3, 6):
        B = rng.normal(size=(d, d))
        A = B + B.T
        assert np.linalg.norm(svec(A)) == pytest.approx(np.linalg.norm(A), rel=1e-14)
    norms = np.linspace(0.0, 1.0, 21)
    angles = np.linspace(0.0, np.pi, 361)
    for d in (2, 3):
        layout = ps._svec_layout(d)
        best, best_joint = 0.0, 0.0
        for a in norms:
            for b in norms:
                x = np.zeros((len(angles), d))
                x[:, 0] = a
                x2 = np.zeros((len(angles), d))
                x2[:, 0], x2[:, 1] = b * np.cos(angles), b * np.sin(angles)
                e, e2 = ps._svec_outer(x, layout), ps._svec_outer(x2, layout)
                frob = np.linalg.norm(np.einsum("ni,nj->nij", x, x)
                                      - np.einsum("ni,nj->nij", x2, x2), axis=(1, 2))
                np.testing.assert_allclose(np.linalg.norm(e - e2, axis=1), frob,
                                           rtol=1e-12, atol=1e-15)
                np.testing.assert_allclose(np.linalg.norm(e, axis=1), a * a, rtol=1e-14)
                best = max(best, float(frob.max()))
                for y, y2 in ((1.0, 1.0), (1.0, -1.0)):  # the label part is convex in y
                    joint = np.sqrt(np.sum((e - e2) ** 2, axis=1)
                                    + np.sum((y * x - y2 * x2) ** 2, axis=1))
                    best_joint = max(best_joint, float(joint.max()))
        assert best == pytest.approx(math.sqrt(2.0), rel=1e-12)  # attained: orthogonal units
        claimed = outer_product_sensitivity(1.0, 1.0, "replace_one")  # 3/sqrt(2)
        # the grid holds the maximiser <x, x'> = 1/2 (60 degrees) exactly
        assert claimed * (1 - 1e-12) <= best_joint <= claimed * (1 + 1e-12)


# ---------------------------------------------------------------- the solver
def matrices(d: int, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """PD, indefinite, singular PSD and barely indefinite (one eigenvalue -1e-3) matrices."""
    G = rng.normal(size=(4 * d, d))
    gram = G.T @ G
    E = rng.normal(size=(d, d))
    noise = (E + E.T) * math.sqrt(d)
    low = rng.normal(size=(d, max(1, d // 2)))
    barely = gram - (np.linalg.eigvalsh(gram)[0] + 1e-3) * np.eye(d)
    return [("pd", gram + np.eye(d)), ("indefinite", gram / 20 + noise),
            ("singular psd", low @ low.T), ("barely indefinite", barely)]


@pytest.mark.parametrize("d", [1, 3, 10, 40, 90])
@pytest.mark.parametrize("ridge", [1e-3, 1.0, 50.0, 1e4])
def test_psd_solver_gives_the_eigendecomposition_w(d, ridge):
    # every route (Cholesky, tridiagonal, eigendecomposition) against numpy's eigh: equal
    # up to rounding, i.e. within 1e-14 times the condition number of P(S) + ridge I
    # relative to the largest entry of w (a wrong route is off by O(1))
    rng = np.random.default_rng(d)
    solver = ps._psd_solver(d)
    layout = ps._svec_layout(d)
    for name, S in matrices(d, rng):
        u = rng.normal(size=d)
        got = solver.solve(np.ascontiguousarray(S[layout.rows, layout.cols]), u, ridge)
        want = psd_reference(S, u, ridge)
        scale = np.abs(want).max()
        cond = (max(np.linalg.eigvalsh(S)[-1], 0.0) + ridge) / ridge
        assert np.abs(got - want).max() <= 1e-14 * cond * scale + 1e-300, name


def test_tridiagonal_route_takes_every_eigenpair_below_minus_half_the_ridge(monkeypatch):
    # the tridiagonal solve is used where it is well conditioned (lam_min >= -ridge/2);
    # below, all eigenpairs of T (dstevd, or dstev with scipy < 1.16) give w. Either way
    # the eigendecomposition's w.
    d = 40
    rng = np.random.default_rng(3)
    solver = ps._psd_solver(d)
    assert solver.tridiagonal
    E = rng.normal(size=(d, d))
    S = E + E.T
    lam = np.linalg.eigvalsh(S)
    layout = ps._svec_layout(d)
    ap = np.ascontiguousarray(S[layout.rows, layout.cols])
    u = rng.normal(size=d)
    calls, eigh = [], ps._tridiagonal_eigh
    monkeypatch.setattr(ps, "_tridiagonal_eigh", lambda *a: calls.append(1) or eigh(*a))
    for bisect in (False, True):  # all eigenvalues (dsterf) or the negative ones (dstebz)
        for ridge, every in ((-2.2 * lam[0], False), (-1.8 * lam[0], True)):
            w = solver._tridiagonal(solver._unpack(ap), u, ridge, bisect=bisect)
            assert calls == ([1] if every else [])
            calls.clear()
            want = psd_reference(S, u, ridge)
            np.testing.assert_allclose(w, want, rtol=0, atol=1e-14 * np.abs(want).max())
    assert not ps._psd_solver(ps._TRIDIAGONAL_DIM - 1).tridiagonal  # small d: dsyevd


def test_every_eigenpair_route_without_dstevd_falls_back_to_dstev(monkeypatch):
    # scipy < 1.16 wraps no dstevd: implicit QL (dstev) gives the same w to rounding (the
    # tolerance of the test above, where the eigendecomposition's w is the reference)
    d = 40
    rng = np.random.default_rng(5)
    E = rng.normal(size=(d, d))
    S, u = E + E.T, rng.normal(size=d)
    ridge = -1.8 * np.linalg.eigvalsh(S)[0]  # below -ridge/2: every eigenpair
    layout = ps._svec_layout(d)
    ap = np.ascontiguousarray(S[layout.rows, layout.cols])
    monkeypatch.delattr(ps.lapack, "dstevd", raising=False)
    assert ps._tridiagonal_eigh(np.ones(3), np.zeros(2))[2] == 0
    solver = ps._psd_solver(d)
    w = solver._tridiagonal(solver._unpack(ap), u, ridge)
    want = psd_reference(S, u, ridge)
    np.testing.assert_allclose(w, want, rtol=0, atol=1e-14 * np.abs(want).max())


@pytest.mark.parametrize("negative", [1, 2, 5, 20, 45])
def test_bisection_route_finds_every_negative_eigenpair(negative):
    # S with exactly `negative` eigenvalues below 0, some clustered (a double one, tiny
    # ones), solved through bisection and dstein: the eigendecomposition's w to rounding
    # (the bound of test_psd_solver_gives_the_eigendecomposition_w)
    d = 60
    rng = np.random.default_rng(negative)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    lam = rng.uniform(1.0, 50.0, size=d)
    lam[:negative] = -rng.uniform(1e-9, 0.4, size=negative)
    if negative >= 2:
        lam[1] = lam[0]  # a double eigenvalue: dstein must orthogonalise the pair
    S = (Q * lam) @ Q.T
    S = 0.5 * (S + S.T)
    solver = ps._psd_solver(d)
    layout = ps._svec_layout(d)
    ap = np.ascontiguousarray(S[layout.rows, layout.cols])
    u = rng.normal(size=d)
    for ridge in (1.0, 10.0):
        want = psd_reference(S, u, ridge)
        cond = (lam.max() + ridge) / ridge
        for bisect in (False, True):
            w = solver._tridiagonal(solver._unpack(ap), u, ridge, bisect=bisect)
            assert np.abs(w - want).max() <= 1e-14 * cond * np.abs(want).max()


def test_cholesky_failure_bounds_the_negative_eigenvalues_and_picks_bisection(monkeypatch):
    # the route's rule: Cholesky failing at column j (LAPACK's info) leaves at most d - j + 1
    # negative eigenvalues (interlacing), and bisection is chosen where that is <= d/3
    from scipy.linalg import lapack

    d = 30
    rng = np.random.default_rng(5)
    solver = ps._psd_solver(d)
    layout = ps._svec_layout(d)
    chosen = []
    original = ps._PsdSolver._tridiagonal

    def spy(self, a, u, ridge, bisect=False):
        chosen.append(bisect)
        return original(self, a, u, ridge, bisect)

    monkeypatch.setattr(ps._PsdSolver, "_tridiagonal", spy)
    seen = set()
    for _ in range(200):
        G = rng.normal(size=(2 * d, d))
        E = rng.normal(size=(d, d))
        S = G.T @ G + (E + E.T) * rng.uniform(0.5, 6.0)
        failed = lapack.dpotrf(S, lower=1)[1]
        if failed == 0:
            continue
        negative = int(np.sum(np.linalg.eigvalsh(S) < 0))
        assert negative <= d - failed + 1
        u = rng.normal(size=d)
        ridge = 4.0 * max(1.0, -np.linalg.eigvalsh(S)[0])  # the tridiagonal route applies
        w = solver.solve(np.ascontiguousarray(S[layout.rows, layout.cols]), u, ridge)
        assert chosen.pop() == (d - failed + 1 <= d / 3)
        want = psd_reference(S, u, ridge)
        np.testing.assert_allclose(w, want, rtol=0, atol=1e-13 * np.abs(want).max())
        seen.add(d - failed + 1 <= d / 3)
    assert seen == {False, True}  # both routes were taken


@pytest.mark.parametrize("d", [5, 30, 65])
def test_solver_takes_k_right_hand_sides_on_every_route(d):
    # (P(S) + ridge I)^-1 U for U (d, K) against numpy's eigendecomposition and against K
    # one-column solves, over positive definite S (Cholesky), PSD S with zero rows
    # (Cholesky fails, no eigenvalue < 0: digits' constant pixels; it crashed), and S
    # shifted to a few or many negative eigenvalues (bisection, all eigenpairs; dsyevd
    # below d = 24). A one-column U must give the vector solve's bits.
    rng = np.random.default_rng(d)
    layout, solver = ps._svec_layout(d), ps._PsdSolver(d)
    for case in range(24):
        B = rng.normal(size=(d, d))
        if case % 4 == 1:  # zero rows, as constant (standardised) features give
            B[rng.choice(d, 3, replace=False)] = 0.0
        S = B @ B.T / d
        if case % 4 >= 2:
            S -= np.linalg.eigvalsh(S)[2 if case % 4 == 2 else d // 2] * np.eye(d)
        ridge = float(rng.choice([1e-3, 0.1, 1.0]))
        U = rng.normal(size=(d, 4))
        ap = np.ascontiguousarray(S[layout.rows, layout.cols])
        lam, Q = np.linalg.eigh(S)
        ref = Q @ ((Q.T @ U) / (np.maximum(lam, 0.0) + ridge)[:, None])
        W = solver.solve(ap, U, ridge)
        scale = np.abs(ref).max()
        np.testing.assert_allclose(W, ref, rtol=0, atol=1e-10 * scale)
        cols = np.stack([solver.solve(ap, U[:, k].copy(), ridge) for k in range(4)], axis=1)
        np.testing.assert_allclose(W, cols, rtol=0, atol=1e-12 * scale)
        one = solver.solve(ap, U[:, :1].copy(), ridge)
        np.testing.assert_allclose(one[:, 0], cols[:, 0], rtol=0, atol=1e-12 * scale)
