"""BandedToeplitzCounter: the full band is the square root, its own arguments, its default
band with several participations, its sensitivity by brute force.

Every counter's contract is tests/counters/test_counters.py; the strategy against dense
matrices is test_banded_toeplitz_strategy.py, the band's optimizer
test_banded_toeplitz_optimizer.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BandedToeplitzCounter, ToeplitzCounter
from dpol.errors import InvalidInputError

from counter_cases import brute_force_sensitivity, make


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
@pytest.mark.parametrize("name", ["banded-4", "banded-mean"])
def test_bruteforce_sensitivity(name, horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change, the encoder moves by at
    # most -- and for some element exactly -- the declared sensitivity
    counter = make(name, horizon, neighbouring=neighbouring)
    best = brute_force_sensitivity(counter, horizon, neighbouring)
    assert best == pytest.approx(counter.sensitivity, rel=1e-12)


def test_full_band_is_the_square_root():
    banded = BandedToeplitzCounter(256, bands=256, noise_multiplier=1.0, seed=4)
    sqrt = ToeplitzCounter(256, noise_multiplier=1.0, seed=4)
    assert banded.loss() == pytest.approx(sqrt.loss(), rel=1e-12)
    x = np.full((256, 1), 0.3)
    np.testing.assert_allclose(banded.run(x), sqrt.run(x), rtol=0, atol=1e-9)


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


def test_banded_default_band_is_the_separation_so_participations_do_not_overlap():
    assert BandedToeplitzCounter(256, noise_multiplier=1.0).coefficients_.size == 64
    wide = BandedToeplitzCounter(1024, noise_multiplier=1.0, participation=(4, 256))
    assert wide.coefficients_.size == 256  # the separation, beyond the single default
    c = BandedToeplitzCounter(256, noise_multiplier=1.0, participation=(16, 16))
    band = c.coefficients_
    assert band.size == 16
    # 16 disjoint full columns: exactly 16 times one column's squared norm
    assert c.strategy.column_norm_sq(c.participation) == pytest.approx(16 * band @ band)
    assert c.loss("mean") < make("toeplitz", 256, participation=(16, 16)).loss("mean")
