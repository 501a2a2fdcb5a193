"""The axis-aligned box {w : low <= w <= high} (layer L3)."""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from dpol._validation import as_vector, check_int, fail
from dpol.sets._base import ConvexSet, GaugeUndefinedError

__all__ = ["Box"]


class Box(ConvexSet):
    """The box ``{w in R^d : low_i <= w_i <= high_i}``.

    Parameters
    ----------
    low, high : float or array of shape (d,)
        Finite bounds with ``low <= high`` elementwise (equal bounds pin a coordinate).
    dim : int, optional
        Dimension; required when both bounds are scalars, otherwise read from them.

    Notes
    -----
    * Projection ``clip(x, low, high)``; linear oracle: the cheaper bound per coordinate.
      Diameter ``‖high − low‖₂``; radius ``‖max(|low|, |high|)‖₂``.
    * Gauge for boxes containing 0 (else :class:`~dpol.sets.GaugeUndefinedError`).
    * LLOO (``rho = √d``): the exact minimiser over ``box ∩ B₁(x, √d·r)``, a fractional
      knapsack (proof: docs/derivations/local_linear_oracles.md).

    Examples
    --------
    >>> import numpy as np
    >>> box = Box([-1.0, 0.0], [1.0, 2.0])
    >>> box.project([3.0, -1.0]), box.linear_oracle([1.0, -1.0])
    (array([1., 0.]), array([-1.,  2.]))
    >>> box.local_linear_oracle([0.0, 1.0], 0.5, [1.0, -2.0]).round(6)
    array([0.      , 1.707107])
    """

    def __init__(self, low: object, high: object, dim: int | None = None) -> None:
        if dim is None:
            sizes = [np.size(b) for b in (low, high) if not isinstance(b, Real)]
            if not sizes:
                raise fail("dim", "be given when low and high are both scalars", dim)
            dim = sizes[0]
        self.dim = check_int("dim", dim, low=1)
        self.low = self._bound("low", low)
        self.high = self._bound("high", high)
        if np.any(self.low > self.high):
            raise fail("high", "be >= low elementwise", self.high)
        self.rho = math.sqrt(self.dim)

    def _bound(self, name: str, value: object) -> np.ndarray:
        if isinstance(value, Real) and not isinstance(value, bool):
            value = np.full(self.dim, value, dtype=float)
        return as_vector(name, value, self.dim)

    @property
    def radius(self) -> float:
        """``‖max(|low|, |high|)‖₂`` (attained at a vertex)."""
        return float(np.linalg.norm(np.maximum(np.abs(self.low), np.abs(self.high))))

    @property
    def diameter(self) -> float:
        """``‖high − low‖₂``."""
        return float(np.linalg.norm(self.high - self.low))

    def _project(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, self.low, self.high)

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        return np.where(c < 0, self.high, self.low)

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        return bool(np.all(x >= self.low - tol) and np.all(x <= self.high + tol))

    def _gauge(self, x: np.ndarray) -> float:
        if np.any(self.low > 0) or np.any(self.high < 0):
            raise GaugeUndefinedError(f"{self!r} does not contain 0, so its gauge is undefined")
        bound = np.where(x > 0, self.high, self.low)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(x == 0, 0.0, np.where(bound == 0, np.inf, x / bound))
        return float(ratios.max())

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        budget = math.sqrt(self.dim) * r
        target = np.where(c < 0, self.high, self.low)
        order = np.argsort(-np.abs(c), kind="stable")
        caps = np.abs(target - x)[order]
        moved = np.clip(budget - (np.cumsum(caps) - caps), 0.0, caps)
        p = x.copy()
        p[order] += np.sign(target - x)[order] * moved
        p[order] = np.where(moved == caps, target[order], p[order])  # land exactly on bounds
        return p

    def _repr_params(self) -> str:
        return f"low={self.low!r}, high={self.high!r}"
