"""How :func:`~dpol.evaluation.best_fixed_point` solves the offline problem (layer L5).

The mean objective ``F(w)/n`` with its gradient and smoothness estimate; the closed form
of ridge regression on R^d or an l2 ball (thin SVD and the secular equation); FISTA with
backtracking and restart; scipy's L-BFGS; and the convexity certificate of how far a
point is from the minimum. :mod:`dpol.evaluation.regret` chooses among them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize

from dpol._validation import fail
from dpol.losses import LinearLoss, Loss, Regularized, SquaredLoss
from dpol.sets import ConvexSet, L2Ball

__all__ = ["CLOSED_FORMS", "MeanObjective", "certify", "choose_method", "closed_form", "fista",
           "is_quadratic", "iterate", "lbfgs", "ridge_svd", "split_regularized"]

#: the closed forms' names (exact up to rounding: converged by construction)
CLOSED_FORMS = ("lstsq", "ridge", "ridge-l2ball")


# ----------------------------------------------------------------------------- objective
def split_regularized(loss: Loss) -> tuple[Loss, float]:
    """The innermost base loss of a chain of ``Regularized`` and the total alpha."""
    alpha = 0.0
    while isinstance(loss, Regularized):
        alpha += loss.alpha
        loss = loss.loss
    return loss, alpha


class MeanObjective:
    """``F(w)/n``, the mean of ``f(w; x_t, y_t)`` over the rows, with its gradient."""

    def __init__(self, loss: Loss, X: np.ndarray, y: np.ndarray) -> None:
        self.loss, self.X, self.y, self.n = loss, X, y, X.shape[0]
        base, alpha = split_regularized(loss)
        self.linear = base if isinstance(base, LinearLoss) else None
        self.alpha = alpha

    def fg(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        if self.linear is not None:
            z = self.X @ w
            f = float(np.mean(self.linear._phi(z, self.y))) + 0.5 * self.alpha * float(w @ w)
            g = self.X.T @ self.linear._dphi(z, self.y) / self.n + self.alpha * w
            return f, g
        f = float(np.mean(self.loss._value(w, self.X, self.y)))
        return f, self.loss._grad(w, self.X, self.y).mean(axis=0)

    def smoothness(self) -> float:
        """An estimate of the smoothness of the mean (backtracking corrects it)."""
        if self.linear is None:
            L = float(self.loss.smoothness)
        else:
            curvature = self.linear.smoothness / self.linear.x_bound**2  # sup |φ''|
            L = curvature * _sq_spectral_norm(self.X) / self.n + self.alpha
        if not math.isfinite(L) or L <= 0.0:
            L = 1.0
        return max(L, 1e-8)

    def strong_convexity(self) -> float:
        return float(self.loss.strong_convexity)


def _sq_spectral_norm(X: np.ndarray) -> float:
    """``‖X‖₂²`` by power iteration on ``XᵀX`` (deterministic start)."""
    d = X.shape[1]
    v = 1.0 + np.arange(d) / (2.0 * d)
    lam = 0.0
    for _ in range(40):
        u = X.T @ (X @ v)
        norm = float(np.linalg.norm(u))
        if norm == 0.0:
            return 0.0
        lam_new = norm / float(np.linalg.norm(v))
        v = u / norm
        if abs(lam_new - lam) <= 1e-3 * lam_new:
            return 1.01 * lam_new
        lam = lam_new
    return 1.01 * lam


# ------------------------------------------------------------------------ closed forms
def is_quadratic(loss: Loss) -> bool:
    return type(split_regularized(loss)[0]) is SquaredLoss


def ridge_svd(X: np.ndarray, y: np.ndarray, lam0: float, radius: float | None):
    """Minimise ``½‖Xw − y‖² + (lam0/2)‖w‖²`` over R^d or ``‖w‖ <= radius``, exactly.

    With the thin SVD ``X = U diag(s) Vᵀ`` and ``c = Uᵀy`` the minimiser of
    ``½‖Xw − y‖² + (λ/2)‖w‖²`` is ``w(λ) = V diag(s/(s² + λ)) c`` (minimum-norm for
    ``λ = 0``, singular values below ``eps·max(n, d)·s_max`` counted as zero, like
    ``lstsq``). On the ball, KKT gives ``w(lam0 + ν)`` with ``ν >= 0`` and
    ``ν(‖w‖ − radius) = 0``: ``ν = 0`` if ``‖w(lam0)‖ <= radius``, else ``ν`` solves the
    secular equation ``‖w(lam0 + ν)‖ = radius``. ``‖w(λ)‖`` is continuous and strictly
    decreasing (each ``s_i c_i/(s_i² + λ)`` is), so Brent's method on the bracket
    ``[0, ‖Xᵀy‖/radius]`` (where ``‖w‖ <= ‖diag(s)c‖/ν = radius``) finds it.
    Returns ``w``, the multiplier used, and ``s``.
    """
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    c = U.T @ y
    if lam0 == 0.0:
        keep = s > np.finfo(float).eps * max(X.shape) * (s[0] if s.size else 0.0)
        s_eff = np.where(keep, s, 0.0)
        denom_floor = np.where(keep, 0.0, 1.0)  # masked directions: 0/(0 + 1) = 0
    else:
        s_eff, denom_floor = s, np.zeros_like(s)

    def coef(lam: float) -> np.ndarray:
        return s_eff * c / (s_eff**2 + lam + denom_floor)

    a = coef(lam0)
    lam = lam0
    if radius is not None and float(np.linalg.norm(a)) > radius:
        sc = float(np.linalg.norm(s_eff * c))
        nu = brentq(lambda nu: float(np.linalg.norm(coef(lam0 + nu))) - radius,
                    0.0, sc / radius, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500)
        lam = lam0 + nu
        a = coef(lam)
    w = Vt.T @ a
    if radius is not None:
        norm = float(np.linalg.norm(w))
        if norm > radius:  # rounding only
            w *= radius / norm
    return w, lam, s


def choose_method(method: str, loss: Loss, domain: ConvexSet | None) -> tuple[str, bool]:
    """(the solver ``method`` names, whether L-BFGS on R^d goes first): ``"auto"`` picks
    the closed form where it applies, else L-BFGS on R^d and FISTA on a set (warm-started
    by L-BFGS when its minimiser lies in the set); a forced solver must apply.

    >>> from dpol.losses import LogisticLoss, SquaredLoss
    >>> choose_method("auto", SquaredLoss(), L2Ball(2)), choose_method(
    ...     "auto", LogisticLoss(), L2Ball(2))
    (('closed_form', False), ('fista', True))
    """
    closed_ok = is_quadratic(loss) and (domain is None or type(domain) is L2Ball)
    if method == "closed_form" and not closed_ok:
        raise fail("method", "be 'closed_form' only for SquaredLoss or "
                   "Regularized(SquaredLoss, alpha) on R^d or an L2Ball", method)
    if method == "lbfgs" and domain is not None:
        raise fail("method", "be 'lbfgs' only without a domain (on R^d)", method)
    if method != "auto":
        return method, False
    if closed_ok:
        return "closed_form", False
    return ("lbfgs", False) if domain is None else ("fista", True)


def closed_form(obj: MeanObjective, domain: ConvexSet | None
                 ) -> tuple[np.ndarray, str, float, float]:
    """(w, method name, smoothness L, strong convexity mu) of the quadratic's closed form,
    via the thin SVD of ``X`` (:func:`ridge_svd`): bare squared loss on R^d, ``lstsq``
    (minimum-norm least squares); ridge on R^d, ``(XᵀX + nα I) w = Xᵀy``; on an
    ``L2Ball`` of radius ``R``, ``(XᵀX + (nα + ν)I)⁻¹Xᵀy`` with ``ν >= 0`` from the
    secular equation ``‖w‖ = R`` when the unconstrained solution lies outside. L and mu
    of the mean objective come from the singular values, for the certificate.

    >>> from dpol.losses import SquaredLoss
    >>> w, name, L, mu = closed_form(MeanObjective(SquaredLoss(), 2 * np.eye(2),
    ...                                             np.ones(2)), None)
    >>> w, name, L, mu  # F(w)/n = (1/n) sum (2 w_i - 1)^2 / 2: curvature 4/2
    (array([0.5, 0.5]), 'lstsq', 2.0, 2.0)
    """
    X, y, n, alpha = obj.X, obj.y, obj.n, obj.alpha
    mu = obj.strong_convexity()
    radius = None if domain is None else domain.radius
    if domain is None and alpha == 0.0:
        w, _, rank, s = np.linalg.lstsq(X, y, rcond=None)
        name, s = "lstsq", s[:rank]
    else:
        w, _, s = ridge_svd(X, y, n * alpha, radius)
        name = "ridge" if domain is None else "ridge-l2ball"
        s = s[s > np.finfo(float).eps * max(X.shape) * (s[0] if s.size else 0.0)]
    s_min2 = float(s[-1]) ** 2 if s.size else 0.0
    L = max((float(s[0]) ** 2 if s.size else 0.0) / n + alpha, 1e-300)
    # the mean objective is (s_min²/n + α)-strongly convex when rank X = d; for
    # minimum-norm least squares w and ∇F lie in the row space of X, where it is too
    if s.size == X.shape[1] or name == "lstsq":
        mu = max(mu, s_min2 / n + alpha)
    return w, name, L, mu


# --------------------------------------------------------------------------- iterative
def fista(obj: MeanObjective, project, w0: np.ndarray, L: float, tol: float,
           max_iter: int) -> tuple[np.ndarray, int, float]:
    """Accelerated projected gradient (FISTA) with backtracking and adaptive restart.

    Backtracking (Beck–Teboulle) accepts ``L`` when the local curvature estimate does
    not exceed it: ``2(F(x) − F(y) − ⟨∇F(y), x − y⟩)/‖x − y‖²`` while the value
    difference is above rounding, else ``‖∇F(x) − ∇F(y)‖/‖x − y‖`` (as TFOCS does), so
    the step stays sound when values no longer resolve progress. Momentum restarts when
    ``⟨y − x⁺, x⁺ − x⁻⟩ > 0`` (O'Donoghue & Candès 2015). Stops when the gradient
    mapping ``L‖x − P(x − ∇F(x)/L)‖ <= tol`` at the new iterate. Returns the iterate,
    the number of iterations and the final ``L``.
    """
    x = project(w0)
    f_y, g_y = obj.fg(x)
    if L * float(np.linalg.norm(x - project(x - g_y / L))) <= tol:
        return x, 0, L
    y, t = x, 1.0
    for k in range(1, max_iter + 1):
        for _ in range(200):
            x_new = project(y - g_y / L)
            d = x_new - y
            dd = float(d @ d)
            f_new, g_new = obj.fg(x_new)
            if dd == 0.0:
                break
            if not math.isfinite(f_new):
                L *= 2.0
                continue
            if abs(f_new - f_y) >= 1e-10 * max(abs(f_new), abs(f_y), 1e-300):
                local = 2.0 * (f_new - f_y - float(g_y @ d)) / dd
            else:
                local = float(np.linalg.norm(g_new - g_y)) / math.sqrt(dd)
            if local <= L:
                break
            L = max(local, 2.0 * L)
        if L * float(np.linalg.norm(x_new - project(x_new - g_new / L))) <= tol:
            return x_new, k, L
        if float((y - x_new) @ (x_new - x)) > 0.0:  # restart the momentum
            t, y, f_y, g_y = 1.0, x_new, f_new, g_new
        else:
            t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            y = x_new + ((t - 1.0) / t_new) * (x_new - x)
            t = t_new
            f_y, g_y = obj.fg(y)
        x = x_new
    return x, max_iter, L


def lbfgs(obj: MeanObjective, w0: np.ndarray, tol: float, max_iter: int):
    """scipy's L-BFGS-B on the mean objective; it stops on the gradient or a stalled
    line search (values stop resolving progress near ``‖∇F‖ ~ sqrt(eps)``)."""
    res = minimize(obj.fg, w0, jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "maxfun": 4 * max_iter + 100, "maxcor": 20,
                            "gtol": tol / math.sqrt(w0.shape[0]), "ftol": 0.0})
    return np.asarray(res.x, dtype=float), int(res.nit)


def iterate(obj: MeanObjective, method: str, domain: ConvexSet | None, warm: bool,
             tol: float, max_iter: int) -> tuple[np.ndarray, str, float, int]:
    """(w, method name, the smoothness L backtracking reached, iterations) of the
    iterative solvers: L-BFGS on R^d, polished by FISTA when it stalls above ``tol``;
    FISTA on a set, from L-BFGS's minimiser when ``warm`` and it lies in the set.
    FISTA backtracks from the smoothness estimate ``sup φ''·‖X‖₂²/n + α``, so data
    outside the loss's declared bounds are handled too.

    >>> from dpol.losses import LogisticLoss
    >>> obj = MeanObjective(LogisticLoss(), np.eye(2), np.array([1.0, -1.0]))
    >>> w, name, L, n_iter = iterate(obj, "fista", L2Ball(2), True, 1e-10, 1000)
    >>> name, round(float(np.linalg.norm(w)), 12)  # the infimum lies outside the ball
    ('fista', 1.0)
    """
    L = obj.smoothness()
    w0 = np.zeros(obj.X.shape[1])
    if method == "lbfgs":
        w, n_iter = lbfgs(obj, w0, tol, max_iter)
        if float(np.linalg.norm(obj.fg(w)[1])) > tol and n_iter < max_iter:  # stalled
            w, extra, L = fista(obj, lambda v: v, w, L, tol, max_iter - n_iter)
            return w, "lbfgs+fista", L, n_iter + extra
        return w, "lbfgs", L, n_iter
    project = (lambda v: v) if domain is None else domain.project
    name, budget, n_iter = "fista", max_iter, 0
    if warm:  # an interior unconstrained minimiser is the constrained one, and
        # L-BFGS reaches it where FISTA's rate (sqrt of L / mu) is too slow
        free, n_iter = lbfgs(obj, w0, tol, max_iter)
        if domain.contains(free, tol=0.0):  # else FISTA from 0, its whole budget
            w0, name, budget = free, "lbfgs+fista", max(max_iter - n_iter, 1)
    w, extra, L = fista(obj, project, w0, L, tol, budget)
    return w, name, L, n_iter + extra


# ------------------------------------------------------------------------- certificate
def certify(obj: MeanObjective, w: np.ndarray, domain: ConvexSet | None, L: float,
             mu: float) -> tuple[float, float, float]:
    """(objective sum, gradient-mapping norm of the mean, certified suboptimality bound).

    Two bounds on ``F(w) − min_C F`` (mean scale), both from convexity alone:
    the Frank–Wolfe gap ``⟨g, w − v⟩``, ``v`` from the linear oracle, since
    ``F(z) >= F(w) + ⟨g, z − w⟩``; and, when the mean is ``μ``-strongly convex,
    ``−min_{z in C} (⟨g, z − w⟩ + (μ/2)‖z − w‖²)``, attained at ``z = P(w − g/μ)``
    (``‖g‖²/(2μ)`` on R^d). The second is tight at interior minimisers, the first at
    vertices. The smaller is returned, times n.
    """
    f, g = obj.fg(w)
    n = obj.n
    bound = math.inf
    if domain is None:
        gm = float(np.linalg.norm(g))
    else:
        gm = L * float(np.linalg.norm(w - domain.project(w - g / L)))
        bound = max(float(g @ (w - domain.linear_oracle(g))), 0.0)
    if mu > 0.0:
        step = -g / mu if domain is None else domain.project(w - g / mu) - w
        bound = min(bound, max(-(float(g @ step) + 0.5 * mu * float(step @ step)), 0.0))
    elif domain is None and gm == 0.0:
        bound = 0.0
    return n * f, gm, n * bound
