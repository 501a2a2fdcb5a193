"""The mean-optimal dense counter and the banded Toeplitz counters against dense matrices.

The contract tests (test_counters.py, test_counters_stats.py, via counter_cases) cover run
vs add, checkpoints, clipping, bad input and the statistical test; here: the
factorizations themselves, their sensitivity by brute force and the loss figures.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import toeplitz

from dpol.counters import (
    BandedToeplitzCounter,
    BltCounter,
    DenseMeanCounter,
    ToeplitzCounter,
    make_counter,
)
from dpol.counters.strategies.banded_toeplitz_optimizer import banded_loss, optimal_band
from dpol.counters.strategies.dense_mean_strategy import diag_inverse_sqrt, mean_optimal_factors
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients
from dpol.errors import InvalidInputError

from counter_cases import brute_force_sensitivity, make

NEW = ["banded-4", "banded-mean", "dense-mean"]


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
@pytest.mark.parametrize("name", NEW)
def test_bruteforce_sensitivity(name, horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change, the encoder moves by at
    # most -- and for some element exactly -- the declared sensitivity
    counter = make(name, horizon, neighbouring=neighbouring)
    best = brute_force_sensitivity(counter, horizon, neighbouring)
    assert best == pytest.approx(counter.sensitivity, rel=1e-12)


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


def test_dense_mean_figures_and_horizon_cap():
    # the fixed point at T = 64 (4.41 against the square root's 4.97)
    assert DenseMeanCounter(64, noise_multiplier=1.0).strategy.loss("mean") == pytest.approx(
        4.4094, abs=1e-4)
    with pytest.raises(InvalidInputError, match="horizon must be at most 2048"):
        DenseMeanCounter(4096, noise_multiplier=1.0)
    # secure noise is taken (test_secure_release); Laplace kinds are not
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian' or 'secure'"):
        DenseMeanCounter(8, epsilon=1.0, noise="secure_laplace")


@pytest.mark.parametrize("bands", [1, 3, 8, 40])
def test_banded_noise_is_the_dense_decoder(bands):
    horizon = 20
    c = BandedToeplitzCounter(horizon, noise_multiplier=1.0, bands=bands).strategy
    b = min(bands, horizon)
    band = np.zeros(horizon)
    band[:b] = sqrt_toeplitz_coefficients(b)
    enc = toeplitz(band, np.zeros(horizon))
    dec = np.tril(np.ones((horizon, horizon))) @ np.linalg.inv(enc)
    steps = np.arange(1, horizon + 1, dtype=np.int64)
    np.testing.assert_allclose(c.variance(steps), np.sum(dec**2, axis=1), rtol=1e-12)
    assert c.column_norm_sq() == pytest.approx(np.max(np.sum(enc**2, axis=0)))
    np.testing.assert_allclose(c.encode(np.eye(horizon)), enc, atol=1e-12)
    if bands == 1:  # no correlation: the running sum of the draws
        assert c.variance(steps).tolist() == steps.tolist()


def test_full_band_is_the_square_root():
    banded = BandedToeplitzCounter(256, bands=256, noise_multiplier=1.0, seed=4)
    sqrt = ToeplitzCounter(256, noise_multiplier=1.0, seed=4)
    assert banded.loss() == pytest.approx(sqrt.loss(), rel=1e-12)
    x = np.full((256, 1), 0.3)
    np.testing.assert_allclose(banded.run(x), sqrt.run(x), rtol=0, atol=1e-9)


@pytest.mark.parametrize("objective", ["max", "mean"])
@pytest.mark.parametrize(("horizon", "bands"), [(64, 16), (1024, 64)])
def test_optimised_band_improves_on_the_square_root_band(objective, horizon, bands):
    start = sqrt_toeplitz_coefficients(bands)
    band = optimal_band(horizon, bands, objective)
    counter = BandedToeplitzCounter(horizon, bands=bands, objective=objective,
                                    noise_multiplier=1.0)
    assert np.array_equal(counter.coefficients_, band) and band[0] == 1.0
    assert counter.strategy.loss(objective) == pytest.approx(
        banded_loss(band, horizon, objective), rel=1e-10)
    # a band of 64 at T = 1024 gains 6-14%; 16 at T = 64 0.9-4%
    gain = 0.94 if bands == 64 else 0.995
    assert banded_loss(band, horizon, objective) < gain * banded_loss(start, horizon,
                                                                      objective)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bands": 0}, "bands must be an integer >= 1"),
        ({"objective": "median"}, "objective must be one of"),
        ({"coefficients": [0.0, 0.5]}, "coefficients must be a non-empty 1-d band"),
        ({"coefficients": []}, "coefficients must be a non-empty 1-d band"),
        ({"coefficients": [1.0, np.inf]}, "coefficients must contain only finite values"),
        ({"coefficients": [1.0, 0.5], "bands": 3}, "bands must equal len"),
        ({"coefficients": [1.0, 0.5], "objective": "mean"}, "objective must be left unset"),
        ({"noise": "secure_laplace"}, "noise must be 'gaussian' or 'secure'"),
        ({"noise": "laplace"}, "noise must be 'gaussian' or 'secure'"),
    ],
)
def test_banded_bad_parameters_are_refused_naming_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        BandedToeplitzCounter(8, noise_multiplier=1.0, **kwargs)


def test_given_band_is_used_and_checkpointed():
    counter = BandedToeplitzCounter(30, 2, noise_multiplier=1.0, coefficients=[1.0, 0.4],
                                    seed=7)
    assert counter.coefficients_.tolist() == [1.0, 0.4]
    with pytest.raises(ValueError):
        counter.coefficients_[0] = 2.0  # read-only: the structure was derived from it
    counter.run(np.full((9, 2), 0.1))
    clone = BandedToeplitzCounter.from_state(counter.get_state())
    assert np.array_equal(clone.run(np.zeros((21, 2))), counter.run(np.zeros((21, 2))))


@pytest.mark.parametrize("name", ["banded", "dense_mean"])
def test_registry_builds_them_with_calibrated_privacy(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counter = make_counter(name, 64, 3, epsilon=1.0, delta=1e-5, seed=0)
    assert counter.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
    probe = ToeplitzCounter(64, epsilon=1.0, delta=1e-5)  # the same z at (1, 1e-5)
    assert counter.noise_scale / counter.sensitivity == pytest.approx(
        probe.noise_scale / probe.sensitivity, rel=1e-12)
