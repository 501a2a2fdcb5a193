"""Excess empirical risk at every step, KNJ's accuracy measure (layer L5).

KNJ (Kasiviswanathan, Nissim, Jin, *Private Incremental Regression*, Definitions 1 and 10)
judge an incremental estimator by its **unnormalised** excess empirical risk at every t,

    excess_t = L(theta_t; Gamma_t) - min_{theta in C} L(theta; Gamma_t),
    L(theta; Gamma_t) = sum_{i <= t} (y_i - <x_i, theta>)^2,

theta_t the model released *after* z_t. From the running sums Q_t = sum x x^T and
q_t = sum y x the risk is exact in O(d^2) per step; the optimum is a warm-started convex
quadratic program.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from dpol._validation import as_matrix, as_vector, check_int, check_real, fail
from dpol.errors import NumericalWarning
from dpol.learners import Trace
from dpol.learners.private_incremental_regression import l2_ball_quadratic_min
from dpol.sets import Box, ConvexSet, L1Ball, L2Ball, Simplex

__all__ = ["ExcessRisk", "excess_empirical_risk", "project_rows", "released_models"]

#: floats in one block of stacked d x d matrices (about 32 MB)
_BLOCK_FLOATS = 1 << 22


@dataclass(frozen=True)
class ExcessRisk:
    """Excess empirical risk of released models, with a certificate of its accuracy.

    Attributes
    ----------
    steps : array (k,)
        The steps t (1-based) evaluated.
    excess : array (k,)
        ``risk - optimum``. The optimum is computed from above (a feasible point), so
        ``excess`` is a lower bound of the true excess and ``excess + gap`` an upper one.
    risk : array (k,)
        ``L(theta_t; Gamma_t)``, exact up to rounding.
    optimum : array (k,)
        ``L`` at the best point found in C (``min_C L`` up to ``gap``).
    gap : array (k,)
        Certified bound on ``optimum - min_C L``: the Frank-Wolfe duality gap; 0 for
        ``domain=None`` (exact solve, rounding aside).
    minimizers : array (k, d)
        The points achieving ``optimum``.

    Examples
    --------
    >>> r = excess_empirical_risk(np.zeros((3, 2)), np.eye(3, 2), np.ones(3))
    >>> r.steps, r.excess, r.gap
    (array([1, 2, 3]), array([1., 2., 2.]), array([0., 0., 0.]))
    """

    steps: np.ndarray
    excess: np.ndarray
    risk: np.ndarray
    optimum: np.ndarray
    gap: np.ndarray
    minimizers: np.ndarray


def released_models(trace: Trace) -> np.ndarray:
    """Models released after each step, shape (T, d), from a learner's :class:`Trace`.

    ``Trace.weights[t]`` is the iterate used *before* step t+1 (online convention); KNJ's
    theta_t is the one released after step t: ``weights[1:]`` followed by ``final_weights``.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> trace = PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, seed=0).run(
    ...     np.eye(4, 2), np.ones(4))
    >>> M = released_models(trace)
    >>> M.shape, bool(np.all(M[-1] == trace.final_weights))
    ((4, 2), True)
    """
    if not isinstance(trace, Trace):
        raise fail("trace", "be a dpol.learners.Trace", trace)
    return np.vstack([trace.weights[1:], trace.final_weights[None, :]])


# ------------------------------------------------------------------ batched set oracles
def project_rows(domain: ConvexSet, V: np.ndarray) -> np.ndarray:
    """Euclidean projection of every row of V onto ``domain`` (vectorized for the balls,
    the simplex and boxes; a loop over ``domain.project`` otherwise).

    Examples
    --------
    >>> project_rows(L2Ball(2), np.array([[3.0, 4.0], [0.1, 0.2]]))
    array([[0.6, 0.8],
           [0.1, 0.2]])
    """
    if type(domain) is L2Ball:
        norms = np.linalg.norm(V, axis=1)
        scale = np.minimum(1.0, domain.radius / np.maximum(norms, 1e-300))
        return V * scale[:, None]
    if type(domain) is Box:
        return np.clip(V, domain.low, domain.high)
    if type(domain) is Simplex:
        return _simplex_rows(V, 1.0)
    if type(domain) is L1Ball:
        inside = np.abs(V).sum(axis=1) <= domain.radius
        out = np.sign(V) * _simplex_rows(np.abs(V), domain.radius)
        out[inside] = V[inside]
        return out
    return np.stack([domain.project(v) for v in V])


def _simplex_rows(V: np.ndarray, total: float) -> np.ndarray:
    """Row-wise projection onto {w >= 0, sum w = total} (sort-based, Duchi et al. 2008)."""
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - total
    ks = np.arange(1, V.shape[1] + 1)
    k = np.sum(U - css / ks > 0, axis=1)  # the condition holds exactly for j < k
    theta = css[np.arange(V.shape[0]), k - 1] / k
    return np.maximum(V - theta[:, None], 0.0)


def _oracle_rows(domain: ConvexSet, G: np.ndarray) -> np.ndarray:
    """argmin_{v in domain} <g, v> for every row g (vectorized where cheap)."""
    n, d = G.shape
    if type(domain) is L2Ball:
        norms = np.linalg.norm(G, axis=1)
        out = -domain.radius * G / np.maximum(norms, 1e-300)[:, None]
        out[norms == 0.0] = 0.0
        return out
    if type(domain) is Box:
        return np.where(G > 0, domain.low, domain.high)
    if type(domain) in (L1Ball, Simplex):
        out = np.zeros((n, d))
        if type(domain) is Simplex:
            out[np.arange(n), np.argmin(G, axis=1)] = 1.0
        else:
            j = np.argmax(np.abs(G), axis=1)
            out[np.arange(n), j] = -domain.radius * np.sign(G[np.arange(n), j])
        return out
    return np.stack([domain.linear_oracle(g) for g in G])


# ------------------------------------------------------------------ the per-block QP
def _solve_block(A, b, domain, start, tol, max_iter):
    """min_{theta in C} theta^T A_i theta - 2 b_i.theta for a block (A (n, d, d), b (n, d)).

    FISTA with the step 1/(2 lambda_max), lambda_max of the block's last matrix (the
    Q_t are non-decreasing in the PSD order, so it bounds every matrix of the block), and
    adaptive restart; stops when every row's Frank-Wolfe gap is <= its tolerance.
    Returns (theta, gap, converged).
    """
    lip = 2.0 * max(float(np.linalg.eigvalsh(A[-1])[-1]), 1e-300)
    x = project_rows(domain, np.repeat(start[None, :], len(b), axis=0))
    y, s = x.copy(), np.ones(len(b))
    for _ in range(max_iter + 1):
        g = 2.0 * (np.einsum("nij,nj->ni", A, x) - b)
        gap = np.maximum(np.einsum("ni,ni->n", g, x - _oracle_rows(domain, g)), 0.0)
        if np.all(gap <= tol):
            return x, gap, True
        gy = 2.0 * (np.einsum("nij,nj->ni", A, y) - b)
        x_new = project_rows(domain, y - gy / lip)
        restart = np.einsum("ni,ni->n", y - x_new, x_new - x) > 0.0
        s_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * s * s))
        y = x_new + ((s - 1.0) / s_new)[:, None] * (x_new - x)
        y[restart] = x_new[restart]
        x, s = x_new, np.where(restart, 1.0, s_new)
    return x, gap, False


def _exact_unconstrained(A, b):
    """Minimum-norm minimisers of theta^T A theta - 2 b.theta over R^d (pseudo-inverse)."""
    evals, evecs = np.linalg.eigh(A)
    cut = np.finfo(float).eps * A.shape[-1] * np.maximum(evals[:, -1:], 1e-300)
    inv = np.where(evals > cut, 1.0 / np.where(evals > cut, evals, 1.0), 0.0)
    coef = np.einsum("nji,nj->ni", evecs, b) * inv
    return np.einsum("nij,nj->ni", evecs, coef)


# ------------------------------------------------------------------ public
def excess_empirical_risk(
    weights: object,
    X: object,
    y: object,
    domain: ConvexSet | None = None,
    *,
    steps: object = None,
    tol: float = 1e-7,
    rtol: float = 1e-10,
    max_iter: int = 20_000,
) -> ExcessRisk:
    """KNJ's excess empirical risk of released models at every (or selected) step.

    Parameters
    ----------
    weights : array (T, d) or Trace
        ``weights[t-1]`` is the model released after step t (:func:`released_models`).
    X : array (T, d)
    y : array (T,)
        The stream the learner saw, after its clipping.
    domain : ConvexSet or None
        C; ``None`` for all of R^d.
    steps : array of int, optional
        The steps t (1-based, increasing) to evaluate; all of 1..T by default.
    tol, rtol : float
        Stop the per-step solver when its certified gap is ``<= tol + rtol * sum y^2``
        (sum scale, KNJ's units).
    max_iter : int
        Iteration budget per block of steps (else a :class:`~dpol.errors.NumericalWarning`).

    Returns
    -------
    ExcessRisk

    Notes
    -----
    ``optimum`` is exact for ``domain=None`` (pseudo-inverse) and an ``L2Ball`` (secular
    equation), FISTA to the tolerance on other sets. The squared loss is KNJ's
    ``(y - <x, theta>)^2`` (no 1/2).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)) / 2; y = np.clip(X @ [0.5, -0.5, 0.2], -1, 1)
    >>> W = np.zeros((50, 3))  # "always release 0"
    >>> r = excess_empirical_risk(W, X, y, L2Ball(3))
    >>> bool(np.all(r.excess >= 0)), bool(np.all(r.gap <= 1e-7 + 1e-10 * np.cumsum(y**2)))
    (True, True)
    """
    W, X, y, ts = _checked_stream(weights, X, y, domain, steps)
    tol = check_real("tol", tol, low=0.0)
    rtol = check_real("rtol", rtol, low=0.0)
    max_iter = check_int("max_iter", max_iter, low=1)
    d = X.shape[1]
    out = {k: np.empty(ts.size) for k in ("excess", "risk", "optimum", "gap")}
    mins = np.empty((ts.size, d))
    sums = _RunningSums(X, y)
    start = np.zeros(d) if domain is None else domain.project(np.zeros(d))
    unconverged = 0
    for i, j in _blocks(ts, max(1, _BLOCK_FLOATS // (d * d))):
        A, b, cc = sums.upto(ts[i:j])
        m, gap, ok = _block_minimizers(A, b, domain, start, tol + rtol * cc, max_iter)
        unconverged += 0 if ok else 1
        start = m[-1]  # warm start of the next block
        excess, opt = _excess_and_optimum(W[ts[i:j] - 1], A, b, cc, m)
        out["excess"][i:j], out["optimum"][i:j], out["gap"][i:j] = excess, opt, gap
        out["risk"][i:j] = opt + excess
        mins[i:j] = m
    if unconverged:
        warnings.warn(f"excess_empirical_risk: {unconverged} block(s) stopped at max_iter="
                      f"{max_iter} above the tolerance; `gap` states the certified accuracy",
                      NumericalWarning, stacklevel=2)
    return ExcessRisk(steps=ts, minimizers=mins, **out)


def _checked_stream(weights: object, X: object, y: object, domain: object, steps: object
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(W (T, d), X (T, d), y (T,), the steps to evaluate), checked; a Trace's released
    models for ``weights``, all of 1..T for ``steps=None``."""
    if isinstance(weights, Trace):
        weights = released_models(weights)
    if np.ndim(X) != 2:
        raise fail("X", "be a 2-d array of shape (T, d)", X)
    X = as_matrix("X", X, int(np.shape(X)[1]))
    n, d = X.shape
    y = as_vector("y", y, n)
    W = as_matrix("weights", weights, d)
    if W.shape[0] != n:
        raise fail("weights", f"have {n} rows, one per row of X", W)
    if domain is not None and (not isinstance(domain, ConvexSet) or domain.dim != d):
        raise fail("domain", f"be None or a dpol.sets.ConvexSet of dim {d}", domain)
    if steps is None:
        return W, X, y, np.arange(1, n + 1)
    ts = np.asarray(steps)
    if ts.ndim != 1 or ts.size == 0 or ts.dtype.kind not in "iu" or ts[0] < 1 \
            or ts[-1] > n or np.any(np.diff(ts) <= 0):
        raise fail("steps", f"be increasing integers in 1..{n}", steps)
    return W, X, y, ts


def _blocks(ts: np.ndarray, width: int):
    """(i, j): the steps ``ts[i:j]`` solved together, at most ``width`` of them (memory)
    with the last at most twice the first plus 64 (Q_t grows about linearly in t, so the
    block's step size, from its last matrix, stays within about 2x of every step's own).

    >>> list(_blocks(np.arange(1, 11), 4)), list(_blocks(np.array([1, 50, 300]), 8))
    ([(0, 4), (4, 8), (8, 10)], [(0, 2), (2, 3)])
    """
    i = 0
    while i < ts.size:
        j = i + 1
        while j < ts.size and j - i < width and ts[j] <= 2 * ts[i] + 64:
            j += 1
        yield i, j
        i = j


class _RunningSums:
    """Q_t = sum x x^T, q_t = sum y x and c_t = sum y^2 over the first t rows, read at
    increasing steps (each row is added once)."""

    def __init__(self, X: np.ndarray, y: np.ndarray) -> None:
        d = X.shape[1]
        self.X, self.y = X, y
        self.Q, self.q, self.c, self.done = np.zeros((d, d)), np.zeros(d), 0.0, 0

    def upto(self, block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Q_t, q_t, c_t) stacked for the increasing steps t of ``block``.

        >>> sums = _RunningSums(np.eye(3, 2), np.array([1.0, 2.0, 3.0]))
        >>> A, b, c = sums.upto(np.array([1, 3]))
        >>> A[1].tolist(), b.tolist(), c.tolist()
        ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [1.0, 2.0]], [1.0, 14.0])
        """
        d = self.X.shape[1]
        A, b, c = np.empty((len(block), d, d)), np.empty((len(block), d)), np.empty(len(block))
        for k, t in enumerate(block):
            Xs, ys = self.X[self.done:t], self.y[self.done:t]
            self.Q, self.q = self.Q + Xs.T @ Xs, self.q + Xs.T @ ys
            self.c, self.done = self.c + float(ys @ ys), int(t)
            A[k], b[k], c[k] = self.Q, self.q, self.c
        return A, b, c


def _block_minimizers(A: np.ndarray, b: np.ndarray, domain: ConvexSet | None,
                      start: np.ndarray, tol: np.ndarray, max_iter: int
                      ) -> tuple[np.ndarray, np.ndarray, bool]:
    """(minimisers over C, certified gaps, converged) of a block's quadratics: exact on
    R^d and on an l2 ball, FISTA from ``start`` to the per-step ``tol`` on other sets.

    >>> A, b = np.stack([np.eye(2)] * 2), np.array([[1.0, 0.0], [3.0, 0.0]])
    >>> m, gap, ok = _block_minimizers(A, b, L2Ball(2, 2.0), np.zeros(2), np.zeros(2), 10)
    >>> m.tolist(), ok  # minimiser b, pulled back onto the ball when outside
    ([[1.0, 0.0], [2.0, 0.0]], True)
    """
    if domain is None:
        return _exact_unconstrained(A, b), np.zeros(len(b)), True
    if type(domain) is L2Ball:
        m = l2_ball_quadratic_min(A, b, domain.radius)
        return m, _fw_gaps(domain, A, b, m), True
    return _solve_block(A, b, domain, start, tol, max_iter)


def _fw_gaps(domain: ConvexSet, A: np.ndarray, b: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Frank-Wolfe gaps <grad L(m), m - v> of every row's point (the certificate)."""
    g = 2.0 * (np.einsum("nij,nj->ni", A, m) - b)
    return np.maximum(np.einsum("ni,ni->n", g, m - _oracle_rows(domain, g)), 0.0)


def _excess_and_optimum(w: np.ndarray, A: np.ndarray, b: np.ndarray, c: np.ndarray,
                        m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L(w) - L(m), L(m)) per row, L(theta) = c - 2 b.theta + theta^T A theta; the
    difference as (w - m)^T A (w + m) - 2 b.(w - m), so that no sum of t squares cancels.

    >>> A, b, c = np.eye(1)[None], np.ones((1, 1)), np.ones(1)
    >>> _excess_and_optimum(np.zeros((1, 1)), A, b, c, np.ones((1, 1)))  # (1 - 0)^2
    (array([1.]), array([0.]))
    """
    diff = w - m
    excess = np.einsum("ni,nij,nj->n", diff, A, w + m) - 2.0 * np.einsum("ni,ni->n", b, diff)
    opt = c - 2.0 * np.einsum("ni,ni->n", b, m) + np.einsum("ni,nij,nj->n", m, A, m)
    return excess, opt
