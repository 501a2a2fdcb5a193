"""Shared machinery of the losses of linear models (layer L3).

A loss here is a function ``f(w; x, y)`` of the weights ``w`` of a linear model, for one
example ``(x, y)`` or a batch ``(X, y)``. Besides values and gradients (with respect to
``w``) every loss declares the constants that privacy proofs and step sizes read:
``lipschitz(domain)``, ``smoothness`` and ``strong_convexity``. They are stated for
feature vectors with ``‖x‖₂ ≤ x_bound`` and labels with ``|y| ≤ y_bound``; keeping the
data inside those bounds (by clipping, and counting it) is the learner's job.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from numbers import Real

import numpy as np

from dpol._validation import as_matrix, as_vector, check_bound, check_choice, check_real, fail
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS

__all__ = ["LinearLoss", "Loss", "domain_radius"]


def domain_radius(domain: object) -> float:
    """The largest ``‖w‖₂`` over ``domain``.

    ``domain`` is a constraint set exposing ``radius`` (every :mod:`dpol.sets` set
    does), a radius given as a non-negative real, or ``None`` for all of R^d (radius
    ``inf``).

    >>> domain_radius(2.5), domain_radius(None)
    (2.5, inf)
    """
    if domain is None:
        return math.inf
    if isinstance(domain, Real) and not isinstance(domain, bool):
        return check_real("domain", domain, low=0.0, allow_inf=True)
    radius = getattr(domain, "radius", None)
    if radius is None:
        raise fail("domain", "be None, a radius >= 0 or a set with a `radius` attribute", domain)
    return check_real("domain.radius", radius, low=0.0, allow_inf=True)


def _ndim(name: str, value: object) -> int:
    try:
        return int(np.ndim(value))
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise fail(name, "be a numeric array", value) from exc


class Loss(ABC):
    """Base class: a convex loss of a linear model, with its declared constants.

    ``value(w, x, y)`` and ``grad(w, x, y)`` accept one example (``x`` of shape
    ``(d,)``, ``y`` a real) and return a float and an array ``(d,)``; or a batch
    (``x`` of shape ``(n, d)``, ``y`` of shape ``(n,)``) and return arrays ``(n,)`` and
    ``(n, d)``, computed in one vectorized pass. Wrong shapes, NaN or inf raise
    :class:`~dpol.errors.InvalidInputError` naming the argument.

    Examples
    --------
    Any subclass, here :class:`~dpol.losses.SquaredLoss`, through the base interface:

    >>> from dpol.losses import SquaredLoss
    >>> loss, w = SquaredLoss(), np.array([1.0, 0.0])
    >>> loss.value(w, [0.5, 0.5], 1.0), loss.grad(w, [0.5, 0.5], 1.0).tolist()
    (0.125, [-0.25, -0.25])
    >>> loss.value(w, [0.5, 0.5, 0.5], 1.0)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: x must have shape (2,); got array([0.5 0.5 0.5], dtype=float64)
    """

    x_bound: float
    y_bound: float

    def value(self, w: object, x: object, y: object) -> float | np.ndarray:
        """Loss value(s): a float for one example, an array ``(n,)`` for a batch."""
        w, X, yv, single = self._inputs(w, x, y)
        out = self._value(w, X, yv)
        return float(out[0]) if single else out

    def grad(self, w: object, x: object, y: object) -> np.ndarray:
        """Gradient(s) with respect to ``w``: ``(d,)`` for one example, ``(n, d)`` for a batch."""
        w, X, yv, single = self._inputs(w, x, y)
        out = self._grad(w, X, yv)
        return out[0] if single else out

    @abstractmethod
    def _value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Values for validated arrays w (d,), X (n, d), y (n,)."""

    @abstractmethod
    def _grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Gradients (n, d) for validated arrays w (d,), X (n, d), y (n,)."""

    @abstractmethod
    def lipschitz(self, domain: object = None) -> float:
        """A bound on ``‖∇_w f(w; x, y)‖₂`` over ``w`` in ``domain`` and bounded data."""

    @property
    @abstractmethod
    def smoothness(self) -> float:
        """A Lipschitz constant of ``w ↦ ∇_w f(w; x, y)`` for bounded data."""

    @property
    def strong_convexity(self) -> float:
        """The modulus of strong convexity in ``w`` that holds for every example."""
        return 0.0

    @staticmethod
    def _inputs(w: object, x: object, y: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        if _ndim("w", w) != 1 or len(w) == 0:  # type: ignore[arg-type]
            raise fail("w", "be a non-empty 1-d array", w)
        w = as_vector("w", w, len(w))  # type: ignore[arg-type]
        d = w.shape[0]
        nd = _ndim("x", x)
        if nd == 1:
            return w, as_vector("x", x, d)[None, :], as_vector("y", y, 1), True
        if nd == 2:
            X = as_matrix("x", x, d)
            return w, X, as_vector("y", y, X.shape[0]), False
        raise fail("x", f"be a vector of shape ({d},) or a matrix of shape (n, {d})", x)

    def _repr_params(self) -> str:
        return f"x_bound={self.x_bound!r}, y_bound={self.y_bound!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_params()})"


class LinearLoss(Loss):
    """A loss ``f(w; x, y) = φ(⟨w, x⟩, y)``, so that ``∇_w f = φ'(⟨w, x⟩, y)·x``.

    Subclasses define ``_phi(z, y)`` and ``_dphi(z, y)`` (derivative in ``z``), both
    vectorized over arrays ``z, y`` of shape ``(n,)``, and the constants ``lipschitz``
    and ``smoothness``.

    Examples
    --------
    A toy linear loss ``f(w; x, y) = −y·⟨w, x⟩``, whose gradient ``−y·x`` has norm at
    most ``x_bound·y_bound``:

    >>> class Linear(LinearLoss):
    ...     def _phi(self, z, y): return -y * z
    ...     def _dphi(self, z, y): return -y
    ...     def lipschitz(self, domain=None): return self.x_bound * self.y_bound
    ...     @property
    ...     def smoothness(self): return 0.0
    >>> loss = Linear()
    >>> loss.value([1.0, 2.0], [0.5, 0.5], 1.0), loss.grad([1.0, 2.0], [0.5, 0.5], 1.0)
    (-1.5, array([-0.5, -0.5]))
    """

    def __init__(self, *, x_bound: float = 1.0, y_bound: float = 1.0) -> None:
        self.x_bound = check_bound("x_bound", x_bound)
        # > 0, as the learners require: a bound of 0 would zero the constants while labels
        # pass through, and "0 means unset" is the reading that once cost the noise
        self.y_bound = check_bound("y_bound", y_bound)

    @abstractmethod
    def _phi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _dphi(self, z: np.ndarray, y: np.ndarray) -> np.ndarray: ...

    def gradient_sensitivity(self, domain: object = None,
                             neighbouring: str = "replace_one") -> float:
        """Largest ``‖∇f(w; x, y) − ∇f(w; x', y')‖₂`` at one ``w`` in ``domain``.

        The l2 sensitivity of one data gradient evaluated at a public point (an online
        learner's released iterate), over bounded data. Replace-one: here the triangle
        inequality, ``2·lipschitz(domain)``; a loss may prove a smaller one (the logistic
        loss does). Add/remove (the example replaced by nothing): ``lipschitz(domain)``.

        >>> from dpol.losses import SquaredLoss
        >>> SquaredLoss().gradient_sensitivity(1.0), SquaredLoss().gradient_sensitivity(
        ...     1.0, "add_remove")
        (4.0, 2.0)
        """
        check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        lipschitz = self.lipschitz(domain)
        return 2.0 * lipschitz if neighbouring == "replace_one" else lipschitz

    def _value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self._phi(X @ w, y)

    def _grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self._dphi(X @ w, y)[:, None] * X
