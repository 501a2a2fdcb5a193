"""Problems and objectives shared by the tests of the best fixed point and of regret
(test_fixed_point_solvers.py, test_regret.py)."""

from __future__ import annotations

import numpy as np


def regression(n=200, d=5, seed=0, scale=3.0, noise=0.1):
    """A regression problem whose least-squares solution has norm about ``scale``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    w = rng.normal(size=d)
    w *= scale / np.linalg.norm(w)
    return X, X @ w + noise * rng.normal(size=n)


def classification(n=200, d=5, seed=0, flip=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.sign(X @ rng.normal(size=d))
    y[rng.random(n) < flip] *= -1.0
    return X, y


def total(loss, w, X, y):
    return float(np.sum(loss.value(w, X, y)))


def total_grad(loss, w, X, y):
    return loss.grad(w, X, y).sum(axis=0)
