"""Feature scaling inside the guarantee: private per-feature quantiles, then the bounds.

A fitted scaler is not private. :func:`private_scaling` releases each feature's (and a
regression label's) 10% and 90% quantiles with OpenDP's private quantile, maps [q10, q90]
onto [-1, 1], then releases the scaled norms' ``quantile`` as the bounds; its
:meth:`PrivateScaling.privacy_events` compose with the learner's.

Needs the optional extra ``opendp``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpol._validation import as_matrix, check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.clipping import clip_norms
from dpol.datasets.private_bounds import GRID, above_grid, pure_events, release_quantile

__all__ = ["LOW", "SIGNED_GRID", "PrivateScaling", "private_scaling"]

#: the levels (LOW, 1 - LOW) whose midpoint centres and whose half-spread scales a feature
LOW = 0.1
#: scaled values are kept within +-_LARGEST: a huge finite row stays finite (the learner
#: clips it to the bound) instead of turning into inf, which the learner would refuse
_LARGEST = 1e300
#: public candidates for signed values: -GRID, 0 and GRID (363 values)
SIGNED_GRID = tuple(sorted({0.0, *GRID, *(-g for g in GRID)}))


@dataclass(frozen=True)
class PrivateScaling:
    """Released scaling: ``z = (x - center) / scale`` then ``||z|| <= x_bound``; for
    regression ``y' = (y - y_center) / y_scale`` then ``|y'| <= y_bound``.

    Attributes
    ----------
    center, scale : ndarray of shape (d,)
    x_bound : float
    y_center, y_scale, y_bound : float or None
        None for classification (labels are not scaled).
    epsilons : tuple of float
        Each release's pure epsilon (OpenDP's privacy map), in release order.
    levels : tuple of float
        Each release's quantile level (``min(a, 1 - a)`` sets how many rows it needs).
    n, n_candidates : int
    """

    center: np.ndarray
    scale: np.ndarray
    x_bound: float
    y_center: float | None
    y_scale: float | None
    y_bound: float | None
    epsilons: tuple[float, ...]
    levels: tuple[float, ...]
    n: int
    n_candidates: int

    @property
    def epsilon(self) -> float:
        """The total epsilon of the releases (basic composition)."""
        return float(sum(self.epsilons))

    def transform(self, X: object) -> np.ndarray:
        """``(X - center) / scale`` (a fresh array; rows are not clipped here)."""
        return _scaled(X, self.center, self.scale)

    def transform_y(self, y: object) -> np.ndarray:
        """``(y - y_center) / y_scale``."""
        return _scaled(y, self.y_center, self.y_scale)

    def inverse_y(self, y: object) -> np.ndarray:
        """Back to the label's units: ``y_center + y_scale * y``."""
        return self.y_center + self.y_scale * np.asarray(y, dtype=np.float64)

    def min_rows(self, beta: float = 0.05) -> int:
        """Rows below which some release may land outside all the data with probability
        ``beta`` (the largest :meth:`PrivateBounds.min_rows
        <dpol.datasets.private_bounds.PrivateBounds.min_rows>` over the releases)."""
        return max(math.ceil(2.0 * math.log(self.n_candidates / beta) / (e * min(a, 1 - a)))
                   for e, a in zip(self.epsilons, self.levels, strict=True))

    def note(self) -> str | None:
        """A warning when ``n < min_rows()``: the scaling is then mostly noise."""
        if self.n >= self.min_rows():
            return None
        return (f"the private scaling is unreliable at this size: {self.n} rows and "
                f"epsilon {self.epsilon:g} over {len(self.epsilons)} releases need at least "
                f"{self.min_rows()} rows; declare the scaling and bounds, or give them a "
                "larger share of the budget")

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """One pure-DP event per release (replace-one, unit: one stream element)."""
        return pure_events(self.epsilons, "private scaling")


def _spread(lo: float, hi: float) -> float:
    # equal quantiles (a feature constant on 80% of its rows): leave it unscaled, a public 1
    return (hi - lo) / 2.0 if hi > lo else 1.0


def _scaled(values: object, center: object, scale: object) -> np.ndarray:
    """``(values - center) / scale``, kept within +-_LARGEST: a huge finite value stays
    finite (the learner clips it), where inf would be refused (a fresh array)."""
    with np.errstate(over="ignore"):
        out = (np.asarray(values, dtype=np.float64) - center) / scale
    return np.clip(out, -_LARGEST, _LARGEST)


def private_scaling(X: object, y: object = None, *, epsilon: float,
                    quantile: float = 0.95) -> PrivateScaling:
    """Release a per-feature scaling of ``X`` (and of ``y``) and the bounds after it.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,), optional
        Regression labels to scale and bound (None: classification, labels untouched).
    epsilon : float
        Total epsilon, split over the ``2 d + 1`` (``2 d + 4`` with ``y``) releases so
        that each needs about as many rows (weights ``1 / min(a, 1 - a)``, a the level).
    quantile : float in (0.5, 1)
        Level of the bounds released after scaling (about ``1 - quantile`` of the rows
        are clipped to them).

    Returns
    -------
    PrivateScaling

    Notes
    -----
    No seed (OpenDP's OS randomness). Few rows spread over many releases give noisy
    quantiles (:meth:`PrivateScaling.note` warns; figures in
    docs/derivations/private_bounds.md).

    Privacy
    -------
    Replace-one (n public). Each release is OpenDP's private quantile of one column (or of
    the scaled norms or ``|y|``): permute-and-flip over public candidates, score
    sensitivity 1 on the sized domain, pure ``epsilon_i`` from OpenDP's privacy map. A
    replaced element changes every column, so basic composition (Dwork, Roth, Theorem
    3.16, adaptive) gives ``sum epsilon_i = epsilon``. Derivation:
    docs/derivations/private_bounds.md.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal([100.0, 0.0], [50.0, 0.01], size=(50_000, 2))
    >>> s = private_scaling(X, epsilon=1.0)
    >>> bool(np.all(np.abs(s.center - [100.0, 0.0]) < [10.0, 0.002]))  # grid steps 12%
    True
    >>> 1.5 < s.x_bound < 2.5, len(s.epsilons), round(s.epsilon, 12)  # Rayleigh: 1.91
    (True, 5, 1.0)
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    quantile = check_real("quantile", quantile, low=0.5, high=1.0, low_open=True,
                          high_open=True)
    X, y = _checked_data(X, y)
    d = X.shape[1]
    levels = [LOW, 1.0 - LOW] * d + [quantile]
    levels += [LOW, 1.0 - LOW, quantile] if y is not None else []
    shares = _shares(epsilon, levels)
    grid, spent = list(SIGNED_GRID), []

    def release(values: np.ndarray, i: int, candidates: list[float]) -> float:
        value, eps = release_quantile(values, float(shares[i]), levels[i], candidates)
        spent.append(eps)
        return value

    spans = np.array([[release(X[:, j], 2 * j + k, grid) for k in (0, 1)] for j in range(d)])
    center = spans.mean(axis=1)
    scale = np.array([_spread(lo, hi) for lo, hi in spans])
    x_bound = release(above_grid(clip_norms(_scaled(X, center, scale)), GRID), 2 * d,
                      list(GRID))
    y_center = y_scale = y_bound = None
    if y is not None:
        lo, hi = release(y, 2 * d + 1, grid), release(y, 2 * d + 2, grid)
        y_center, y_scale = (lo + hi) / 2.0, _spread(lo, hi)
        y_bound = release(above_grid(np.abs(_scaled(y, y_center, y_scale)), GRID),
                          2 * d + 3, list(GRID))
    return PrivateScaling(center, scale, x_bound, y_center, y_scale, y_bound,
                          tuple(spent), tuple(levels), len(X), len(grid))


def _checked_data(X: object, y: object) -> tuple[np.ndarray, np.ndarray | None]:
    """``X`` as a finite non-empty (n, d) array and ``y`` as n finite labels (or None)."""
    X = np.asarray(X, dtype=np.float64) if X is not None else X
    if X is None or X.ndim != 2 or X.shape[0] == 0:
        raise fail("X", "be a non-empty 2-d array", X)
    X = as_matrix("X", X, X.shape[1])
    if y is not None:
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (len(X),) or not np.all(np.isfinite(y)):
            raise fail("y", f"be {len(X)} finite labels (one per row of X)", y)
    return X, y


def _shares(epsilon: float, levels: list[float]) -> np.ndarray:
    """Each release's epsilon, in proportion to ``1 / min(a, 1 - a)`` for its level a: a
    release needs rows in proportion to ``1 / (epsilon_i min(a, 1 - a))``
    (:meth:`PrivateScaling.min_rows`), so every release then needs about as many.

    >>> _shares(1.0, [0.1, 0.9, 0.95]).round(4).tolist()  # weights 10, 10, 20
    [0.25, 0.25, 0.5]
    """
    weights = np.array([1.0 / min(a, 1.0 - a) for a in levels])
    return epsilon * weights / weights.sum()
