"""Bounded memory: ``run`` streams in chunks, with the bits of one block."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from dpol.counters import BltCounter
from dpol.errors import NonPrivateWarning

from counter_cases import COUNTERS, cases_with_noise, make

ALL = sorted(COUNTERS)


def stream(horizon, dim, seed=0):
    """Elements of norm about 1.2: about half of them are clipped."""
    return np.random.default_rng(seed).normal(size=(horizon, dim)) * 1.2 / np.sqrt(dim)


def one_block(counter):
    """The counter with chunks larger than any test's block: ``run`` takes it whole."""
    counter.run_chunk_values = 2**40
    return counter


@pytest.mark.parametrize(("name", "noise"), cases_with_noise(ALL))
@pytest.mark.parametrize("started", [0, 37])
def test_chunked_run_has_the_bits_of_one_block(name, noise, started):
    # 64-row chunks (the floor) over 400 rows: boundaries fall inside tree levels, window
    # blocks and BLT buffers; releases, clip count, running sum and the state that later
    # steps continue from must all be those of one block, bit for bit
    values = stream(400 + started, 3, seed=started)
    chunked, whole = make(name, 500, 3, noise=noise, seed=4), one_block(
        make(name, 500, 3, noise=noise, seed=4))
    chunked.run_chunk_values = 1
    assert chunked._chunk_rows(400) == (64 if chunked.strategy.run_chunks else 400)
    for c in (chunked, whole):
        if started:
            c.run(values[:started])
    same = _same(name)
    same(chunked.run(values[started:]), whole.run(values[started:]))
    assert (chunked.t, chunked.n_clipped_) == (whole.t, whole.n_clipped_)
    np.testing.assert_array_equal(chunked._sum, whole._sum)
    extra = stream(5, 3, seed=99)
    same(np.stack([chunked.add(v) for v in extra]), np.stack([whole.add(v) for v in extra]))


#: strategies whose block noise is a matrix or FFT product over the block: a chunk
#: boundary changes the order of the sums, so chunked and whole agree to rounding only
#: (the same draws: relative error about (rows summed) x 2^-52 < 1e-12 for 500 rows)
ROUNDING_ONLY = {"banded-4", "banded-mean", "dense-mean"}


def _same(name):
    if name not in ROUNDING_ONLY:
        return np.testing.assert_array_equal
    return lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12,
                                                   atol=1e-12 * float(np.abs(b).max()))


def traced_peak(fn) -> int:
    """Peak bytes numpy and Python allocate during ``fn()``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["binary", "binary-padded", "honaker", "window-big", "blt"])
def test_run_holds_the_output_plus_a_chunk(name):
    # T = 2^18, d = 8: a T x d array is 16 MiB, a chunk 2 MiB. Before chunking the run
    # held the T x d noise and the strategy's T x d temporaries (3-5x the output); now the
    # output (run's validated copy) plus a few chunks
    horizon, dim = 2**18, 8
    values = stream(horizon, dim)
    counter = make(name, horizon, dim, seed=0)
    peak = traced_peak(lambda: counter.run(values))
    assert peak < values.nbytes + 8 * 2**18 * 8, (peak / 2**20, values.nbytes / 2**20)


def test_toeplitz_run_holds_output_draws_and_a_working_set_independent_of_t():
    # the square-root Toeplitz state is every draw (O(T d), by design); run adds the
    # blocked product into the output block by block. Beyond output and draws it holds,
    # with blocks of 2^10 rows (all 8 coordinates a batch, sweeps of 8 blocks), 8
    # accumulators of 8 x 1025 complex (1 MiB) and a few 8 x 2^11 arrays (128 KiB each):
    # the same at T = 2^14 and 2^15, both past one sweep (before: the (T x d) noise array
    # too, and one coordinate's FFT over the history). In-bound elements: no clipping copies
    dim, extra = 8, []
    for horizon in (2**14, 2**15):
        values = stream(horizon, dim) * 0.4
        counter = make("toeplitz", horizon, dim, seed=0)
        counter.strategy.block_rows = 2**10
        extra.append(traced_peak(lambda c=counter, v=values: c.run(v)) - 2 * values.nbytes)
    assert extra[0] < 3 * 2**20 and abs(extra[1] - extra[0]) < 2**16, extra


def test_blt_tables_built_in_blocks_are_the_one_pass_tables_and_shared():
    # T = 2^16 + 3: a second block of 3 steps. The variance table is a cumsum continued
    # across blocks, so it must equal the one-pass formula bit for bit (noise_ridge reads it)
    horizon = 2**16 + 3
    thetas, omegas = np.array([0.999, 0.9, 0.5]), np.array([-4e-4, -0.03, -0.1])
    a = BltCounter(horizon, 3, thetas=thetas, omegas=omegas, noise_multiplier=1.0)
    s = -omegas / (1.0 - thetas)
    k = np.arange(horizon, dtype=np.float64)
    h = (1.0 - s.sum()) + s @ np.exp(np.log(thetas)[:, None] * k[None, :])
    np.testing.assert_array_equal(a.strategy.variance(np.arange(1, horizon + 1)),
                                  np.cumsum(h**2))
    b = BltCounter(horizon, 7, thetas=thetas, omegas=omegas, noise_multiplier=2.0)
    assert b.strategy is a.strategy  # one pair of T-long tables for both


def test_zero_noise_releases_the_running_sum_without_correlating():
    # a non-private twin: the strategy is never asked for noise (correlating zeros cost the
    # twin of ridge most of its time), the releases are the running sums of the clipped
    # rows (300 sums of terms <= 1: rounding well below the 1e-12 allowed)
    values = stream(301, 3)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    exact = np.cumsum(np.where(norms > 1.0, values / norms, values), axis=0)
    blt = dict(thetas=[0.9, 0.5], omegas=[-0.05, -0.2])  # given: no optimizer to run
    with pytest.warns(NonPrivateWarning):
        exact_blt = BltCounter(301, 3, noise_multiplier=0.0, **blt)
    for counter in (exact_blt,
                    make("toeplitz", 301, 3, noise_multiplier=0.0),
                    make("binary", 301, 3, noise_multiplier=0.0)):
        counter.strategy.correlate = None  # would raise if called
        np.testing.assert_allclose(counter.run(values[:300]), exact[:300], rtol=0, atol=1e-12)
        np.testing.assert_allclose(counter.add(values[300]), exact[300], rtol=0, atol=1e-12)
