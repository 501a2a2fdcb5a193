"""Ridge regularisation of a loss: f(w) + (α/2)‖w‖² (layer L3)."""

from __future__ import annotations

import numpy as np

from dpol._validation import check_real, fail
from dpol.losses._base import Loss, domain_radius

__all__ = ["Regularized"]


class Regularized(Loss):
    """The loss ``f(w; x, y) + (alpha/2)·‖w‖₂²`` for a base loss ``f``.

    Parameters
    ----------
    loss : Loss
        The base loss; its data bounds ``x_bound`` and ``y_bound`` are used as they are.
    alpha : float
        Regularisation strength, ``>= 0``.

    Notes
    -----
    The gradient gains ``alpha·w`` and the Hessian ``alpha·I``, so over a domain of
    radius ``R``: ``lipschitz = L_f + alpha·R`` (attained for the squared loss),
    ``smoothness = β_f + alpha``, ``strong_convexity = μ_f + alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.losses import SquaredLoss
    >>> loss = Regularized(SquaredLoss(), alpha=0.5)
    >>> w, x = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> loss.value(w, x, 0.0), loss.grad(w, x, 0.0)
    (0.25, array([0.5, 0. ]))
    >>> loss.strong_convexity, loss.smoothness, loss.lipschitz(2.0)
    (0.5, 1.5, 4.0)
    """

    def __init__(self, loss: Loss, alpha: float) -> None:
        if not isinstance(loss, Loss):
            raise fail("loss", "be a dpol.losses.Loss", loss)
        self.loss = loss
        self.alpha = check_real("alpha", alpha, low=0.0)

    @property
    def x_bound(self) -> float:  # type: ignore[override]
        """The base loss's declared bound on ``‖x‖₂``."""
        return self.loss.x_bound

    @property
    def y_bound(self) -> float:  # type: ignore[override]
        """The base loss's declared bound on ``|y|``."""
        return self.loss.y_bound

    def _value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.loss._value(w, X, y) + 0.5 * self.alpha * float(w @ w)

    def _grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.loss._grad(w, X, y) + self.alpha * w

    def lipschitz(self, domain: object = None) -> float:
        """``loss.lipschitz(domain) + alpha·R`` with ``R`` the radius of ``domain``."""
        radius = domain_radius(domain)
        extra = self.alpha * radius if self.alpha > 0.0 else 0.0  # 0·inf would be NaN
        return self.loss.lipschitz(domain) + extra

    @property
    def smoothness(self) -> float:
        """``loss.smoothness + alpha``."""
        return self.loss.smoothness + self.alpha

    @property
    def strong_convexity(self) -> float:
        """``loss.strong_convexity + alpha``."""
        return self.loss.strong_convexity + self.alpha

    def __repr__(self) -> str:
        return f"Regularized({self.loss!r}, alpha={self.alpha!r})"
