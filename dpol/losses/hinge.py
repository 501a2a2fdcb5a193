"""The smoothed hinge loss of linear support vector machines (layer L3)."""

from __future__ import annotations

import numpy as np

from dpol._validation import check_real
from dpol.losses._base import LinearLoss, domain_radius

__all__ = ["HingeLoss"]


class HingeLoss(LinearLoss):
    """Quadratically smoothed hinge loss ``f(w; x, y) = φ_h(y·⟨w, x⟩)``.

    ``φ_h`` is the smoothed hinge of Shalev-Shwartz & Zhang (SDCA, 2013), the Moreau
    envelope of ``max(0, 1 − m)``: 0 for ``m ≥ 1``, ``(1 − m)²/(2h)`` for ``1 − h < m <
    1``, ``1 − m − h/2`` below; within ``h/2`` of the hinge.

    Parameters
    ----------
    h : float, default 1.0
        Smoothing width, > 0.
    x_bound : float, default 1.0
        Declared bound on ``‖x‖₂``.
    y_bound : float, default 1.0
        Declared bound on ``|y|``, > 0 (labels ±1; real ``y`` keeps it convex in ``w``).

    Notes
    -----
    With ``‖x‖ ≤ X``, ``|y| ≤ Y``, ``‖w‖ ≤ R``: ``lipschitz = X·Y·min(1, (1 + Y·R·X)/h)``
    (``|φ_h'|`` is largest at ``m = −Y·R·X``; attained at ``w = −R·u``, ``x = X·u``),
    ``smoothness = X²·Y²/h`` (``φ_h'' ≤ 1/h``), ``strong_convexity = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> loss = HingeLoss(h=0.5)
    >>> x = np.array([1.0, 0.0])
    >>> loss.value([1.5, 0.0], x, 1), loss.value([1.5, 0.0], x, -1), loss.grad([1.5, 0.0], x, -1)
    (0.0, 2.25, array([1., 0.]))
    >>> loss.smoothness, loss.lipschitz(1.0)
    (2.0, 1.0)
    """

    def __init__(self, h: float = 1.0, *, x_bound: float = 1.0, y_bound: float = 1.0) -> None:
        super().__init__(x_bound=x_bound, y_bound=y_bound)
        self.h = check_real("h", h, low=0.0, low_open=True)

    def _phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        gap = 1.0 - y * z  # 1 − m
        h = self.h
        return np.where(gap <= 0.0, 0.0, np.where(gap >= h, gap - h / 2.0, gap**2 / (2.0 * h)))

    def _dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray:
        return -np.clip((1.0 - y * z) / self.h, 0.0, 1.0) * y

    def lipschitz(self, domain: object = None) -> float:
        """``x_bound·y_bound·min(1, (1 + y_bound·R·x_bound)/h)``, ``R`` the radius of ``domain``."""
        radius = domain_radius(domain)
        slope = min(1.0, (1.0 + self.y_bound * radius * self.x_bound) / self.h)
        return self.x_bound * self.y_bound * slope

    @property
    def smoothness(self) -> float:
        """``x_bound²·y_bound²/h``."""
        return (self.x_bound * self.y_bound) ** 2 / self.h

    def _repr_params(self) -> str:
        return f"h={self.h!r}, " + super()._repr_params()
