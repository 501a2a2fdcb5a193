"""Linear-model losses inside learners: split the regulariser, vectorize, implicit steps."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import bisect, brentq

from dpol._validation import as_matrix, as_vector, check_real, fail
from dpol.clipping import clip_examples
from dpol.losses import LinearLoss, Regularized, SquaredLoss

__all__ = ["ball_radius", "implicit_step", "pointwise_loss", "split_loss"]

# Absolute tolerance of the scalar root finds (with a relative one of 4 ulps). The
# sensitivity proofs assume exact implicit steps: an error tau in s moves the iterate by
# up to c_t beta tau ||x|| (beta the curvature of phi in s), and float rounding moves
# every step by about an ulp of ||w||. SENSITIVITY_SLACK, added to the declared
# sensitivities, absorbs the first steps' errors only; what accumulates over a long
# stream (measured: 5e-10 of the sensitivity after 2e4 steps) is float rounding of the
# deterministic iterates, outside the guarantee as in any float implementation
# (docs/errata.md, JKT-7).
ROOT_TOL = 1e-14
SENSITIVITY_SLACK = 1e-12
#: iterations of a root find: bisection halves any float64 bracket (width < 2^1025) to
#: below ROOT_TOL in at most 1,071 steps; brentq's fallback is bisection with this cap
_MAXITER = 2200
_RTOL = 4 * np.finfo(float).eps


def split_loss(loss: object, *, need_alpha: bool = True) -> tuple[LinearLoss, float]:
    """(data loss, alpha) of ``Regularized(LinearLoss, alpha)`` or a bare ``LinearLoss``.

    ``need_alpha`` (learners whose step sizes or sensitivities use strong convexity)
    refuses alpha = 0.

    Examples
    --------
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> split_loss(Regularized(SquaredLoss(), 0.5))
    (SquaredLoss(x_bound=1.0, y_bound=1.0), 0.5)
    >>> split_loss(SquaredLoss())  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: loss must be strongly convex: wrap it as
    Regularized(loss, alpha) with alpha > 0; got SquaredLoss(x_bound=1.0, y_bound=1.0)
    """
    if isinstance(loss, Regularized) and isinstance(loss.loss, LinearLoss):
        data, alpha = loss.loss, float(loss.alpha)
    elif isinstance(loss, LinearLoss):
        data, alpha = loss, 0.0
    else:
        raise fail("loss", "be a linear-model loss (SquaredLoss, LogisticLoss, HingeLoss), "
                   "optionally Regularized(loss, alpha)", loss)
    if need_alpha and alpha <= 0.0:
        raise fail("loss", "be strongly convex: wrap it as Regularized(loss, alpha) with "
                   "alpha > 0", loss)
    return data, alpha


def pointwise_loss(data: LinearLoss, alpha: float, W: np.ndarray, X: np.ndarray,
                   y: np.ndarray) -> np.ndarray:
    """f_t(W[t]) for every row: phi(<W[t], X[t]>, y[t]) + alpha/2 ||W[t]||^2.

    Examples
    --------
    >>> from dpol.losses import SquaredLoss  # phi(z, y) = (y - z)^2 / 2
    >>> W, X = np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> pointwise_loss(SquaredLoss(), 0.5, W, X, np.array([1.0, 1.0])).tolist()
    [0.5, 0.25]
    """
    margins = np.einsum("ij,ij->i", W, X)
    return data._phi(margins, y) + 0.5 * alpha * np.einsum("ij,ij->i", W, W)


def ball_radius(domain: object) -> float | None:
    """Radius of an origin-centred L2 ball domain, or None for R^d.

    Examples
    --------
    >>> from dpol.sets import Box, L2Ball
    >>> ball_radius(L2Ball(2, 3.0)), ball_radius(None)
    (3.0, None)
    >>> ball_radius(Box(0.0, 1.0, dim=2))  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: domain must be an L2Ball or None for this learner's
    implicit step; got Box(low=array([0., 0.]), high=array([1., 1.]))
    """
    if domain is None:
        return None
    from dpol.sets import L2Ball

    if not isinstance(domain, L2Ball):
        raise fail("domain", "be an L2Ball or None for this learner's implicit step", domain)
    return float(domain.radius)


def _solve_margin(data: LinearLoss, w: np.ndarray, g: np.ndarray, y: float, eta: float,
                  c: float) -> float:
    """Root s of h(s) = c s + eta ||g||^2 phi'(s) - <g, w> (h is increasing)."""
    gw, gg = float(g @ w), float(g @ g)
    if isinstance(data, SquaredLoss):  # phi'(s) = s - y: closed form
        return (gw + eta * gg * y) / (c + eta * gg)
    def dphi(s: float) -> float:
        # scalars through the vectorized phi': the same float ops as on a one-element
        # array, ~0.3 us per call instead of ~2 us (brentq makes ~6 calls per step)
        return float(data._dphi(s, y))

    s0 = gw / c
    d0 = dphi(s0)
    if d0 == 0.0:
        return s0
    # phi' is non-decreasing, so the root lies between s0 and s0 - eta gg phi'(s0) / c
    s1 = s0 - eta * gg * d0 / c
    if s1 == s0:  # the step is below an ulp of s0 (huge margins): s0 is the root in float
        return s0

    def h(s: float) -> float:
        return c * s + eta * gg * dphi(s) - gw

    # h(s1) = eta gg (phi'(s1) - phi'(s0)) has the opposite sign of h(s0) = eta gg d0
    # unless phi' is constant on [s1, s0] (a linear zone, e.g. the hinge's): then s1 is
    # the root, and rounding may give h(s1) either sign
    h1 = h(s1)
    if h1 == 0.0 or (h1 > 0.0) == (d0 > 0.0):
        return s1
    lo, hi = (s1, s0) if s1 < s0 else (s0, s1)
    return _root(h, lo, hi)


def _root(f, lo: float, hi: float) -> float:
    """The root of f in [lo, hi] (a sign change) by brentq, or by bisection where brentq
    does not converge in _MAXITER steps (data-dependent errors would tell data apart).

    >>> round(_root(lambda s: s * s - 2.0, 0.0, 2.0), 12)
    1.414213562373
    """
    try:
        return brentq(f, lo, hi, xtol=ROOT_TOL, rtol=_RTOL, maxiter=_MAXITER)
    except RuntimeError:  # not converged: bisection's count is bounded
        return bisect(f, lo, hi, xtol=ROOT_TOL, rtol=_RTOL, maxiter=_MAXITER)


def implicit_step(data: LinearLoss, alpha: float, w: np.ndarray, x: np.ndarray, y: float,
                  eta: float, radius: float | None) -> np.ndarray:
    """argmin_{||v|| <= radius} 1/2 ||v - w||^2 + eta (phi(<x, v>, y) + alpha/2 ||v||^2).

    Stationarity gives v = (w - eta phi'(s) x) / (1 + eta alpha + nu) with s = <x, v> and
    nu >= 0 the multiplier of the ball (docs/errata.md, JKT-7). For each nu the margin s is
    the root of an increasing scalar function; ||v(nu)|| decreases in nu, so the active
    constraint is met by a root find on nu.

    Examples
    --------
    Squared loss from w = 0 on x = e_1, y = 1, eta = 1: argmin 1/2 v^2 + 1/2 (v - 1)^2
    is 1/2; with alpha = 1 it is 1/3; a ball of radius 1/4 stops it at its boundary.

    >>> from dpol.losses import SquaredLoss
    >>> w, e1 = np.zeros(2), np.array([1.0, 0.0])
    >>> implicit_step(SquaredLoss(), 0.0, w, e1, 1.0, 1.0, None).tolist()
    [0.5, 0.0]
    >>> implicit_step(SquaredLoss(), 1.0, w, e1, 1.0, 1.0, None).round(4).tolist()
    [0.3333, 0.0]
    >>> implicit_step(SquaredLoss(), 0.0, w, e1, 1.0, 1.0, 0.25).tolist()
    [0.25, 0.0]
    """
    def solution(nu: float) -> np.ndarray:
        c = 1.0 + eta * alpha + nu
        s = _solve_margin(data, w, x, y, eta, c)
        return (w - eta * float(data._dphi(s, y)) * x) / c

    v = solution(0.0)
    if radius is None or math.sqrt(float(v @ v)) <= radius:
        return v
    hi = 1.0
    while math.sqrt(float(solution(hi) @ solution(hi))) > radius:
        hi *= 4.0
    nu = _root(lambda n: math.sqrt(float(solution(n) @ solution(n))) - radius, 0.0, hi)
    v = solution(nu)
    # the ball is active (nu > 0), so the argmin lies on the sphere: scaling onto it
    # removes the radial part of nu's error, both ways (not only an overshoot)
    return v * (radius / math.sqrt(float(v @ v)))


def fit_arguments(solver: object, X: object, y: object, scale: object, name: str = "sigma"
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """A batch solver's ``fit`` inputs checked, and its examples clipped to the loss's bounds.

    The solvers' sensitivities need data within the loss's bounds, so ``fit`` clips
    (``solver.n_clipped_``); sigma must be finite and >= 0.

    Examples
    --------
    >>> from dpol.learners import PrivateProjectedSGD
    >>> from dpol.losses import SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> solver = PrivateProjectedSGD(SquaredLoss(), L2Ball(2, 1.0))
    >>> X, y, sigma = fit_arguments(solver, [[3.0, 4.0], [0.1, 0.0]], [0.5, -2.0], 1)
    >>> X.round(2).tolist(), y.tolist(), sigma, solver.n_clipped_
    ([[0.6, 0.8], [0.1, 0.0]], [0.5, -1.0], 1.0, 2)
    >>> fit_arguments(solver, X, y, -1.0)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: sigma must be >= 0.0; got -1.0
    """
    X = as_matrix("X", X, solver.domain.dim)
    y = as_vector("y", y, X.shape[0])
    scale = check_real(name, scale, low=0.0)
    X, y, clipped = clip_examples(X, y, solver._data.x_bound, solver._data.y_bound)
    solver.n_clipped_ += clipped
    return X, y, scale
