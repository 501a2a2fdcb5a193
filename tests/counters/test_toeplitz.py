"""ToeplitzCounter: the published loss figures, its refusal of pure noise, its sensitivity
by brute force.

Every counter's contract is tests/counters/test_counters.py.
"""

from __future__ import annotations

import pytest

from dpol.counters import BinaryTreeCounter, ToeplitzCounter
from dpol.errors import InvalidInputError

from counter_cases import brute_force_sensitivity


def test_toeplitz_loss_matches_the_published_figures_and_refuses_pure_noise():
    # issue 5: within 1% of 10.71, 21.13, 30.02 at T = 2^10, 2^16, 2^20 (exact here)
    for horizon, figure in [(2**10, 10.71), (2**16, 21.13), (2**20, 30.02)]:
        assert ToeplitzCounter(horizon, noise_multiplier=1.0).loss() == pytest.approx(
            figure, rel=1e-3)
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian'"):
        ToeplitzCounter(8, epsilon=1.0, noise="laplace")
    # 13x less worst-case variance than the binary tree at 2^16 (272 / 21.13)
    assert BinaryTreeCounter(2**16, noise_multiplier=1.0).loss() / ToeplitzCounter(
        2**16, noise_multiplier=1.0).loss() > 12.8


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_toeplitz_bruteforce_sensitivity(horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change (replace: any other value;
    # add/remove: set to 0), the encoder C x moves by at most -- and for the first element
    # exactly -- the declared sensitivity Delta ||C e_1||
    counter = ToeplitzCounter(horizon, noise_multiplier=1.0, neighbouring=neighbouring)
    best = brute_force_sensitivity(counter, horizon, neighbouring)
    assert best == pytest.approx(counter.sensitivity, rel=1e-12)
