"""The logistic loss ln(1 + exp(−y⟨w, x⟩)) of logistic regression (layer L3)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import expit

from dpol.losses._base import LinearLoss, domain_radius

__all__ = ["LogisticLoss"]


class LogisticLoss(LinearLoss):
    """Logistic loss ``f(w; x, y) = ln(1 + exp(−m))`` with margin ``m = y·⟨w, x⟩``.

    ``∇_w f = −y·σ(−m)·x``, ``σ`` the logistic function; computed without overflow.

    Parameters
    ----------
    x_bound : float, default 1.0
        Declared bound on ``‖x‖₂``.
    y_bound : float, default 1.0
        Declared bound on ``|y|``, > 0. Labels ±1 (map 0/1 labels first); any real
        ``y`` keeps it convex in ``w``.

    Notes
    -----
    With ``‖x‖ ≤ X``, ``|y| ≤ Y`` and ``‖w‖ ≤ R``, so that ``|m| ≤ Y·R·X``:

    * ``lipschitz(domain) = X·Y·σ(Y·R·X)`` (largest at ``m = −Y·R·X``; attained at
      ``w = −R·u``, ``x = X·u``), below the usual ``X·Y``.
    * ``smoothness = X²·Y²/4`` (``σ(m)σ(−m) ≤ 1/4``); ``strong_convexity = 0``.
    * ``gradient_sensitivity(domain)`` (replace-one) ``= X·Y·D(Y·R·X)``, below
      ``2·lipschitz``: at one ``w`` two gradients cannot both be longest in opposite
      directions (:func:`logistic_gradient_diameter`; 1.100 against 1.462 at
      ``R = X = Y = 1``).

    Examples
    --------
    >>> import numpy as np
    >>> loss = LogisticLoss()
    >>> w = np.zeros(2)
    >>> round(loss.value(w, np.array([1.0, 2.0]), 1), 6), loss.grad(w, np.array([1.0, 2.0]), 1)
    (0.693147, array([-0.5, -1. ]))
    """

    def _phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -y * z)

    def _dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -y * expit(-y * z)

    def lipschitz(self, domain: object = None) -> float:
        """``x_bound·y_bound·σ(y_bound·R·x_bound)`` with ``R`` the radius of ``domain``."""
        radius = domain_radius(domain)
        return self.x_bound * self.y_bound * float(expit(self.y_bound * radius * self.x_bound))

    def gradient_sensitivity(self, domain: object = None,
                             neighbouring: str = "replace_one") -> float:
        """``X·Y·D(Y·R·X)`` under replace-one (:func:`logistic_gradient_diameter`).

        >>> round(LogisticLoss().gradient_sensitivity(1.0), 3)
        1.1
        """
        if neighbouring != "replace_one":
            return super().gradient_sensitivity(domain, neighbouring)
        scale = self.x_bound * self.y_bound
        return scale * logistic_gradient_diameter(scale * domain_radius(domain))

    @property
    def smoothness(self) -> float:
        """``x_bound²·y_bound²/4``."""
        return (self.x_bound * self.y_bound) ** 2 / 4.0


def logistic_gradient_diameter(rho: float, tol: float = 1e-3) -> float:
    """A certified upper bound (within ``tol``) on the diameter of the unit-data gradient set.

    ``D(rho) = sup ‖h(v) − h(v')‖`` over ``‖v‖, ‖v'‖ ≤ 1`` and ``‖w‖ ≤ rho``, with
    ``h(v) = σ(−⟨w, v⟩)·v``: the logistic gradient at ``w`` is ``−h(y·x)``, so with
    ``‖x‖ ≤ X``, ``|y| ≤ Y``, ``‖w‖ ≤ R`` the replace-one gradient sensitivity is
    ``X·Y·D(Y·R·X)`` (scale ``v`` by ``X·Y``).

    The supremum lies on a unit circle, in two angles and r; branch and bound with a
    Lipschitz bound on each box returns a value at least the supremum. ``D(0) = 1``,
    ``D → 2`` as ``rho → ∞`` (the usual ``2·lipschitz``). Derivation:
    docs/derivations/ftal.md, The logistic gradient's diameter.

    Examples
    --------
    >>> logistic_gradient_diameter(0.0), round(logistic_gradient_diameter(1.0), 3)
    (1.0, 1.1)
    """
    if not rho < math.inf:
        return 2.0
    if rho == 0.0:  # h(v) = v/2 at w = 0: the ball of radius 1/2
        return 1.0
    return _diameter(float(rho), float(tol))


@lru_cache(maxsize=64)
def _diameter(rho: float, tol: float) -> float:
    k = math.sqrt(float(expit(rho)) ** 2 + rho * rho / 16.0)
    n = 64  # initial boxes per angle; 8 for r
    u, q = math.pi / (2 * n), rho / 16.0
    grid = (np.arange(n) + 0.5) * (2 * u)
    th, tp, r = (a.ravel() for a in np.meshgrid(grid, grid, (np.arange(8) + 0.5) * 2 * q,
                                                  indexing="ij"))
    signs = np.array([-1.0, 1.0])
    best = 0.0
    for _ in range(60):  # each round halves every half-width
        val = _phi(th, tp, r)
        best = max(best, float(val.max()))
        upper = val + 2.0 * k * u + q / 2.0  # no point of a box exceeds this
        keep = upper > best + tol
        if not keep.any():
            return min(2.0, best + tol)
        if keep.sum() > 100_000:  # a flat ridge (small rho): stop, still certified
            return min(2.0, float(upper[keep].max()))
        u, q = u / 2.0, q / 2.0
        dt, dp, dr = (a.ravel() for a in np.meshgrid(signs * u, signs * u, signs * q,
                                                     indexing="ij"))
        th, tp, r = ((base[keep][:, None] + step[None, :]).ravel()
                     for base, step in ((th, dt), (tp, dp), (r, dr)))
    return min(2.0, float(upper.max()))  # pragma: no cover - 60 halvings always settle


def _phi(th: np.ndarray, tp: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Φ(θ, θ', r) of :func:`logistic_gradient_diameter`, vectorized."""
    c, cp = np.cos(th), np.cos(tp)
    s, sp = expit(-r * c), expit(-r * cp)
    return np.hypot(s * c - sp * cp, s * np.sin(th) + sp * np.sin(tp))
