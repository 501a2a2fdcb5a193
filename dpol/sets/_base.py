"""Shared machinery of the constraint sets (layer L3).

A set offers projection, linear minimisation, Garber–Hazan's LLOO (WDP Assumption 1;
docs/derivations/local_linear_oracles.md), diameter, radius, membership and, where 0 is
in the set, the gauge. Public methods validate their arguments and call the ``_``
implementations with clean float64 arrays (entries above ``MAX_ENTRY`` = 1e150 refused).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dpol._validation import as_vector, check_real, fail
from dpol.errors import GaugeUndefinedError

__all__ = ["MAX_ENTRY", "ConvexSet", "GaugeUndefinedError", "simplex_projection"]

#: relative tolerance with which an LLOO accepts its point ``x`` as feasible
MEMBER_TOL = 1e-9
#: largest magnitude of an entry the public methods accept: squares of sums of such
#: entries stay finite, so no oracle overflows (larger input is refused, not mangled)
MAX_ENTRY = 1e150


def point_argument(name: str, value: object, dim: int) -> np.ndarray:
    """``as_vector`` with entries of magnitude at most :data:`MAX_ENTRY`.

    Examples
    --------
    >>> point_argument("x", [1.0, -2.0], 2)
    array([ 1., -2.])
    >>> point_argument("x", [1e200, 0.0], 2)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: x must have entries of magnitude <= 1e+150;
    got array([1.e+200 0.e+000], dtype=float64)
    """
    arr = as_vector(name, value, dim)
    # the ufunc's own reduce: 1.6 us where np.max costs 4.3 us (measured, d = 10; learners
    # project every step)
    if arr.size and float(np.maximum.reduce(np.abs(arr))) > MAX_ENTRY:
        raise fail(name, f"have entries of magnitude <= {MAX_ENTRY:g}", arr)
    return arr


def simplex_projection(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{w >= 0, sum(w) = total}`` (sort-based).

    The classic O(d log d) algorithm (Held et al. 1974; Duchi et al. 2008): the
    projection is ``max(v − θ, 0)`` with the threshold ``θ`` read off the sorted values.

    >>> simplex_projection(np.array([0.5, 0.9, -1.0]))
    array([0.3, 0.7, 0. ])
    """
    # the projection is invariant to v + c*1: shifting the largest entry to 0 keeps total
    # from being lost to rounding when |v| >> total (else no k qualified: an IndexError)
    v = v - np.max(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    ks = np.arange(1, v.shape[0] + 1)
    k = int(np.flatnonzero(u - css / ks > 0)[-1]) + 1  # k = 1 always qualifies: u_1 = 0
    return np.maximum(v - css[k - 1] / k, 0.0)


class ConvexSet(ABC):
    """Base class: a compact convex set in R^d with projection and linear oracles.

    Attributes
    ----------
    dim : int
        Dimension ``d`` of the ambient space (vectors have shape ``(d,)``).
    rho : float or None
        Parameter ``ρ`` of :meth:`local_linear_oracle`: its output ``p`` satisfies
        ``‖x − p‖₂ ≤ ρ·r``. ``None`` when the set has no LLOO.

    Examples
    --------
    The smallest working set, the interval [1, 2] of R^1:

    >>> class Interval(ConvexSet):
    ...     dim, rho, diameter, radius = 1, 2.0, 1.0, 2.0
    ...     def _project(self, x): return np.clip(x, 1.0, 2.0)
    ...     def _linear_oracle(self, c): return np.where(c > 0, 1.0, 2.0)
    ...     def _lloo(self, x, r, c): return self._lloo_by_projection(x, r, c)
    ...     def _contains(self, x, tol): return bool(np.all((x >= 1 - tol) & (x <= 2 + tol)))
    >>> s = Interval()
    >>> s.project([2.5]), s.linear_oracle([-1.0]), s.contains([1.5]), s.contains(0.5)
    (array([2.]), array([2.]), True, False)
    >>> s.local_linear_oracle([1.0], 0.25, [-1.0])  # the best point within 0.25 of x
    array([1.25])
    """

    dim: int
    rho: float | None

    # ------------------------------------------------------------------ public API
    def project(self, x: object) -> np.ndarray:
        """Euclidean projection ``argmin_{y in set} ‖y − x‖₂`` (a fresh array)."""
        return self._project(point_argument("x", x, self.dim))

    def linear_oracle(self, c: object) -> np.ndarray:
        """A minimiser ``argmin_{v in set} ⟨c, v⟩``, an extreme point of the set."""
        return self._linear_oracle(point_argument("c", c, self.dim))

    def local_linear_oracle(self, x: object, r: float, c: object) -> np.ndarray:
        """Local linear optimisation oracle (Garber–Hazan; Assumption 1 of WDP).

        For a feasible ``x``, a radius ``r >= 0`` (``inf`` allowed) and a cost ``c``,
        returns ``p`` in the set with

        (i)  ``⟨c, p⟩ <= min{⟨c, y⟩ : y in set, ‖y − x‖₂ <= r}``, and
        (ii) ``‖x − p‖₂ <= rho·r``.

        ``x`` must lie in the set (to a relative tolerance of 1e-9).
        """
        x, r, c = self._lloo_inputs(x, r, c)
        return self._lloo(x, r, c)

    def contains(self, x: object, tol: float = 1e-9) -> bool:
        """Whether ``x`` lies in the set, each defining constraint violated by at most ``tol``."""
        tol = check_real("tol", tol, low=0.0)
        return bool(self._contains(point_argument("x", x, self.dim), tol))

    def gauge(self, x: object) -> float:
        """Minkowski gauge ``inf{t >= 0 : x in t·set}``; ``gauge(x) <= 1`` iff ``x`` in the set."""
        x = point_argument("x", x, self.dim)
        return float(self._gauge(x))

    @property
    @abstractmethod
    def diameter(self) -> float:
        """``max ‖u − v‖₂`` over ``u, v`` in the set."""

    @property
    @abstractmethod
    def radius(self) -> float:
        """``max ‖v‖₂`` over ``v`` in the set (the domain size loss constants read)."""

    # ----------------------------------------------------------- implementations
    @abstractmethod
    def _project(self, x: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _linear_oracle(self, c: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _contains(self, x: np.ndarray, tol: float) -> bool: ...

    def _gauge(self, x: np.ndarray) -> float:
        # a subclass whose set contains 0 overrides this; one that does not, says so
        raise GaugeUndefinedError(f"{type(self).__name__} implements no Minkowski gauge")

    # ------------------------------------------------------------------- helpers
    def _lloo_inputs(self, x: object, r: object, c: object) -> tuple[np.ndarray, float, np.ndarray]:
        x = point_argument("x", x, self.dim)
        r = check_real("r", r, low=0.0, allow_inf=True)
        c = point_argument("c", c, self.dim)
        if not self._contains(x, MEMBER_TOL * max(1.0, self.radius)):
            raise fail("x", f"lie in the set {self!r} (the LLOO is defined at feasible points)", x)
        return x, r, c

    def _lloo_by_projection(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        """A projection-based LLOO with ``ρ = 2``, valid for any set with an exact projection.

        ``p(t) = P(x − t·c)`` is an exact minimiser over ``set ∩ B(x, ‖p(t) − x‖)``;
        doubling ``t`` from ``r/‖c‖`` until ``‖p(t) − x‖ >= r`` stops below ``2r``
        (Calamai & Moré 1987, Lemma 2.2). Proof: docs/derivations/local_linear_oracles.md.
        """
        v = self._linear_oracle(c)
        if np.linalg.norm(v - x) <= 2.0 * r:
            return v  # a global minimiser within reach
        norm_c = float(np.linalg.norm(c))
        if norm_c == 0.0 or r == 0.0:
            return x.copy()
        diam = self.diameter
        t = r / norm_c
        while True:
            p = self._project(x - t * c)
            if np.linalg.norm(p - x) >= r or diam * diam / (2.0 * t) <= 1e-15 * norm_c * diam:
                return p
            t *= 2.0

    def _repr_params(self) -> str:
        return f"dim={self.dim}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_params()})"

