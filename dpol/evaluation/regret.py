"""Regret against the best fixed point in hindsight (layer L5).

``R_T = Σ_{t<=T} f_t(w_t) − Σ_{t<=T} f_t(u)`` against the best fixed point in hindsight
``u* = argmin_{w in C} Σ_t f_t(w)`` (JKT's Appendix G plots ``R_t/t``).
:func:`best_fixed_point` computes ``u*`` exactly for quadratics and to a certified
accuracy otherwise (:mod:`dpol.evaluation._fixed_point_solvers`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from dpol._validation import as_matrix, as_vector, check_choice, check_int, check_real, fail
from dpol.errors import NumericalWarning
from dpol.evaluation._fixed_point_solvers import (
    CLOSED_FORMS,
    MeanObjective,
    certify,
    choose_method,
    closed_form,
    iterate,
    split_regularized,
)
from dpol.learners import Trace
from dpol.losses import LinearLoss, Loss
from dpol.sets import ConvexSet

__all__ = ["FixedPointResult", "average_regret", "best_fixed_point", "cumulative_regret"]

METHODS = ("auto", "closed_form", "lbfgs", "fista")


@dataclass(frozen=True)
class FixedPointResult:
    """The best fixed point with a certificate of how good it is.

    Attributes
    ----------
    w : array (d,)
        The minimiser found.
    objective : float
        ``Σ_t f(w; x_t, y_t)`` (sum, not mean).
    method : str
        ``"lstsq"``, ``"ridge"`` or ``"ridge-l2ball"`` (closed forms, exact up to rounding),
        ``"lbfgs"``, ``"lbfgs+fista"`` or ``"fista"`` (iterative).
    grad_mapping_norm : float
        Stationarity of the *mean* objective ``F(w)/n`` at ``w``: ``‖∇F(w)‖/n`` on R^d,
        the gradient-mapping norm ``L·‖w − P(w − ∇F(w)/(nL))‖`` on a set (``L`` the
        smoothness estimate of the mean objective). Iterative methods stop when it is
        ``<= tol``.
    suboptimality_bound : float
        A certified upper bound on ``objective − min_C Σ_t f_t`` (sum scale), from
        convexity alone (``g = ∇F(w)/n``): the smaller of the Frank–Wolfe gap
        ``n⟨g, w − v⟩`` on a set and, when ``μ``-strongly convex, ``n‖g‖²/(2μ)`` on R^d
        (its constrained analogue on a set). ``inf`` when nothing is certified. Rounding
        in ``∇F`` is not included.
    n_iter : int
        Iterations of the iterative solver (0 for closed forms).
    converged : bool
        Whether ``grad_mapping_norm <= tol`` (always True for closed forms).

    Examples
    --------
    >>> from dpol.losses import SquaredLoss
    >>> info = best_fixed_point(SquaredLoss(), np.eye(2), [1.0, -1.0], return_info=True)
    >>> info.method, info.w, info.objective, info.converged
    ('lstsq', array([ 1., -1.]), 0.0, True)
    """

    w: np.ndarray
    objective: float
    method: str
    grad_mapping_norm: float
    suboptimality_bound: float
    n_iter: int
    converged: bool


# ------------------------------------------------------------------------------ public
def _ndim(name: str, value: object) -> int:
    try:
        return int(np.ndim(value))
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise fail(name, "be a numeric array", value) from exc


def _check_loss(loss: object) -> Loss:
    if not isinstance(loss, Loss):
        raise fail("loss", "be a dpol.losses.Loss", loss)
    return loss


def best_fixed_point(
    loss: Loss,
    X: object,
    y: object,
    domain: ConvexSet | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    method: str = "auto",
    return_info: bool = False,
) -> np.ndarray | FixedPointResult:
    """The best fixed point in hindsight, ``argmin_{w in domain} Σ_t loss(w; x_t, y_t)``.

    Parameters
    ----------
    loss : Loss
        The per-element loss (a ``Regularized`` one puts ``(nα/2)‖w‖²`` in the sum). Pass
        the learner's loss and the stream it saw *after clipping*.
    X : array (n, d)
    y : array (n,)
    domain : ConvexSet, optional
        The constraint set (with ``project``); ``None`` for all of R^d.
    tol : float, default 1e-10
        Target gradient-mapping norm of the mean objective (:class:`FixedPointResult`).
    max_iter : int, default 10000
        Iterations of the iterative solvers (else a :class:`~dpol.errors.NumericalWarning`).
    method : {"auto", "closed_form", "lbfgs", "fista"}
        ``"auto"``: the closed form for the (ridge) squared loss on R^d or an ``L2Ball``,
        else L-BFGS on R^d and FISTA on a set.
    return_info : bool, default False
        Return a :class:`FixedPointResult` (with its certified accuracy).

    Returns
    -------
    array (d,) or FixedPointResult

    Notes
    -----
    Without a minimiser (logistic loss, separable data, R^d) the solver stops at a far
    point with ``suboptimality_bound = inf``: use a bounded domain or ``Regularized``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.losses import LogisticLoss, Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5])
    >>> w = best_fixed_point(Regularized(SquaredLoss(), 0.1), X, y)
    >>> bool(np.allclose((X.T @ X + 50 * 0.1 * np.eye(3)) @ w, X.T @ y))
    True
    >>> info = best_fixed_point(LogisticLoss(), X, np.sign(y), L2Ball(3), return_info=True)
    >>> info.method, info.converged, info.grad_mapping_norm <= 1e-10
    ('fista', True, True)
    """
    loss, X, y = _checked_problem(loss, X, y, domain)
    tol = check_real("tol", tol, low=0.0, low_open=True)
    max_iter = check_int("max_iter", max_iter, low=1)
    method = check_choice("method", method, METHODS)
    if not isinstance(return_info, bool):
        raise fail("return_info", "be a bool", return_info)
    method, warm = choose_method(method, loss, domain)
    obj = MeanObjective(loss, X, y)
    if method == "closed_form":
        w, name, L, mu = closed_form(obj, domain)
        n_iter = 0
    else:
        w, name, L, n_iter = iterate(obj, method, domain, warm, tol, max_iter)
        mu = obj.strong_convexity()
    result = _certified(obj, domain, w, name, L, mu, n_iter, tol)
    return result if return_info else w


def _certified(obj: MeanObjective, domain: ConvexSet | None, w: np.ndarray, name: str,
               L: float, mu: float, n_iter: int, tol: float) -> FixedPointResult:
    """``w`` with its certificate (:func:`~dpol.evaluation._fixed_point_solvers.certify`)
    and whether the solver converged; a :class:`~dpol.errors.NumericalWarning` when not.
    """
    objective, gm, bound = certify(obj, w, domain, L, mu)
    # L-BFGS stalls near ||grad|| ~ sqrt(eps) on ill-conditioned data, where the
    # certificate can still prove the mean objective within tol of its minimum
    converged = name in CLOSED_FORMS or gm <= tol or bound <= obj.n * tol
    if not converged:
        warnings.warn(f"best_fixed_point: {name} stopped after {n_iter} iterations with "
                      f"gradient-mapping norm {gm:.3g} > tol={tol:.3g} (certified "
                      f"suboptimality <= {bound:.3g}); raise max_iter",
                      NumericalWarning, stacklevel=3)
    return FixedPointResult(w=w, objective=objective, method=name, grad_mapping_norm=gm,
                            suboptimality_bound=bound, n_iter=n_iter, converged=converged)


def _checked_problem(loss: object, X: object, y: object, domain: object
                     ) -> tuple[Loss, np.ndarray, np.ndarray]:
    """The loss, ``X`` (n, d) and ``y`` (n,) as arrays, and ``domain`` checked against d."""
    loss = _check_loss(loss)
    if _ndim("X", X) != 2:
        raise fail("X", "be a 2-d array of shape (n, d)", X)
    X = as_matrix("X", X, np.shape(X)[1])
    n, d = X.shape
    y = as_vector("y", y, n)
    if domain is not None:
        if not isinstance(domain, ConvexSet):
            raise fail("domain", "be None (R^d) or a dpol.sets.ConvexSet", domain)
        if domain.dim != d:
            raise fail("domain", f"have dim {d}, the number of columns of X", domain)
    return loss, X, y


def _pointwise_losses(loss: Loss, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``loss(W[t]; X[t], y[t])`` for every row t."""
    base, alpha = split_regularized(loss)
    if isinstance(base, LinearLoss):
        z = np.einsum("ij,ij->i", X, W)
        return base._phi(z, y) + 0.5 * alpha * np.einsum("ij,ij->i", W, W)
    return np.array([float(loss._value(w, x[None, :], np.array([v]))[0])
                     for w, x, v in zip(W, X, y, strict=True)])


def cumulative_regret(
    trace_or_losses: Trace | object,
    loss: Loss,
    X: object,
    y: object,
    comparator: object,
) -> np.ndarray:
    """Cumulative regret ``R_t = Σ_{s<=t} (f_s(w_s) − f_s(u))`` for t = 1..T.

    Parameters
    ----------
    trace_or_losses : Trace or array (T,)
        The losses the learner suffered: a :class:`~dpol.learners.Trace` (its ``losses``,
        checked against ``loss`` at its ``weights`` on ``(X, y)`` to a relative 1e-9, so a
        wrong loss or an unclipped stream is refused) or the array ``f_t(w_t)`` itself.
    loss : Loss
        The loss ``f_t(w) = loss(w; x_t, y_t)`` (the learner's, regulariser included).
    X : array (T, d)
    y : array (T,)
        The stream the learner saw, after its clipping.
    comparator : array (d,) or FixedPointResult
        The fixed point ``u``, e.g. :func:`best_fixed_point`.

    Returns
    -------
    array (T,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.losses import SquaredLoss
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> y = np.array([1.0, -1.0, 0.0])
    >>> u = np.array([1.0, -1.0])  # suffers 0, 0, 0
    >>> cumulative_regret([0.5, 0.0, 0.25], SquaredLoss(), X, y, u)
    array([0.5 , 0.5 , 0.75])
    """
    loss = _check_loss(loss)
    if isinstance(comparator, FixedPointResult):
        comparator = comparator.w
    if _ndim("comparator", comparator) != 1 or np.size(comparator) == 0:
        raise fail("comparator", "be a non-empty 1-d array (d,)", comparator)
    u = as_vector("comparator", comparator, int(np.size(comparator)))
    d = u.shape[0]
    X = as_matrix("X", X, d)
    n = X.shape[0]
    y = as_vector("y", y, n)
    if isinstance(trace_or_losses, Trace):
        suffered = as_vector("trace_or_losses.losses", trace_or_losses.losses, n)
        W = as_matrix("trace_or_losses.weights", trace_or_losses.weights, d)
        if W.shape[0] != n:
            raise fail("trace_or_losses.weights", f"have {n} rows, one per row of X", W)
        expected = _pointwise_losses(loss, W, X, y)
        if not np.allclose(suffered, expected, rtol=1e-9, atol=1e-12):
            worst = int(np.argmax(np.abs(suffered - expected)))
            raise fail("trace_or_losses", "hold the losses of `loss` on (X, y) at its weights "
                       "(pass the learner's loss and the clipped stream it saw)",
                       f"Trace with losses[{worst}]={suffered[worst]!r}, but `loss` gives "
                       f"{expected[worst]!r}")
    else:
        suffered = as_vector("trace_or_losses", trace_or_losses, n)
    return np.cumsum(suffered - loss.value(u, X, y))


def average_regret(
    trace_or_losses: Trace | object,
    loss: Loss,
    X: object,
    y: object,
    comparator: object,
) -> np.ndarray:
    """Average regret ``R_t/t`` for t = 1..T, the figure of JKT's Appendix G (log scale).

    Same arguments as :func:`cumulative_regret`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.losses import SquaredLoss
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(4, 2)), rng.normal(size=4)
    >>> u, losses = best_fixed_point(SquaredLoss(), X, y), np.ones(4)
    >>> avg = average_regret(losses, SquaredLoss(), X, y, u)
    >>> bool(np.allclose(avg * np.arange(1, 5), cumulative_regret(losses, SquaredLoss(),
    ...                                                            X, y, u)))
    True
    """
    regret = cumulative_regret(trace_or_losses, loss, X, y, comparator)
    return regret / np.arange(1, regret.shape[0] + 1)
