"""ToeplitzCounter: the published loss figures, its refusal of pure noise, its sensitivity
by brute force, its blocked product against the direct one.

Every counter's contract is tests/counters/test_counters.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter, ToeplitzCounter
from dpol.counters.strategies.toeplitz_strategy import blocked_toeplitz
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


@pytest.mark.parametrize(("start", "n", "block", "sweep"), [
    (0, 37, 4, 4), (5, 32, 4, 4), (0, 37, 8, 1), (11, 26, 3, 2), (0, 37, 3, 8), (0, 37, 64, 8)])
def test_blocked_product_is_the_direct_one(start, n, block, sweep):
    # blocks of 3-8 rows over 37: many blocks, lags, sweeps and partial blocks (37 is no
    # multiple of any; start 5 and 11 fall inside a block); 64 > 37: one block; two
    # coordinates a batch over 3 (fft_values). Each output sums at most 13 blocks' FFT
    # products of length <= 16, each within a few x log2(16) x 2^-52 of
    # sum_k |f_k z_{t-k}| <= sum_k f_k max|z| (about 7 x 4): 1e-12 is 1000x that
    f = ToeplitzCounter(40, noise_multiplier=1.0).strategy.coefficients
    z = np.random.default_rng(1).normal(size=(start + n, 3))
    direct = np.stack([f[: t + 1][::-1] @ z[: t + 1] for t in range(start, start + n)])
    out = np.full((n, 3), np.nan)
    for lo, cols, piece in blocked_toeplitz(z, f, start, n, block=block,
                                            fft_values=4 * block, sweep=sweep):
        out[lo:lo + len(piece), cols] = piece
    np.testing.assert_allclose(out, direct, rtol=0, atol=1e-12)


def test_run_with_small_blocks_is_the_add_loop_to_rounding():
    # the counter's path: draws drawn whole, the product added into the releases block by
    # block (blocks of 4 rows, a run starting at step 7); the add loop's dot products
    # agree to rounding: each release sums at most 40 terms f_k z of size <= 3 x 4 (scale
    # 3, draws within 4 sigma): the dot product is within 40 x 12 x 2^-52 = 1e-13 of it,
    # the FFTs of length 8 within log2(8) times that (observed: 2e-15)
    values = np.random.default_rng(2).normal(size=(40, 2)) * 0.3
    blocked, loop = (ToeplitzCounter(40, 2, noise_multiplier=1.0, seed=3) for _ in range(2))
    blocked.strategy.block_rows = 4
    out = np.vstack([blocked.run(values[:6]), blocked.run(values[6:])])
    np.testing.assert_allclose(out, np.stack([loop.add(v) for v in values]), rtol=0,
                               atol=1e-12)
