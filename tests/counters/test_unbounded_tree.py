"""Contract tests of the counters of endless streams (horizon=None): the unbounded tree
and the BLT with its column norms summed over every step."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from test_counters_stats import SCALES_THAT_MUST_FAIL, chi2_accepts

from dpol.counters import BinaryTreeCounter, BltCounter, UnboundedTreeCounter
from dpol.counters.strategies import BltStrategy
from dpol.counters.strategies.blt_optimizer import optimal_blt_parameters
from dpol.errors import InvalidInputError, NonPrivateWarning

from counter_cases import brute_force_sensitivity

#: BLT parameters optimized for a design horizon of 2^6 (their error grows past it)
THETAS, OMEGAS = optimal_blt_parameters(2**6)


def make(name, dim=1, **kwargs):
    """An endless counter, ``noise_multiplier=1`` unless told otherwise."""
    if "epsilon" not in kwargs:
        kwargs.setdefault("noise_multiplier", 1.0)
    with warnings.catch_warnings():
        if kwargs.get("noise_multiplier") == 0.0:
            warnings.simplefilter("ignore", NonPrivateWarning)
        if name == "tree":
            return UnboundedTreeCounter(dim=dim, **kwargs)
        return BltCounter(None, dim, thetas=THETAS, omegas=OMEGAS, **kwargs)


NAMES = ["tree", "blt"]


def same_release(name, a, b):
    """The tree replays the add loop bit for bit; BLT's lfilter agrees to rounding."""
    if name == "tree":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * max(1.0, np.max(np.abs(b))))


def stream(n, dim, seed=0):
    """Elements of norm about 1.2: about half of them are clipped."""
    return np.random.default_rng(seed).normal(size=(n, dim)) * 1.2 / np.sqrt(dim)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 9, 100, 300])
def test_run_equals_add_loop(name, n):
    values = stream(n, 3, seed=n)
    a, b = make(name, 3, seed=5), make(name, 3, seed=5)
    same_release(name, a.run(values), np.stack([b.add(v) for v in values]))
    assert (a.t, a.n_clipped_) == (b.t, b.n_clipped_)
    extra = stream(40, 3, seed=99)  # and both continue alike, across blocks
    same_release(name, a.run(extra), np.stack([b.add(v) for v in extra]))


@pytest.mark.parametrize("name", NAMES)
def test_run_in_chunks_is_one_run_bit_for_bit(name):
    values = stream(300, 2, seed=5)
    whole = make(name, 2, seed=9)
    whole.run_chunk_values = 2**40
    chunked = make(name, 2, seed=9)
    chunked.run_chunk_values = 1  # 64-row chunks
    np.testing.assert_array_equal(chunked.run(values), whole.run(values))


def test_tree_run_in_random_pieces_equals_one_run():
    rng = np.random.default_rng(7)
    values = stream(300, 2, seed=5)
    whole = make("tree", 2, seed=9).run(values)
    for _ in range(20):
        cuts = np.sort(rng.choice(np.arange(1, 300), size=rng.integers(1, 8), replace=False))
        counter = make("tree", 2, seed=9)
        pieces = np.vstack([counter.run(part) for part in np.split(values, cuts)])
        np.testing.assert_array_equal(pieces, whole)


@pytest.mark.parametrize("name", NAMES)
def test_zero_noise_is_cumsum(name):
    values = stream(200, 2, seed=1)
    values /= 1.01 * np.linalg.norm(values, axis=1).max()  # within the bound: no clipping
    with pytest.warns(NonPrivateWarning):
        c = (UnboundedTreeCounter(dim=2, noise_multiplier=0.0) if name == "tree" else
             BltCounter(None, 2, thetas=THETAS, omegas=OMEGAS, noise_multiplier=0.0))
    np.testing.assert_array_equal(c.run(values), np.cumsum(values, axis=0))


REPS = 4000
STEPS = 70  # blocks 0..6: roots of finished blocks and partial trees of every size


@pytest.mark.parametrize("name", NAMES)
def test_gaussian_variance_matches_analytic_at_every_step(name):
    # REPS coordinates on an all-zero stream: REPS independent replications of the noise
    counter = make(name, REPS, seed=2024)
    noise = counter.run(np.zeros((STEPS, REPS)))
    steps = np.arange(1, STEPS + 1)
    expected = counter.variance(steps)
    assert all(chi2_accepts(noise[t - 1], expected[t - 1], STEPS) for t in steps)
    assert np.all(np.abs(noise.mean(axis=1)) < 5 * np.sqrt(expected / REPS))
    for scale in SCALES_THAT_MUST_FAIL:
        assert not any(chi2_accepts(scale * noise[t - 1], expected[t - 1], STEPS)
                       for t in steps)
    if name == "tree":  # the finished blocks' roots are shared: 3 and 5 share 1..3's noise
        cov = float(np.mean(noise[2] * noise[4]))
        assert abs(cov - counter.variance(3)) < 5 * np.sqrt(2 * counter.variance(3)
                                                            * counter.variance(5) / REPS)


@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
@pytest.mark.parametrize("n", [1, 3, 5])
def test_brute_force_sensitivity_on_a_prefix(neighbouring, n):
    # every stream in {-1, 0, 1}^n and every change: the tree's node vector moves by at
    # most node_sensitivity x 1 (the unit column), attained (the first element of a
    # block); BLT's by the prefix of its column norm series, below the whole series
    c = make("tree", neighbouring=neighbouring)
    assert np.isclose(brute_force_sensitivity(c, n, neighbouring), c.sensitivity)
    assert c.sensitivity == c.node_sensitivity
    blt = make("blt", neighbouring=neighbouring)
    prefix = blt.node_sensitivity * np.sqrt(BltStrategy(n, THETAS, OMEGAS).column_norm_sq())
    assert np.isclose(brute_force_sensitivity(blt, n, neighbouring), prefix)
    assert prefix < blt.sensitivity


def test_privacy_needs_no_horizon():
    # the calibrated noise is that of a one-level tree: one unit-sensitivity Gaussian
    c = make("tree", epsilon=1.0, delta=1e-5)
    ref = BinaryTreeCounter(1, epsilon=1.0, delta=1e-5)
    assert c.noise_multiplier == ref.noise_multiplier and c.noise_scale == ref.noise_scale
    assert c.privacy.epsilon <= 1.0 + 1e-9 and c.privacy.delta == 1e-5
    c.run(np.zeros((1000, 1)))
    assert c.noise_scale == ref.noise_scale  # nothing grows with t
    # BLT: the same multiplier, times the whole column-norm series
    blt = make("blt", epsilon=1.0, delta=1e-5)
    assert blt.noise_multiplier == ref.noise_multiplier
    assert np.isclose(blt.noise_scale, ref.noise_scale * np.sqrt(
        BltStrategy(None, THETAS, OMEGAS).column_norm_sq()), rtol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_continues_identically_mid_block(name):
    values = stream(50, 2, seed=3)
    a = make(name, 2, seed=1)
    a.run(values[:21])  # block 4 (16..31), offset 6
    b = type(a).from_state(a.get_state())
    c = pickle.loads(pickle.dumps(a))
    out = a.run(values[21:])
    np.testing.assert_array_equal(b.run(values[21:]), out)
    same_release(name, np.stack([c.add(v) for v in values[21:]]), out)


def test_state_is_logarithmic():
    c = UnboundedTreeCounter(dim=4, noise_multiplier=1.0)
    c.run(np.zeros((5000, 4)))
    floats = sum(np.asarray(v).size for v in c.get_state()["structure"].values())
    assert floats == 4 * (1 + 13)  # the base and block 12's 13 levels


def test_refusals():
    with pytest.raises(InvalidInputError, match="horizon must be None"):
        UnboundedTreeCounter(8, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian'"):
        UnboundedTreeCounter(noise="laplace", epsilon=1.0)
    # secure: exact grid sums end at 2^52 grid steps, and the node weights are real
    with pytest.raises(InvalidInputError, match=r"noise must be 'gaussian' for an unbounded "
                       r"tree \(.*secure: float64 holds grid sums exactly only below 2\^52"):
        UnboundedTreeCounter(noise="secure", epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian'"):
        UnboundedTreeCounter(noise="secure_laplace", epsilon=1.0)
    c = UnboundedTreeCounter(noise_multiplier=1.0)
    for fn in (c.loss, c.max_variance):
        with pytest.raises(InvalidInputError, match="horizon must be an int"):
            fn()
    with pytest.raises(InvalidInputError, match="horizon must be an int"):
        BinaryTreeCounter(None, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="horizon must be an int unless thetas"):
        BltCounter(None, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="noise must not be secure"):
        BltCounter(None, thetas=THETAS, omegas=OMEGAS, noise="secure", epsilon=1.0,
                   delta=1e-5)
    blt = make("blt")
    with pytest.raises(InvalidInputError, match="horizon must be an int"):
        blt.loss()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.variance(2**50) > 0  # any step
