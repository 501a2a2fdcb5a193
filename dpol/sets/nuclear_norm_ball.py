"""The nuclear-norm (trace-norm) ball of m × n matrices, on flattened vectors (layer L3)."""

from __future__ import annotations

import numpy as np

from dpol._validation import check_int, check_real, fail
from dpol.sets._base import ConvexSet, point_argument, simplex_projection

__all__ = ["NuclearNormBall"]


class NuclearNormBall(ConvexSet):
    """The ball ``{W in R^{m×n} : ‖W‖_* <= radius}``, on vectors of length ``m·n``.

    Matrices are flattened in row-major (C) order: ``W = w.reshape(m, n)``.

    Parameters
    ----------
    shape : tuple of two ints
        ``(m, n)``.
    radius : float, default 1.0
        Radius ``R > 0`` in the nuclear norm (sum of singular values).

    Notes
    -----
    * Projection: one full SVD, the singular values projected onto the ℓ₁ ball.
      Linear oracle ``−R·u₁v₁ᵀ`` for the top singular pair of ``C``. Diameter ``2R``
      (Frobenius), radius ``R``, gauge ``‖W‖_*/R``.
    * LLOO (``rho = 2``) by projection (:meth:`ConvexSet._lloo_by_projection`; proof:
      docs/derivations/local_linear_oracles.md): a full SVD per doubling of the step, so
      **not** projection-free; for correctness checks and small matrices.

    Examples
    --------
    >>> import numpy as np
    >>> ball = NuclearNormBall((2, 2), radius=1.0)
    >>> ball.project([3.0, 0.0, 0.0, 1.0]), ball.linear_oracle([0.0, 0.0, 0.0, -2.0])
    (array([1., 0., 0., 0.]), array([0., 0., 0., 1.]))
    >>> x = np.array([0.25, 0.0, 0.0, -0.25])
    >>> p = ball.local_linear_oracle(x, 0.1, np.random.default_rng(0).normal(size=4))
    >>> bool(np.linalg.norm(p - x) <= 0.2), ball.contains(p), ball.gauge(x)
    (True, True, 0.5)
    """

    def __init__(self, shape: tuple[int, int], radius: float = 1.0) -> None:
        if not isinstance(shape, (tuple, list)) or len(shape) != 2:
            raise fail("shape", "be a pair (m, n) of positive ints", shape)
        m, n = check_int("shape[0]", shape[0], low=1), check_int("shape[1]", shape[1], low=1)
        self.shape = (m, n)
        self.dim = self.shape[0] * self.shape[1]
        self._radius = check_real("radius", radius, low=0.0, low_open=True)
        self.rho = 2.0

    @property
    def radius(self) -> float:
        """``R`` (the Frobenius norm of a rank-one point ``R·u vᵀ``)."""
        return self._radius

    @property
    def diameter(self) -> float:
        """``2R``."""
        return 2.0 * self._radius

    def nuclear_norm(self, x: object) -> float:
        """``‖x.reshape(m, n)‖_*``, the sum of singular values."""
        w = point_argument("x", x, self.dim)
        return float(np.linalg.svd(w.reshape(self.shape), compute_uv=False).sum())

    def _project(self, x: np.ndarray) -> np.ndarray:
        u, s, vt = np.linalg.svd(x.reshape(self.shape), full_matrices=False)
        if s.sum() <= self._radius:
            return x.copy()
        return ((u * simplex_projection(s, self._radius)) @ vt).ravel()

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        u, _, vt = np.linalg.svd(c.reshape(self.shape), full_matrices=False)
        return (-self._radius * np.outer(u[:, 0], vt[0])).ravel()

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        s = np.linalg.svd(x.reshape(self.shape), compute_uv=False)
        return float(s.sum()) <= self._radius + tol

    def _gauge(self, x: np.ndarray) -> float:
        return float(np.linalg.svd(x.reshape(self.shape), compute_uv=False).sum()) / self._radius

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        return self._lloo_by_projection(x, r, c)

    def _repr_params(self) -> str:
        return f"shape={self.shape!r}, radius={self._radius!r}"
