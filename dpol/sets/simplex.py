"""The probability simplex {w >= 0, Σw = 1} (layer L3)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_int
from dpol.errors import GaugeUndefinedError
from dpol.sets._base import ConvexSet, simplex_projection

__all__ = ["Simplex"]


class Simplex(ConvexSet):
    """The probability simplex ``S_d = {w in R^d : w >= 0, Σ w_i = 1}``.

    Parameters
    ----------
    dim : int
        Dimension ``d >= 1``.

    Notes
    -----
    * Projection: sort-based (Held et al. 1974; Duchi et al. 2008). Linear oracle: the
      vertex ``e_i``, ``i = argmin c_i``. Diameter ``√2`` (0 for d = 1), radius 1. No
      gauge (0 is outside).
    * LLOO of Garber–Hazan (``rho = √d``): move ``min(√d·r/2, 1)`` of mass from the
      costliest coordinates onto ``argmin c_i`` (proof:
      docs/derivations/local_linear_oracles.md).

    Examples
    --------
    >>> import numpy as np
    >>> s = Simplex(3)
    >>> s.project([0.5, 0.9, -1.0]), s.linear_oracle([0.3, -1.0, 2.0])
    (array([0.3, 0.7, 0. ]), array([0., 1., 0.]))
    >>> x = np.random.default_rng(0).dirichlet(np.ones(3))
    >>> p = s.local_linear_oracle(x, 0.05, [0.3, -1.0, 2.0])
    >>> bool(np.linalg.norm(p - x) <= np.sqrt(3) * 0.05), s.contains(p)
    (True, True)
    """

    def __init__(self, dim: int) -> None:
        self.dim = check_int("dim", dim, low=1)
        self.rho = math.sqrt(self.dim)

    @property
    def radius(self) -> float:
        """1."""
        return 1.0

    @property
    def diameter(self) -> float:
        """``√2`` (0 when d = 1)."""
        return math.sqrt(2.0) if self.dim > 1 else 0.0

    def _project(self, x: np.ndarray) -> np.ndarray:
        return simplex_projection(x, 1.0)

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        out = np.zeros(self.dim)
        out[int(np.argmin(c))] = 1.0
        return out

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        return bool(np.all(x >= -tol)) and abs(float(x.sum()) - 1.0) <= tol

    def _gauge(self, x: np.ndarray) -> float:
        raise GaugeUndefinedError(f"{self!r} does not contain 0, so its gauge is undefined")

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        delta = min(math.sqrt(self.dim) * r / 2.0, 1.0)
        if delta >= 1.0:
            return self._linear_oracle(c)
        order = np.argsort(-c, kind="stable")  # most expensive coordinates first
        mass = np.maximum(x[order], 0.0)
        take = np.clip(delta - (np.cumsum(mass) - mass), 0.0, mass)
        p = x.copy()
        p[order] -= take
        p[int(np.argmin(c))] += float(take.sum())
        return p
