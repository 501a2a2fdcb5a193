"""Kernels and their finite feature maps: ||phi(x)|| = kappa, E phi.phi' = K (Gaussian
random features), the polynomial map exact; kappa of the polynomial kernel.

The learner that uses them: test_private_kernel_regression.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.learners._kernels import FeatureMap, Kernel


def test_feature_maps_and_kernels():
    X = np.random.default_rng(0).normal(size=(6, 3))
    k = Kernel("gaussian", 0.7)
    big = FeatureMap(k, 3, 20000, feature_seed=1)(X)
    np.testing.assert_allclose(np.linalg.norm(big, axis=1), 1.0, rtol=0, atol=1e-12)
    # E phi.phi' = K; each entry averages 10^4 terms of variance <= 1/2: 5 sd = 0.036
    assert np.max(np.abs(big @ big.T - k(X, X))) < 5 * math.sqrt(0.5 / 10000)
    p = Kernel("polynomial", degree=3, coef0=2.0, x_bound=1.5)
    assert p.kappa == pytest.approx((2.25 + 2.0) ** 1.5)
    F = FeatureMap(p, 3)(X)
    assert F.shape == (6, math.comb(6, 3))
    np.testing.assert_allclose(F @ F.T, p(X, X), rtol=1e-12)
