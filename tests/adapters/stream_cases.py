"""A small labelled stream shared by the adapters' tests (test_adapters.py,
test_sklearn.py)."""

from __future__ import annotations

import numpy as np


def make_stream(task: str, n: int = 300, d: int = 3, seed: int = 0):
    """n rows of d features (std 0.4) and labels of a fixed linear target: the target
    itself (regression) or its sign (classification)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.4
    target = X @ np.linspace(0.5, -0.5, d)
    y = np.where(target > 0, 1.0, -1.0) if task == "classification" else target
    return X, y
