"""The Euclidean ball {w : ‖w‖₂ <= radius} (layer L3)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_int, check_real
from dpol.sets._base import ConvexSet

__all__ = ["L2Ball"]


class L2Ball(ConvexSet):
    """The ball ``{w in R^d : ‖w‖₂ <= radius}`` centred at 0.

    Parameters
    ----------
    dim : int
        Dimension ``d >= 1``.
    radius : float, default 1.0
        Radius ``R > 0``.

    Notes
    -----
    * Projection ``x·min(1, R/‖x‖)``; linear oracle ``−R·c/‖c‖`` (``−R·e₁`` for c = 0).
      Diameter ``2R``, radius ``R``, gauge ``‖x‖₂/R``.
    * The LLOO is **exact** (``rho = 1``): a minimiser of ``⟨c, y⟩`` over
      ``{‖y‖ <= R} ∩ {‖y − x‖ <= r}``, on one ball's boundary or on the circle where
      both spheres meet (proof: docs/derivations/local_linear_oracles.md).

    Examples
    --------
    >>> import numpy as np
    >>> ball = L2Ball(2, radius=2.0)
    >>> ball.project([3.0, 4.0]), ball.linear_oracle([0.0, 1.0])
    (array([1.2, 1.6]), array([ 0., -2.]))
    >>> x = np.random.default_rng(0).normal(size=2) * 0.5
    >>> p = ball.local_linear_oracle(x, 0.1, [1.0, 1.0])
    >>> bool(np.linalg.norm(p - x) <= 0.1 + 1e-12), ball.contains(p), ball.gauge([1.0, 0.0])
    (True, True, 0.5)
    """

    def __init__(self, dim: int, radius: float = 1.0) -> None:
        self.dim = check_int("dim", dim, low=1)
        self._radius = check_real("radius", radius, low=0.0, low_open=True)
        self.rho = 1.0

    @property
    def radius(self) -> float:
        """``R``."""
        return self._radius

    @property
    def diameter(self) -> float:
        """``2R``."""
        return 2.0 * self._radius

    def _project(self, x: np.ndarray) -> np.ndarray:
        # np.linalg.norm's own sqrt(x . x), same float, without its 3 us of dispatch (a
        # learner projects every step)
        norm = math.sqrt(x.dot(x))
        return x * (self._radius / norm) if norm > self._radius else x.copy()

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(c))
        if norm == 0.0:
            out = np.zeros(self.dim)
            out[0] = -self._radius
            return out
        return c * (-self._radius / norm) + 0.0  # + 0.0 turns -0.0 into 0.0

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        return float(np.linalg.norm(x)) <= self._radius + tol

    def _gauge(self, x: np.ndarray) -> float:
        return float(np.linalg.norm(x)) / self._radius

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        R = self._radius
        norm_c = float(np.linalg.norm(c))
        if norm_c == 0.0 or r == 0.0:
            return x.copy()
        u = c * (-1.0 / norm_c)
        if np.linalg.norm(R * u - x) <= r:  # (b) the global minimiser is within reach
            return R * u
        y = x + r * u
        if np.linalg.norm(y) <= R:  # (a) the minimiser over B(x, r) is feasible
            return y
        n = float(np.linalg.norm(x))  # (c) both spheres active; n > 0 here
        xh = x / n
        g = max(R - n, 0.0)
        t = (R * R - r * r + n * n) / (2.0 * n)
        z_norm = math.sqrt(max((r - g) * (r + g) / (2.0 * n) * (R + t), 0.0))
        c_perp = c - float(c @ xh) * xh
        norm_perp = float(np.linalg.norm(c_perp))
        y = t * xh
        if norm_perp > 0.0:
            y = y - (z_norm / norm_perp) * c_perp
        norm_y = float(np.linalg.norm(y))
        return y * (R / norm_y) if norm_y > R else y  # rounding only

    def _repr_params(self) -> str:
        return f"dim={self.dim}, radius={self._radius!r}"
