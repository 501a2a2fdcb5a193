"""The banded matrix optimiser: its loss and exact gradient, its band's unit columns and
loss against the Toeplitz bands."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from dpol.counters import BandedMatrixCounter, BandedToeplitzCounter
from dpol.counters.strategies.banded_matrix_optimizer import (
    _flat_loss_and_gradient,
    _layout,
    _loss_and_gradient,
    _mask,
    banded_matrix_loss,
    column_norms,
    optimal_banded_matrix,
)
from dpol.counters.strategies.banded_toeplitz_optimizer import optimal_band
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients


@pytest.mark.parametrize(("horizon", "bands"), [(10, 3), (70, 5), (80, 40)])
def test_loss_is_the_materialised_factorisation_and_the_gradient_is_exact(horizon, bands):
    # one padded block; three blocks of 32 rows, the last padded; two blocks of 40. The
    # square-root band perturbed by 10%: a well-conditioned C, as the optimiser meets
    rng = np.random.default_rng(0)
    mask = _mask(horizon, bands)
    band = sqrt_toeplitz_coefficients(bands) * (1.0 + 0.1 * rng.normal(size=(horizon, bands)))
    band *= mask
    value, grad = _loss_and_gradient(band)
    norms = column_norms(band)
    c = np.zeros((horizon, horizon))
    for t in range(horizon):
        for j in range(min(bands, t + 1)):
            c[t, t - j] = band[t, j] / norms[t - j]
    a = np.tril(np.ones((horizon, horizon)))
    assert value == pytest.approx(np.sum((a @ np.linalg.inv(c)) ** 2) / horizon, rel=1e-12)
    # central differences: error O(h^2 f''') ~ 1e-12 at h = 1e-6, rounding ~ 1e-16 / h
    h, numeric = 1e-6, np.zeros_like(band)
    for u, j in zip(*np.nonzero(mask), strict=True):
        up, down = band.copy(), band.copy()
        up[u, j] += h
        down[u, j] -= h
        numeric[u, j] = (_loss_and_gradient(up)[0] - _loss_and_gradient(down)[0]) / (2 * h)
    np.testing.assert_allclose(grad, numeric, atol=1e-8)
    # column ranges add up (each column is a solve of its own): split inside a block,
    # evaluated in turn or on two threads, the same sums to rounding
    layout = _layout(horizon, bands)
    width = layout.blocks * layout.size
    split = layout._replace(ranges=((0, width // 2 + 3), (width // 2 + 3, width)))
    with ThreadPoolExecutor(2) as pool:
        for pooled in (None, pool):
            v2, g2 = _flat_loss_and_gradient(band[mask], horizon, split, pooled)
            assert v2 == pytest.approx(value, rel=1e-13)
            np.testing.assert_allclose(g2, grad[mask], rtol=1e-11, atol=1e-14)


def test_optimised_band_has_unit_columns_and_beats_the_toeplitz_bands():
    horizon, bands = 64, 8
    band = optimal_banded_matrix(horizon, bands)
    np.testing.assert_allclose(column_norms(band), 1.0, rtol=1e-12)
    ours = BandedMatrixCounter(horizon, bands=bands, noise_multiplier=1.0)
    sqrt_band = BandedToeplitzCounter(horizon, bands=bands, noise_multiplier=1.0)
    mean_band = BandedToeplitzCounter(horizon, noise_multiplier=1.0,
                                      coefficients=optimal_band(horizon, bands, "mean"))
    assert ours.loss("mean") == pytest.approx(banded_matrix_loss(band), rel=1e-9)
    assert ours.loss("mean") < mean_band.loss("mean") < sqrt_band.loss("mean")
