"""DenseMeanCounter: its loss figure, its horizon cap and noise kinds, its sensitivity by
brute force.

Every counter's contract is tests/counters/test_counters.py; the mean-optimal factors
themselves are tests/counters/test_dense_mean_strategy.py.
"""

from __future__ import annotations

import pytest

from dpol.counters import DenseMeanCounter
from dpol.errors import InvalidInputError

from counter_cases import brute_force_sensitivity, make


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_bruteforce_sensitivity(horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change, the encoder moves by at
    # most -- and for some element exactly -- the declared sensitivity
    counter = make("dense-mean", horizon, neighbouring=neighbouring)
    best = brute_force_sensitivity(counter, horizon, neighbouring)
    assert best == pytest.approx(counter.sensitivity, rel=1e-12)


def test_dense_mean_figures_and_horizon_cap():
    # the fixed point at T = 64 (4.41 against the square root's 4.97)
    assert DenseMeanCounter(64, noise_multiplier=1.0).strategy.loss("mean") == pytest.approx(
        4.4094, abs=1e-4)
    with pytest.raises(InvalidInputError, match="horizon must be at most 2048"):
        DenseMeanCounter(4096, noise_multiplier=1.0)
    # secure noise is taken (test_secure_release); Laplace kinds are not
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian' or 'secure'"):
        DenseMeanCounter(8, epsilon=1.0, noise="secure_laplace")
