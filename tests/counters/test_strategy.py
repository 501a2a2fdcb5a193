"""Strategies as objects: streaming noise == the materialized factorization."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters.strategies import (
    BandedMatrixStrategy,
    BandedToeplitzStrategy,
    BltStrategy,
    DenseMeanStrategy,
    HonakerStrategy,
    PaddedTreeStrategy,
    ToeplitzStrategy,
    TreeStrategy,
    WindowTreeStrategy,
)
from dpol.counters.strategies.banded_matrix_optimizer import optimal_banded_matrix
from dpol.counters.strategies.banded_toeplitz_optimizer import optimal_band
from dpol.counters.strategies.blt_optimizer import optimal_blt_parameters
from dpol.errors import InvalidInputError
from dpol.noise.kinds import STRATEGY_NOISES

T = 13


def strategies(horizon=T, window=4):
    return {
        "tree": TreeStrategy(horizon),
        "padded_tree": PaddedTreeStrategy(horizon),
        "honaker": HonakerStrategy(horizon),
        "window_tree": WindowTreeStrategy(horizon, window),
        "toeplitz": ToeplitzStrategy(horizon),
        "blt": BltStrategy(horizon, *optimal_blt_parameters(horizon, buffers=3)),
        "banded_toeplitz": BandedToeplitzStrategy(horizon, 4, optimal_band(horizon, 4)),
        "dense_mean": DenseMeanStrategy(horizon),
        "banded_matrix": BandedMatrixStrategy(horizon, optimal_banded_matrix(horizon, 4)),
    }


#: strategies whose blocks (FFT, lfilter, matrix slices) match the steps to rounding only
ROUNDING = ("toeplitz", "blt", "banded_toeplitz", "dense_mean")


def correlation_matrix(strategy, horizon=T, chunks=None):
    """Release noise as a linear map of the draws: unit draws, one per coordinate."""
    n_draws = strategy.draws(0, horizon)
    state = strategy.init_state(n_draws)
    eye = np.eye(n_draws)
    out, start, used = [], 0, 0
    for n in chunks or [1] * horizon:
        k = strategy.draws(start, n)
        out.append(strategy.correlate(state, eye[used:used + k].copy(), start, n))
        start, used = start + n, used + k
    assert used == n_draws
    return np.vstack(out)


@pytest.mark.parametrize("name", sorted(strategies()))
def test_variance_is_the_squared_row_norm_of_the_streamed_correlation(name):
    s = strategies()[name]
    assert s.name == name and name in STRATEGY_NOISES
    rows = correlation_matrix(s)
    steps = np.arange(1, T + 1, dtype=np.int64)
    np.testing.assert_allclose(s.variance(steps), np.sum(rows**2, axis=1), rtol=1e-12)
    assert s.loss() == pytest.approx(np.max(s.variance(steps)) * s.column_norm_sq())
    assert s.loss("mean") == pytest.approx(np.mean(s.variance(steps)) * s.column_norm_sq())
    encoder = s.encode(np.eye(T))  # C: one column per element
    assert s.column_norm_sq() == pytest.approx(np.max(np.sum(encoder**2, axis=0)))
    with pytest.raises(InvalidInputError, match="participation must be 'single', a Part"):
        s.column_norm_sq("multiple")


@pytest.mark.parametrize("name", ["tree", *ROUNDING, "banded_matrix"])
def test_decoder_times_encoder_is_the_prefix_sum_matrix(name):
    # draws come one per step in encoder order here, so the streamed map is B: B C = A
    s = strategies()[name]
    product = correlation_matrix(s) @ s.encode(np.eye(T))
    np.testing.assert_allclose(product, np.tril(np.ones((T, T))), atol=1e-12)


@pytest.mark.parametrize("window", [4, 64])  # 64 > T: one block, the binary tree
@pytest.mark.parametrize("name", sorted(strategies()))
def test_one_step_and_blocks_give_the_same_noise(name, window):
    s = strategies(window=window)[name]
    steps = correlation_matrix(s)
    fresh = correlation_matrix(s, chunks=[T])  # one block from a fresh state
    pieces = correlation_matrix(s, chunks=[4, 3, 1, 5]) if s.continues_vectorized else fresh
    for block in (fresh, pieces):
        if name in ROUNDING:  # FFT / lfilter against the direct recursion
            np.testing.assert_allclose(block, steps, rtol=0, atol=1e-12)
        else:
            assert np.array_equal(block, steps)


def test_strategy_state_restores_to_the_template_shapes():
    s = strategies()["blt"]
    state = s.init_state(2)
    restored = s.restore_state({k: v.tolist() for k, v in state.items()}, 2)
    shapes = {"u": (3, 2), "n": (2,), "z": (0, 2)}  # z: the draws of a block cut by run
    assert {k: v.shape for k, v in restored.items()} == shapes
    # a state saved before run's blocks (buffers and total alone) is at a block's start
    old = s.restore_state({"u": state["u"].tolist(), "n": state["n"].tolist()}, 2)
    assert {k: v.shape for k, v in old.items()} == shapes


@pytest.mark.parametrize("name", sorted(strategies()))
def test_random_blocks_from_any_state_give_the_steps_noise(name):
    horizon = 100
    s = strategies(horizon, window=8)[name]
    rng = np.random.default_rng(0)
    chunks, left = [], horizon
    while left:
        chunks.append(int(min(left, rng.integers(1, 20))))
        left -= chunks[-1]
    steps = correlation_matrix(s, horizon)
    blocks = correlation_matrix(s, horizon, chunks=chunks)
    if name in ROUNDING:
        np.testing.assert_allclose(blocks, steps, rtol=0, atol=1e-12)
    else:
        assert np.array_equal(blocks, steps)
