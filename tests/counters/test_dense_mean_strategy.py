"""The mean-optimal dense factorization against dense matrices and the plain fixed point.

The streaming contract of every strategy is tests/counters/test_strategy.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BltCounter, DenseMeanCounter, ToeplitzCounter
from dpol.counters.strategies.dense_mean_strategy import diag_inverse_sqrt, mean_optimal_factors


@pytest.mark.parametrize("horizon", [64, 256])
def test_dense_mean_optimum_beats_every_streaming_strategy_on_the_mean(horizon):
    dense = DenseMeanCounter(horizon, noise_multiplier=1.0).strategy
    sqrt = ToeplitzCounter(horizon, noise_multiplier=1.0).strategy
    blt = BltCounter(horizon, noise_multiplier=1.0, objective="mean").strategy
    a = np.tril(np.ones((horizon, horizon)))
    np.testing.assert_allclose(dense.decoder @ dense.encoder, a, rtol=0, atol=1e-10)
    assert np.array_equal(dense.encoder, np.tril(dense.encoder))  # it streams
    # the optimum's columns all have norm 1 (the fixed point's diag(X) = 1)
    np.testing.assert_allclose(np.sum(dense.encoder**2, axis=0), 1.0, rtol=1e-5)
    assert dense.loss("mean") < 0.96 * blt.loss("mean") < 0.96 * sqrt.loss("mean")
    # dense, it beats the (Toeplitz) square root on the worst step as well
    assert dense.loss() < sqrt.loss()


@pytest.mark.parametrize("size", [2, 7, 200])
def test_diag_inverse_sqrt_is_the_eigendecomposition(size):
    # random positive definite tridiagonals with eigenvalues spread over ~5 decades (as
    # the fixed point's K = R^-2); the quadrature is built for 1e-11 and float rounding
    # in the pivots costs about eps * cond(K) < 1e-10 here: 1e-9 leaves a margin of 10
    rng = np.random.default_rng(size)
    v = rng.uniform(0.3, 3.0, size)
    diagonal = np.r_[1.0, np.full(size - 1, 2.0)] / v
    off = -1.0 / np.sqrt(v[:-1] * v[1:])
    w, q = np.linalg.eigh(np.diag(diagonal) + np.diag(off, 1) + np.diag(off, -1))
    np.testing.assert_allclose(diag_inverse_sqrt(diagonal, off), (q * q) @ w**-0.5,
                               rtol=1e-9)


def test_dense_mean_optimum_is_the_plain_fixed_point():
    # the published iteration, dense: v <- diag((V^1/2 A^T A V^1/2)^1/2) from v = 1, run
    # to 1e-10; the quadrature-and-Anderson build stops at 1e-9 in v, which moves the
    # loss by at most ~1e-9 relative through the largest column norm (1e-9 asserted; the
    # old 1e-6 stop was 1.5e-7 off and fails this) and X by ~1e-9 (1e-7 asserted)
    horizon = 48
    a = np.tril(np.ones((horizon, horizon)))
    v = np.ones(horizon)
    for _ in range(2000):
        w, u = np.linalg.eigh(np.sqrt(v)[:, None] * (a.T @ a) * np.sqrt(v)[None, :])
        r = (u * np.sqrt(w)) @ u.T
        v, last = np.diag(r).copy(), v
        if np.max(np.abs(v / last - 1.0)) < 1e-10:
            break
    x = r / np.sqrt(np.outer(v, v))
    encoder = mean_optimal_factors(horizon)[0]

    def loss(gram):  # T times the mean loss: ||A C^-1||_F^2 at sensitivity 1
        return np.trace(a.T @ a @ np.linalg.inv(gram)) * np.max(np.diag(gram))

    assert loss(encoder.T @ encoder) == pytest.approx(loss(x), rel=1e-9)
    np.testing.assert_allclose(encoder.T @ encoder, x, atol=1e-7)
