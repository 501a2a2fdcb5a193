"""dpol/datasets/normalize.py: rows into the unit ball and labels into [-1, 1] by the 95th
percentile, so that one outlier does not shrink every other row."""

from __future__ import annotations

import numpy as np

from dpol.datasets import normalize_regression, normalize_rows


def test_one_outlier_row_does_not_shrink_every_other_row():
    # the largest row as the scale left river's Shuttle rows at a median norm of 1.39/123
    # and every learner, noise-free too, at the majority class's accuracy; the 95th
    # percentile keeps the bulk of the rows near the bound, the 5% above are scaled to 1
    X = np.random.default_rng(0).normal(size=(200, 4))
    X[0] *= 1000.0
    Z, how = normalize_rows(X)
    norms = np.linalg.norm(Z, axis=1)
    assert norms.max() <= 1.0 + 1e-12 and np.median(norms) > 0.5
    assert np.sum(norms >= 1.0 - 1e-12) == 10 and "the 10 rows above it scaled" in how
    y = np.r_[1e6, np.arange(199.0)]
    _, t, how = normalize_regression(X, y)
    assert np.abs(t).max() == 1.0 and np.median(np.abs(t)) > 0.2
    assert "the 10 labels beyond +-1 clipped" in how
