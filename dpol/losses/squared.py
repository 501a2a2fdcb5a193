"""The squared loss ½(y − ⟨w, x⟩)² of linear regression (layer L3)."""

from __future__ import annotations

import numpy as np

from dpol.losses._base import LinearLoss, domain_radius

__all__ = ["SquaredLoss"]


class SquaredLoss(LinearLoss):
    """Squared loss ``f(w; x, y) = ½(y − ⟨w, x⟩)²`` with ``∇_w f = (⟨w, x⟩ − y)·x``.

    Parameters
    ----------
    x_bound : float, default 1.0
        Declared bound on ``‖x‖₂`` (features); the constants below hold under it.
    y_bound : float, default 1.0
        Declared bound on ``|y|`` (real-valued responses), > 0.

    Notes
    -----
    Constants, for ``‖x‖ ≤ X = x_bound``, ``|y| ≤ Y = y_bound`` and ``‖w‖ ≤ R``:

    * ``lipschitz(domain) = X·(Y + R·X)``: ``‖∇f‖ = |⟨w, x⟩ − y|·‖x‖ ≤ (R·X + Y)·X``
      by Cauchy–Schwarz; attained at ``w = R·u``, ``x = X·u``, ``y = −Y`` for a unit
      ``u``. Unbounded (``inf``) when the domain is.
    * ``smoothness = X²``: the Hessian is ``x xᵀ``, whose largest eigenvalue is
      ``‖x‖² ≤ X²``; attained by any ``x`` with ``‖x‖ = X``.
    * ``strong_convexity = 0``: ``x xᵀ`` has rank one, so no positive modulus holds for
      every example (d ≥ 2); use :class:`~dpol.losses.Regularized` to get one.

    Examples
    --------
    >>> import numpy as np
    >>> loss = SquaredLoss()
    >>> w, x = np.array([1.0, 0.0]), np.array([0.5, 0.5])
    >>> loss.value(w, x, 1.0), loss.grad(w, x, 1.0)
    (0.125, array([-0.25, -0.25]))
    >>> X = np.random.default_rng(0).normal(size=(3, 2))
    >>> loss.grad(w, X, np.zeros(3)).shape, loss.lipschitz(2.0), loss.smoothness
    ((3, 2), 3.0, 1.0)
    """

    def _phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (y - z) ** 2

    def _dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return z - y

    def lipschitz(self, domain: object = None) -> float:
        """``x_bound·(y_bound + R·x_bound)`` with ``R`` the radius of ``domain``."""
        radius = domain_radius(domain)
        return self.x_bound * (self.y_bound + radius * self.x_bound)

    @property
    def smoothness(self) -> float:
        """``x_bound²``."""
        return self.x_bound**2
