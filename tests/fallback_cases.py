"""The trivial fallback's test streams and learners, shared by its test files."""

from __future__ import annotations

import math

import numpy as np

from dpol.learners import PrivateQuadraticFTL


def inner(dim=3, horizon=300, epsilon=1.0, seed=1, **kw):
    """A fresh ridge learner (PQFTL, alpha 0.01) for the fallback to wrap."""
    return PrivateQuadraticFTL(dim, horizon=horizon, epsilon=epsilon, alpha=0.01,
                               noise_ridge=math.isfinite(epsilon), seed=seed, **kw)


def stream(n=300, dim=3, outputs=1, seed=0):
    """Rows of norm about 0.5 and labels a noisy plane splits: +-1, or one-hot rows of
    ``outputs`` classes (the largest of the first coordinates)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim)) / 3
    if outputs == 1:
        return X, np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return X, np.eye(outputs)[np.argmax(X[:, :outputs], axis=1)]


def weak_signal(n=1500):
    """A weak signal: 46% of the labels follow x_0, the rest are 70/30 noise. With the
    default split at epsilon 1 (``fallback_budget``), learner seed 1 and fallback seed 2,
    the gate's mean error difference at the horizon lies half a public std below 0."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 3)) / 3
    y = np.where(rng.random(n) < 0.7, -1.0, 1.0)
    return X, np.where(rng.random(n) < 0.46, np.where(X[:, 0] > 0, 1.0, -1.0), y)
