"""The trivial fallback's test streams and learners, shared by its test files."""

from __future__ import annotations

import math

import numpy as np

from dpol.learners import PrivateQuadraticFTL
from dpol.learners.trivial_fallback import WithTrivialFallback, fallback_budget


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


def weak_signal_runs(thresholds=(0.0, 1.0), n=1500):
    """The fallback (the default split at epsilon 1, learner seed 1, its own seed 2) run
    with each threshold on a weak signal: 46% of the labels follow x_0, the rest are
    70/30 noise. At the horizon the gate's mean error difference lies half a public std
    below 0. Returns the fitted wrappers."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, 3)) / 3
    y = np.where(rng.random(n) < 0.7, -1.0, 1.0)
    y = np.where(rng.random(n) < 0.46, np.where(X[:, 0] > 0, 1.0, -1.0), y)
    z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
    runs = []
    for threshold in thresholds:
        m = WithTrivialFallback(inner(horizon=n, epsilon=rest), prior_multiplier=z_prior,
                                gate_multiplier=z_gate, seed=2, epsilon=1.0,
                                threshold=threshold)
        m.run(X, y)
        runs.append(m)
    return runs
