"""PQFTL at scale (issue 8): svec release of V, its noise law, threaded replay.

The V counter of PQFTL with ``fixes`` receives svec(x x^T) (the upper triangle, off-diagonals
times sqrt(2)) instead of vec(x x^T): half the noise draws, the same sensitivity (svec is an
isometry), and after unscaling the law of the symmetrised full-matrix noise (independent
review item 4). The svec elements and the PSD solver themselves: test_psd_solve.py.
"""

from __future__ import annotations

import copy
import math
import os

import numpy as np
import pytest
from learner_cases import loop, psd_reference, svec

from dpol.datasets import linear_regression_stream
from dpol.errors import InvalidInputError
from dpol.learners import PrivateQuadraticFTL
from dpol.learners import _psd_solve as ps
from dpol.learners import private_quadratic_ftl as pq
from dpol.learners._joint_counters import outer_product_sensitivity


def unpack(v: np.ndarray, d: int) -> np.ndarray:
    """The symmetric matrix whose lower packed (= row-wise upper) entries are v."""
    i, j = np.triu_indices(d)
    out = np.zeros((d, d))
    out[i, j] = v
    out[j, i] = v
    return out


@pytest.mark.parametrize("x_bound, y_bound", [(1.0, 0.5), (1.0, 1.4), (0.8, 2.0),
                                              (0.05, 300.0)])
def test_joint_sensitivity_with_two_bounds_is_the_brute_force_maximum(x_bound, y_bound):
    # outer_product_sensitivity(X, Y) against a brute-force maximum of
    # ||x x^T - x' x'^T||_F^2 + ||y x - y' x'||^2 over x, x' in the plane (the change
    # depends only on the norms and the angle), norms on a grid of [0, X], y, y' = +-Y
    # (the expression is convex in each label, so the maximum is at the ends). The grid
    # of 7201 angles holds the maximiser cos = min(Y^2 / (2 X^2), 1) to within 0.025
    # degrees, where the second-order loss is below 1e-6 relative.
    norms = np.linspace(0.0, x_bound, 41)
    angles = np.linspace(0.0, np.pi, 7201)
    best = 0.0
    for a in norms:
        for b in norms:
            c = a * b * np.cos(angles)
            frob2 = a**4 + b**4 - 2.0 * c * c
            for y, y2 in ((y_bound, y_bound), (y_bound, -y_bound)):
                label2 = y * y * a * a + y2 * y2 * b * b - 2.0 * y * y2 * c
                best = max(best, float(np.sqrt(np.max(frob2 + label2))))
    claimed = outer_product_sensitivity(x_bound, y_bound, "replace_one")
    assert best <= claimed * (1 + 1e-12)  # never exceeded
    assert best >= claimed * (1 - 1e-6)  # and attained


@pytest.mark.parametrize("x_bound, y_bound", [(1.0, 1e-60), (1e-60, 1.0), (1e60, 1.0),
                                              (1.0, 1e60), (1e60, 1e60), (1e-60, 1e-60)])
def test_bounds_at_the_ends_of_their_range_give_a_finite_guarantee_and_model(x_bound,
                                                                            y_bound):
    # the stacked sensitivity uses x_bound^4 and the counters' multipliers ~1/bound^2:
    # at 1e-300 a square underflowed (ZeroDivisionError) or a multiplier's square
    # overflowed (OverflowError) in the accounting; BOUND_RANGE keeps both finite
    learner = PrivateQuadraticFTL(2, horizon=50, epsilon=1.0, delta=1e-5, bound=x_bound,
                                  y_bound=y_bound, seed=0)
    assert learner.privacy.epsilon <= 1.0 + 1e-9
    learner.run(np.full((50, 2), 0.5 * x_bound), np.full(50, 0.5 * y_bound))
    assert np.all(np.isfinite(learner.weights))


@pytest.mark.parametrize("name", ["bound", "y_bound"])
@pytest.mark.parametrize("value", [1e-300, 1e-61, 1e61, 1e300])
def test_bounds_outside_their_range_are_refused_by_name(name, value):
    with pytest.raises(InvalidInputError, match=rf"{name} must be in \[1e-60, 1e60\]"):
        PrivateQuadraticFTL(2, horizon=50, epsilon=1.0, delta=1e-5, **{name: value})


def test_v_counter_is_svec_with_fixes_and_the_noise_is_unchanged():
    d = 6
    fixed = PrivateQuadraticFTL(d, horizon=64, epsilon=1.0, delta=1e-5, seed=0)
    printed = PrivateQuadraticFTL(d, horizon=64, epsilon=1.0, delta=1e-5, seed=0, fixes=False)
    assert fixed._counters[0].dim == d * (d + 1) // 2 and printed._counters[0].dim == d * d
    # same element sensitivity, same joint calibration: the same sigma on every counter
    for a, b in zip(fixed._counters, printed._counters, strict=True):
        assert a.noise_scale == pytest.approx(b.noise_scale, rel=1e-15)
        assert a.node_sensitivity == b.node_sensitivity
    assert fixed.privacy == printed.privacy


# ---------------------------------------------------------------- noise law
def released_matrices(monkeypatch, d: int, horizon: int, learners: int) -> tuple:
    """The symmetric V_T the learner hands its solver at the last step, on a zero stream
    (pure noise), for independent learners; and the per-coordinate variance at T."""
    seen = []
    original = ps._PsdSolver.solve

    def record(self, ap, u, ridge):
        seen.append(ap.copy())
        return original(self, ap, u, ridge)

    monkeypatch.setattr(ps._PsdSolver, "solve", record)
    out = []
    for seed in range(learners):
        m = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=2, epsilon=1.0, delta=1e-5, seed=seed)
        seen.clear()
        m.run(np.zeros((horizon, d)), np.zeros(horizon))
        out.append(unpack(seen[-1], d))
    return np.array(out), m._counters[0].variance(horizon)


def test_released_v_has_the_law_of_symmetrised_full_matrix_noise(monkeypatch):
    # Claimed: the V_T the solver sees is V_T plus noise with variance var on the diagonal
    # and var/2 off it (var = the counter's per-coordinate variance at T), entries of the
    # upper triangle independent: the law of (A + A^T)/2 for i.i.d. N(0, var) entries A,
    # not the upper triangle mirrored (var off the diagonal). Test: with z the diagonal
    # (or off-diagonal) entries of 300 independent learners' V_T (one step each, so
    # independent), Q = sum z^2 / claimed variance is chi-square with N degrees of freedom
    # (N = 1800 diagonal, 4500 off-diagonal entries): Q/N has mean 1 and sd sqrt(2/N)
    # (0.033 and 0.021). Accepting |Q/N - 1| <= 6 sd rejects the right law with
    # probability < 1e-8, and rejects 2/3x the scale (Q/N = 4/9), 3/2x (Q/N = 9/4) and the
    # mirrored upper triangle (off-diagonal Q/N = 2), all more than 26 sd away.
    d, horizon, learners = 6, 12, 300
    V, var = released_matrices(monkeypatch, d, horizon, learners)
    assert np.array_equal(V, np.swapaxes(V, 1, 2))
    i, j = np.triu_indices(d, 1)
    parts = {"diagonal": (V[:, np.arange(d), np.arange(d)].ravel(), var),
             "off-diagonal": (V[:, i, j].ravel(), var / 2.0)}
    for name, (z, claimed) in parts.items():
        n = z.size
        tol = 6.0 * math.sqrt(2.0 / n)

        def accepted(samples, claimed=claimed, n=n, tol=tol):
            return abs(np.sum(samples**2) / claimed / n - 1.0) <= tol

        assert accepted(z), name
        assert not accepted(z * 2.0 / 3.0), name
        assert not accepted(z * 1.5), name
    assert not accepted(parts["off-diagonal"][0], claimed=var)  # the mirrored upper triangle


# ---------------------------------------------------------------- run and learn_one
def helper_ended_cleanly(helper) -> None:
    assert helper.dead is False and not helper.busy and len(helper.free) == ps._SLOTS
    with pytest.raises(ChildProcessError):  # reaped: no zombie left
        os.waitpid(helper.pid, os.WNOHANG)


@pytest.mark.skipif(not ps._helper_possible(), reason="needs Linux and two cores")
@pytest.mark.parametrize("epsilon, noise_ridge", [(1.0, False), (1000.0, True)])
def test_run_with_a_helper_process_reproduces_the_learn_one_loop(helpers, monkeypatch,
                                                                 epsilon, noise_ridge):
    # d = 40: the tridiagonal route (from d = 24) and the helper process; epsilon = 1 keeps
    # the released V indefinite, at epsilon = 1000 it is positive definite at about half
    # the steps (Cholesky route). The released iterates are bit for bit the learn_one
    # loop's, and the eigendecomposition's w of the same releases.
    d, horizon = 40, 300
    assert d >= pq._HELPER_DIM
    sent = []
    submit = ps._Helper.submit
    monkeypatch.setattr(ps._Helper, "submit", lambda self, *a: sent.append(submit(self, *a))
                        or sent[-1])
    s = linear_regression_stream(horizon, d, seed=1)
    a = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=2, epsilon=epsilon, delta=1e-5, seed=5,
                            noise_ridge=noise_ridge)
    b, c = copy.deepcopy(a), copy.deepcopy(a)
    trace = a.run(s.X, s.y)
    assert len(helpers) == 1 and any(sent)  # the child solved some chunks
    helper_ended_cleanly(helpers[0])
    looped = loop(b, s.X, s.y)
    assert np.array_equal(trace.weights, looped)
    assert np.array_equal(trace.final_weights, b.weights)
    # the reference: the same counters' releases, unscaled, through numpy's eigh
    layout = ps._svec_layout(d)
    cv, cu = c._counters
    V = cv.run(np.array([svec(np.outer(x, x)) for x in s.X])) / layout.scale
    U = cu.run(s.y[:, None] * s.X)
    ridges = c._ridges(np.arange(1, horizon + 1, dtype=float))
    released = np.vstack([trace.weights[1:], trace.final_weights])
    indefinite = 0
    for t in range(0, horizon, 3):
        S = unpack(V[t], d)
        indefinite += np.linalg.eigvalsh(S)[0] < 0
        w = psd_reference(S, U[t], ridges[t])
        w *= min(1.0, c.radius / np.linalg.norm(w))
        np.testing.assert_allclose(released[t], w, rtol=0, atol=1e-12 * np.abs(w).max())
    assert indefinite > 90 if epsilon < 10 else 20 < indefinite < 80  # of 100


@pytest.mark.skipif(not ps._helper_possible(), reason="needs Linux and two cores")
def test_run_continues_a_started_stream_and_survives_a_dead_helper(helpers, monkeypatch):
    # two runs (the second from a non-fresh state) give the one-run releases; a helper
    # whose child dies at once (it leaves without solving) costs nothing but time: the
    # parent solves the chunks it had queued
    d, horizon = 33, 400
    s = linear_regression_stream(horizon, d, seed=2)
    a = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=2, epsilon=1.0, delta=1e-5, seed=7)
    b, c = copy.deepcopy(a), copy.deepcopy(a)
    whole = a.run(s.X, s.y).weights
    first = b.run(s.X[:77], s.y[:77]).weights
    second = b.run(s.X[77:], s.y[77:]).weights
    assert np.array_equal(whole, np.vstack([first, second]))
    assert np.array_equal(a.weights, b.weights)
    monkeypatch.setattr(ps._Helper, "_serve", lambda self, task_r, done_w: None)
    assert np.array_equal(c.run(s.X, s.y).weights, whole)
    assert helpers[-1].dead


@pytest.mark.skipif(not ps._helper_possible(), reason="needs Linux and two cores")
def test_a_failing_run_ends_its_helper(helpers, monkeypatch):
    d, horizon = 40, 600
    s = linear_regression_stream(horizon, d, seed=3)
    m = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=2, epsilon=1.0, delta=1e-5, seed=1)
    calls = []

    def ridges(steps):
        calls.append(1)
        if len(calls) == 2:  # the second block (576 rows each at d = 40)
            raise KeyboardInterrupt
        return steps * m.alpha

    monkeypatch.setattr(m, "_ridges", ridges)
    with pytest.raises(KeyboardInterrupt):
        m.run(s.X, s.y)
    with pytest.raises(ChildProcessError):  # killed and reaped
        os.waitpid(helpers[0].pid, os.WNOHANG)


@pytest.mark.skipif(not ps._helper_possible(), reason="needs Linux and two cores")
@pytest.mark.parametrize("counter", ["tree", "honaker"])
def test_small_d_run_with_a_helper_is_the_learn_one_loop(helpers, counter):
    # d = 8 (dsyevd route), both processes solving: the learn_one loop's bits
    d, horizon = 8, 700
    s = linear_regression_stream(horizon, d, seed=4)
    a = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=2, epsilon=0.5, delta=1e-5, seed=2,
                            counter=counter)
    b = copy.deepcopy(a)
    trace = a.run(s.X, s.y)
    assert len(helpers) == 1
    helper_ended_cleanly(helpers[0])
    assert np.array_equal(trace.weights, loop(b, s.X, s.y))
    assert np.array_equal(a.weights, b.weights)


def test_no_helper_process_unless_asked(helpers):
    # n_jobs=1 (the default) never forks, and gives the same releases as n_jobs=2
    d, horizon = 12, 200
    s = linear_regression_stream(horizon, d, seed=6)
    a = PrivateQuadraticFTL(d, horizon=horizon, epsilon=1.0, delta=1e-5, seed=3)
    b = PrivateQuadraticFTL(d, horizon=horizon, epsilon=1.0, delta=1e-5, seed=3, n_jobs=2)
    wa = a.run(s.X, s.y).weights
    assert helpers == []
    wb = b.run(s.X, s.y).weights
    assert len(helpers) == (1 if ps._helper_possible() else 0)
    assert np.array_equal(wa, wb)
    with pytest.raises(ValueError, match="n_jobs"):
        PrivateQuadraticFTL(d, horizon=horizon, epsilon=1.0, n_jobs=3)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_blocks_share_one_elements_array_and_keep_the_learn_one_bits(helpers, n_jobs):
    # d = 40: blocks of 576 rows, so 1250 rows are three blocks, the last a short one,
    # all written into the one elements array (_run). Overwriting it before a block's
    # releases were consumed (unscaled, or copied to the helper) would change them.
    d, horizon = 40, 1250
    block = max(ps._CHUNK, pq._SVEC_BLOCK_FLOATS // (d * (d + 1) // 2) // ps._CHUNK * ps._CHUNK)
    assert horizon > 2 * block and horizon % block
    s = linear_regression_stream(horizon, d, seed=6)
    a = PrivateQuadraticFTL(d, horizon=horizon, n_jobs=n_jobs, epsilon=2.0, delta=1e-5, seed=8)
    b = copy.deepcopy(a)
    trace = a.run(s.X, s.y)
    assert len(helpers) == (1 if n_jobs == 2 and ps._helper_possible() else 0)
    assert np.array_equal(trace.weights, loop(b, s.X, s.y))
    assert np.array_equal(a.weights, b.weights)


def test_bisection_route_on_a_tridiagonal_form_that_splits(capfd):
    # S block-diagonal, so T has zero off-diagonals and splits into blocks; its negative
    # eigenvalues lie in two blocks, the more negative in the later one. dstein needs
    # them grouped by block: ordered over the whole matrix, LAPACK refused them (a
    # "DSTEIN parameter number 6" message on stderr) and the route fell back to dsyevd.
    # Now the route itself gives the eigendecomposition's w (tolerance as above)
    d = 30
    lam = np.full(d, 5.0)
    lam[24], lam[28] = -0.1, -0.3
    S = np.diag(lam)
    S[:20, :20] += 0.5  # one dense block ahead of the split-off 1 x 1 blocks
    solver = ps._psd_solver(d)
    layout = ps._svec_layout(d)
    ap = np.ascontiguousarray(S[layout.rows, layout.cols])
    u = np.random.default_rng(0).normal(size=d)
    for ridge in (1.0, 0.5):  # lam_min >= -ridge/2, then below it (every eigenpair)
        want = psd_reference(S, u, ridge)
        cond = (np.linalg.eigvalsh(S)[-1] + ridge) / ridge
        w = solver._tridiagonal(solver._unpack(ap), u, ridge, bisect=True)
        assert w is not None
        assert np.abs(w - want).max() <= 1e-14 * cond * np.abs(want).max()
    out, err = capfd.readouterr()
    assert "DSTEIN" not in out + err
