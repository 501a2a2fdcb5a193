"""Clipping to a declared l2 bound: part of every privacy proof (layer L0).

The sensitivity of every counter and learner is derived for elements of norm at most the
declared bound; what makes that true of any input is the clipping here. So it is a
privacy mechanism, kept apart from argument checking: callers clip every element and
count what they clip (the count feeds :mod:`dpol._clip_warning`), never skip it. The
per-step paths (``Counter.add``, ``learn_one``) and the vectorized ones (``run``) decide
with the same norm formula, :func:`clip_norms`, so both clip the same rows bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["clip_examples", "clip_norms", "clip_rows_l2", "exceeds_l2", "scale_rows_l2"]


def clip_norms(rows: np.ndarray) -> np.ndarray:
    """The l2 norm of every row of a 2-d array, as every clip of the library decides it.

    One formula for the per-step paths (``Counter.add``, ``learn_one``) and the vectorized
    ones (``run``), so both clip the same rows, bit for bit. A huge finite row's norm
    overflows to inf; einsum and sqrt do so without a warning (no errstate: 1.5 us a step).

    >>> clip_norms(np.array([[3.0, 4.0], [1e200, 1e200]])).tolist()
    [5.0, inf]
    """
    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


def exceeds_l2(vec: np.ndarray, bound: float) -> bool:
    """Whether :func:`clip_rows_l2` would clip ``vec`` (finite, 1-d) as a row: the same test.

    (A cheaper BLAS vdot pre-test was measured and dropped: unit-norm data, the usual
    case, sits at the bound to within ulps, where only :func:`clip_norms` can decide.)

    >>> exceeds_l2(np.array([3.0, 4.0]), 5.0), exceeds_l2(np.array([3.0, 4.0]), 4.9)
    (False, True)
    """
    # clip_norms of the one row, with math.sqrt: the same correctly rounded float, and
    # the ufunc on a 1-element array cost 2-4k instructions a step more (valgrind)
    rows = vec[None, :]
    return math.sqrt(np.einsum("ij,ij->i", rows, rows)[0]) > bound


def clip_rows_l2(rows: np.ndarray, bound: float) -> tuple[np.ndarray, int]:
    """Scale every row of a 2-d array down to l2 norm ``bound``, in place.

    Returns the array and the number of rows that were clipped. Clipping is part of
    the privacy proof (it bounds the sensitivity), so callers count it, never skip it.
    A row within a relative 1e-12 above the bound (rounding) is scaled but not counted.

    Examples
    --------
    >>> rows = np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> out, n = clip_rows_l2(rows, 1.0)
    >>> out is rows, rows.round(4).tolist(), n  # in place; one row was above the bound
    (True, [[0.6, 0.8], [0.3, 0.4]], 1)
    """
    norms = clip_norms(rows)
    over = norms > bound
    if np.any(over):
        scale_rows_l2(rows, norms, over, bound)
    # every row above the bound is scaled down; only real overshoots are counted, not a
    # norm one rounding step above a bound the caller's own clipping already enforced
    return rows, int(np.count_nonzero(norms > bound * (1.0 + 1e-12)))


def clip_examples(X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float, *,
                  copy: bool = True) -> tuple[np.ndarray, np.ndarray, int]:
    """Clip rows of X to l2 norm ``x_bound`` and y to [-y_bound, y_bound]; count the examples.

    The data bounds of a loss are what its privacy constants assume, so every learner and
    batch solver passes its examples through here (the caller's arrays are not modified).
    ``copy=False``: X is an array the caller made for this (``run``'s validated copy),
    and its rows above the bound are scaled in place, sparing a second copy of a stream.

    Examples
    --------
    >>> X, y, n = clip_examples(np.array([[3.0, 4.0], [0.1, 0.0]]), np.array([0.5, -2.0]),
    ...                         1.0, 1.0)
    >>> X.round(2).tolist(), y.tolist(), n
    ([[0.6, 0.8], [0.1, 0.0]], [0.5, -1.0], 2)
    """
    norms = clip_norms(X)
    over_x = norms > x_bound
    over_y = np.abs(y) > y_bound
    if np.any(over_x):
        if copy:
            X = X.copy()
        scale_rows_l2(X, norms, over_x, x_bound)
    y = np.clip(y, -y_bound, y_bound)
    # as clip_rows_l2: a norm within a rounding step of the bound is scaled, not counted
    counted_x = norms > x_bound * (1.0 + 1e-12)
    return X, y, int(np.count_nonzero(counted_x | over_y))


def scale_rows_l2(rows: np.ndarray, norms: np.ndarray, over: np.ndarray, bound: float) -> None:
    """Scale ``rows[over]`` (finite) to l2 norm ``bound`` in place, given their ``norms``.

    A norm that overflowed to inf (entries near 1e154 and above) would scale its row to
    zero; such rows are first divided by their largest entry, so they keep their direction.

    Examples
    --------
    >>> rows = np.array([[3.0, 4.0], [1e300, -1e300]])
    >>> norms = clip_norms(rows)
    >>> scale_rows_l2(rows, norms, norms > 1.0, 1.0); rows.round(4)
    array([[ 0.6   ,  0.8   ],
           [ 0.7071, -0.7071]])
    """
    finite = over & np.isfinite(norms)
    if np.any(finite):
        rows[finite] *= (bound / norms[finite])[:, None]
    huge = over & ~np.isfinite(norms)
    if np.any(huge):
        unit = rows[huge] / np.max(np.abs(rows[huge]), axis=1)[:, None]
        rows[huge] = unit * (bound / clip_norms(unit))[:, None]
