"""The normalisation of dpol's reproductions: rows into the unit ball, targets centred in
[-1, 1].

Both the loaders of :mod:`dpol.datasets.real` and :mod:`dpol.datasets.shipped` and the
``"standardize"`` option of :mod:`dpol.datasets.files` use it, so it sits below all three
(layer L4). It reads means, standard deviations, a quantile of the row norms and the
target's mean and spread: what it learns is public, not covered by a learner's guarantee.
"""

from __future__ import annotations

import numpy as np

from dpol.clipping import clip_norms, scale_rows_l2

__all__ = ["OUTSIDE", "normalize_regression", "normalize_rows"]


#: the share of the rows (and of the labels) left beyond the scale and clipped to it:
#: the largest row as the scale let one outlier shrink all others (river's Shuttle: a
#: largest standardised norm of 123 against a median of 1.39 left rows too short to
#: learn from, and every learner at the majority class's accuracy, noise-free too)
OUTSIDE = 0.05


def normalize_rows(X: np.ndarray) -> tuple[np.ndarray, str]:
    """Standardise columns, divide rows by the 95th percentile of their norms, and scale
    the rows above it to norm 1: every ||x|| <= 1.

    Examples
    --------
    >>> Z, how = normalize_rows(np.random.default_rng(0).normal(size=(40, 3)))
    >>> Z.shape, round(float(np.linalg.norm(Z, axis=1).max()), 4), how.split(", ")[-1]
    ((40, 3), 1.0, 'the 2 rows above it scaled to norm 1')
    """
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    Z = (X - mean) / std
    norms = clip_norms(Z)
    scale = _scale(norms)
    over = norms > scale
    scale_rows_l2(Z, norms, over, scale)  # the learners' clip, in place
    return Z / scale, ("columns standardised, rows divided by the 95th percentile of the "
                       f"row norms ({scale:.3g}), the {int(over.sum())} rows above it scaled "
                       "to norm 1")


def _scale(values: np.ndarray) -> float:
    """The (1 - OUTSIDE) quantile of non-negative values; their largest if it is 0."""
    scale = float(np.quantile(values, 1.0 - OUTSIDE))
    return scale if scale > 0.0 else (float(values.max()) or 1.0)


def normalize_regression(X: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """Rows as :func:`normalize_rows`; the target centred at its mean and divided by the
    95th percentile of its distance from it, the labels beyond clipped: |y| <= 1.

    The normalisation of dpol's reproductions (JKT's Appendix G leaves it open) and of
    ``dpol run --normalize standardize``. Centring lets a model through the origin express
    the label's mean without spending its ridge on an intercept (mapping [min, max] onto
    [-1, 1] instead cost ``ridge`` its R^2 on diabetes: -0.22 to -0.39 held out).

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(40, 3))
    >>> target = np.r_[np.zeros(38), 5.0, -5.0]
    >>> Z, y, how = normalize_regression(X, target)
    >>> y[-2:].tolist(), how.split("; ")[1]
    ([1.0, -1.0], 'target (y - 0) / 0.25, the 2 labels beyond +-1 clipped')
    """
    Z, how = normalize_rows(X)
    center = float(target.mean())
    dev = target - center
    scale = _scale(np.abs(dev))
    y = np.clip(dev / scale, -1.0, 1.0)
    beyond = int(np.sum(np.abs(dev) > scale))
    return Z, y, (f"{how}; target (y - {center:.4g}) / {scale:.4g}, the {beyond} labels "
                  "beyond +-1 clipped")
