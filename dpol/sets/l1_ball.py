"""The cross-polytope {w : ‖w‖₁ <= radius} (layer L3)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_int, check_real
from dpol.sets._base import ConvexSet, simplex_projection

__all__ = ["L1Ball"]


class L1Ball(ConvexSet):
    """The ℓ₁ ball ``{w in R^d : ‖w‖₁ <= radius}`` (Lasso constraint, cross-polytope).

    Parameters
    ----------
    dim : int
        Dimension ``d >= 1``.
    radius : float, default 1.0
        Radius ``R > 0``.

    Notes
    -----
    * Projection: sort-based (Duchi et al. 2008). Linear oracle ``−R·sign(c_j)·e_j``,
      ``j = argmax |c_j|``. Diameter ``2R``, radius ``R``, gauge ``‖x‖₁/R``.
    * LLOO (``rho = √d``): the exact minimiser over the ℓ₁ ball intersected with
      ``B₁(x, √d·r) ⊃ B₂(x, r)``, in closed form by a greedy exchange of ℓ₁ mass
      (proof: docs/derivations/local_linear_oracles.md).

    Examples
    --------
    >>> import numpy as np
    >>> ball = L1Ball(3, radius=1.0)
    >>> ball.project([2.0, 0.5, 0.0]), ball.linear_oracle([0.1, -3.0, 1.0])
    (array([1., 0., 0.]), array([0., 1., 0.]))
    >>> x = np.array([0.2, 0.1, -0.3])
    >>> ball.local_linear_oracle(x, 0.1, [0.1, -3.0, 1.0]).round(6)
    array([ 0.2     ,  0.273205, -0.3     ])
    """

    def __init__(self, dim: int, radius: float = 1.0) -> None:
        self.dim = check_int("dim", dim, low=1)
        self._radius = check_real("radius", radius, low=0.0, low_open=True)
        self.rho = math.sqrt(self.dim)

    @property
    def radius(self) -> float:
        """``R`` (attained at the vertices ``±R·e_i``)."""
        return self._radius

    @property
    def diameter(self) -> float:
        """``2R``."""
        return 2.0 * self._radius

    def _project(self, x: np.ndarray) -> np.ndarray:
        if np.abs(x).sum() <= self._radius:
            return x.copy()
        return np.sign(x) * simplex_projection(np.abs(x), self._radius)

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        j = int(np.argmax(np.abs(c)))
        out = np.zeros(self.dim)
        out[j] = self._radius if c[j] < 0 else -self._radius
        return out

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        return float(np.abs(x).sum()) <= self._radius + tol

    def _gauge(self, x: np.ndarray) -> float:
        return float(np.abs(x).sum()) / self._radius

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        budget = math.sqrt(self.dim) * r
        abs_c = np.abs(c)
        if budget == 0.0 or not np.any(abs_c):
            return x.copy()
        j = int(np.argmax(abs_c))
        free = max(self._radius - float(np.abs(x).sum()), 0.0)
        half = max((budget - free) / 2.0, 0.0)  # S*, inf when the budget is
        cx = c * x
        others = np.arange(self.dim) != j
        a_idx = np.flatnonzero((cx > 0) & others)
        c_idx = np.flatnonzero(((cx < 0) | ((c == 0) & (x != 0))) & others)
        order = np.concatenate(
            [
                [j] if cx[j] > 0 else [],
                a_idx[np.argsort(-abs_c[a_idx], kind="stable")],
                c_idx[np.argsort(abs_c[c_idx], kind="stable")],
            ]
        ).astype(np.int64)
        caps = np.abs(x[order])
        moved = np.clip(half - (np.cumsum(caps) - caps), 0.0, caps)
        freed = float(moved.sum())
        grow = min(budget - freed, free + freed)
        p = x.copy()
        p[order] -= np.sign(x[order]) * moved
        p[j] -= np.sign(c[j]) * grow
        return p

    def _repr_params(self) -> str:
        return f"dim={self.dim}, radius={self._radius!r}"
