"""The banded Toeplitz strategy against its dense encoder and decoder.

The streaming contract of every strategy is tests/counters/test_strategy.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import toeplitz

from dpol.counters import BandedToeplitzCounter
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients


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
