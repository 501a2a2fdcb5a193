"""The normalisation of dpol's reproductions: rows into the unit ball, targets onto [-1, 1].

Both the loaders of :mod:`dpol.datasets.real` and :mod:`dpol.datasets.shipped` and the
``"standardize"`` option of :mod:`dpol.datasets.files` use it, so it sits below all three
(layer L4). It reads means, standard deviations, the largest row norm and the target range
of the data: what it learns is public, not covered by a learner's guarantee.
"""

from __future__ import annotations

import numpy as np

__all__ = ["normalize_regression", "normalize_rows"]


def normalize_rows(X: np.ndarray) -> tuple[np.ndarray, str]:
    """Standardise columns, then divide by the largest row norm: every ||x|| <= 1.

    Examples
    --------
    >>> Z, how = normalize_rows(np.random.default_rng(0).normal(size=(5, 3)))
    >>> Z.shape, round(float(np.linalg.norm(Z, axis=1).max()), 4)
    ((5, 3), 1.0)
    """
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    Z = (X - mean) / std
    scale = float(np.max(np.linalg.norm(Z, axis=1)))
    return Z / scale, f"columns standardised, rows divided by the largest row norm ({scale:.3g})"


def normalize_regression(X: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """Rows as :func:`normalize_rows`; the target mapped affinely onto [-1, 1].

    JKT's Appendix G leaves the normalisation open (PQFTL needs ||x||, |y| <= R); this is
    the one dpol's reproductions use, with R = 1.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> Z, y, how = normalize_regression(X, np.arange(5.0))
    >>> y
    array([-1. , -0.5,  0. ,  0.5,  1. ])
    """
    Z, how = normalize_rows(X)
    lo, hi = float(target.min()), float(target.max())
    y = 2.0 * (target - lo) / (hi - lo) - 1.0 if hi > lo else np.zeros_like(target)
    return Z, y, f"{how}; target mapped from [{lo:g}, {hi:g}] onto [-1, 1]"
