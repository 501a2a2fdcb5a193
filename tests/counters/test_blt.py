"""BltCounter against dense matrices, brute force and the square-root factorization.

The contract tests (tests/counters/test_counters.py and test_counters_stats.py) cover run vs
add, checkpoints, clipping, bad input and the statistical variance test; here: the
factorization itself, built independently as dense numpy matrices. The strategy's own
coefficients are test_blt_strategy.py, the optimizer test_blt_optimizer.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.linalg import toeplitz

from dpol.counters import BltCounter, ToeplitzCounter, make_counter
from dpol.counters.blt import blt_loss, optimal_blt_parameters
from dpol.counters.strategies import Participation
from dpol.counters.strategies._participation import brute_force_sensitivity_sq
from dpol.counters.strategies.blt_optimizer import _pattern_sensitivity_sq
from dpol.counters.strategies.blt_strategy import BLOCK_ROWS
from dpol.counters.strategies.blt_strategy import ROW_LOOP_DIM as _ROW_LOOP_DIM
from dpol.counters.strategies.blt_strategy import inverse_coefficients as _inverse_coefficients
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.noise.source import NoiseSource

from counter_cases import BLT_GIVEN, brute_force_sensitivity


def dense(thetas, omegas, horizon):
    """(A, G, C, B) as dense matrices, straight from the definitions."""
    thetas, omegas = np.asarray(thetas), np.asarray(omegas)
    k = np.arange(1, horizon)
    g = np.concatenate([[1.0], (omegas[:, None] * thetas[:, None] ** (k - 1)).sum(axis=0)])
    big_g = toeplitz(g, np.zeros(horizon))
    a = np.tril(np.ones((horizon, horizon)))
    return a, big_g, np.linalg.inv(big_g), a @ big_g


def cases(horizon):
    default = BltCounter(horizon, noise_multiplier=1.0)
    return [(default.thetas_, default.omegas_), *BLT_GIVEN]


@pytest.mark.parametrize("horizon", [2**10, 2**16, 2**20])
def test_loss_within_two_percent_of_square_root_toeplitz(horizon):
    # the reason for the default b = 5: the optimized BLT keeps the square-root figure
    # (10.71, 21.13, 30.02) to within 1.02x while storing O(b d) instead of O(T d)
    blt = BltCounter(horizon, noise_multiplier=1.0)
    sqrt = ToeplitzCounter(horizon, noise_multiplier=1.0).loss()
    assert blt.loss() <= 1.02 * sqrt
    # the closed form the optimizer minimizes is the counter's own figure (positive sums
    # of O(T) and O(log T) terms: relative rounding far below 1e-9)
    assert blt_loss(blt.thetas_, blt.omegas_, horizon) == pytest.approx(blt.loss(), rel=1e-9)
    # and 1.02x is a real constraint: four buffers miss it at 2^20 (1.031x)
    if horizon == 2**20:
        assert BltCounter(horizon, buffers=4, noise_multiplier=1.0).loss() > 1.02 * sqrt


@pytest.mark.parametrize("horizon", [1, 2, 5, 12, 40])
def test_dense_factorization_sensitivity_variance_and_encoder(horizon):
    # A = B C with B = A G and C = G^{-1}; sensitivity = Delta * max column norm of C;
    # variance(t) = ||row t of B||^2 * std^2. Entries are O(1) sums of <= 40 terms, and
    # inv() of a unit lower-triangular well-conditioned G is accurate to ~1e-14: 1e-10
    # leaves room without hiding any structural error (all of which are O(1e-3) or more)
    for thetas, omegas in cases(horizon):
        a, big_g, c, b = dense(thetas, omegas, horizon)
        np.testing.assert_allclose(b @ c, a, rtol=0, atol=1e-10)
        np.testing.assert_allclose(big_g @ c, np.eye(horizon), rtol=0, atol=1e-10)
        # C's coefficients, as the counter computes them without the dense inverse
        np.testing.assert_allclose(_inverse_coefficients(np.asarray(thetas),
                                   np.asarray(omegas), horizon), c[:, 0], rtol=1e-10)
        for relation, delta in (("replace_one", 2.0), ("add_remove", 1.0)):
            counter = BltCounter(horizon, noise_multiplier=0.7, neighbouring=relation,
                                 thetas=thetas, omegas=omegas)
            col = np.linalg.norm(c, axis=0).max()
            assert counter.sensitivity == pytest.approx(delta * col, rel=1e-10)
            rows = (b**2).sum(axis=1)
            var = counter.variance(np.arange(1, horizon + 1))
            np.testing.assert_allclose(var, rows * counter.noise_scale**2, rtol=1e-10)
            assert counter.noise_scale == pytest.approx(0.7 * delta * col, rel=1e-10)
            assert counter.loss() == pytest.approx(rows.max() * col**2, rel=1e-10)
        x = np.random.default_rng(horizon).normal(size=(horizon, 2))
        np.testing.assert_allclose(counter.node_values(x), c @ x, rtol=0, atol=1e-10)


@pytest.mark.parametrize("dim", [3, _ROW_LOOP_DIM])  # run: lfilter, then whole rows
@pytest.mark.parametrize("mode", ["add", "run", "pieces"])
def test_streaming_buffers_reproduce_dense_noise(mode, dim):
    # zero data: the release is A G z for the counter's own draws z (NoiseSource with the
    # same seed and scale gives the same rows). Noise of std ~ 2 ||C e_1|| ~ 4 summed over
    # <= 60 steps: 1e-11 absolute is ~1e4 ulps of the largest entry.
    horizon = 60
    for thetas, omegas in cases(horizon):
        counter = BltCounter(horizon, dim, noise_multiplier=1.0, thetas=thetas,
                             omegas=omegas, seed=5)
        z = NoiseSource("gaussian", dim, counter.noise_scale, seed=5).draw(horizon)
        a, big_g, _, _ = dense(thetas, omegas, horizon)
        zeros = np.zeros((horizon, dim))
        if mode == "add":
            got = np.stack([counter.add(row) for row in zeros])
        elif mode == "run":
            got = counter.run(zeros)
        else:
            got = np.vstack([counter.run(zeros[:7]), counter.add(zeros[7]),
                             counter.run(zeros[8:])])
        np.testing.assert_allclose(got, a @ big_g @ z, rtol=0, atol=1e-11)
        np.testing.assert_allclose(np.diff(got, axis=0), (big_g @ z)[1:], rtol=0, atol=1e-11)


def test_adds_and_runs_cut_anywhere_give_the_bits_of_one_run():
    # the noise comes in blocks of BLOCK_ROWS steps; a block cut between two calls (add
    # is a call of one step) keeps its draws in the state (through a checkpoint too) and
    # is computed whole then (row t of a block sees draws up to t only): the same bits,
    # not equal to rounding
    rng = np.random.default_rng(1)
    values = rng.normal(size=(300, 3)) / 4
    one = BltCounter(300, 3, epsilon=1.0, delta=1e-6, seed=2).run(values)
    counter = BltCounter(300, 3, epsilon=1.0, delta=1e-6, seed=2)
    got = [counter.run(values[:BLOCK_ROWS + 5])]  # one block and 5 steps of the next
    counter = type(counter).from_state(counter.get_state())
    got += [counter.add(v)[None, :] for v in values[BLOCK_ROWS + 5:BLOCK_ROWS + 40]]
    for lo, hi in ((BLOCK_ROWS + 40, BLOCK_ROWS + 42), (BLOCK_ROWS + 42, 200), (200, 300)):
        got.append(counter.run(values[lo:hi]))
    assert np.array_equal(np.vstack(got), one)


def test_wide_run_is_the_add_loop_bit_for_bit():
    # from _ROW_LOOP_DIM on, run performs add's operations in add's order on whole rows
    rng = np.random.default_rng(4)
    values = rng.normal(size=(40, _ROW_LOOP_DIM)) / math.sqrt(_ROW_LOOP_DIM)
    loop, pieces = (BltCounter(64, _ROW_LOOP_DIM, epsilon=1.0, delta=1e-6, seed=9)
                    for _ in range(2))
    expected = np.stack([loop.add(v) for v in values])
    got = np.vstack([pieces.run(values[:13]), pieces.add(values[13]), pieces.run(values[14:])])
    assert np.array_equal(got, expected)
    assert np.array_equal(pieces.add(values[0]), loop.add(values[0]))  # same state after


def test_zero_noise_is_exact_cumsum_with_given_parameters():
    v = np.random.default_rng(3).uniform(-0.5, 0.5, size=(30, 2))
    for thetas, omegas in BLT_GIVEN:
        with pytest.warns(NonPrivateWarning):
            counter = BltCounter(30, 2, noise_multiplier=0.0, thetas=thetas, omegas=omegas)
        assert np.array_equal(counter.run(v[:11]), np.cumsum(v, axis=0)[:11])
        assert np.array_equal(np.stack([counter.add(row) for row in v[11:]]),
                              np.cumsum(v, axis=0)[11:])


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_bruteforce_sensitivity(horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change (replace: any other value;
    # add/remove: set to 0), the encoder C x moves by at most -- and for the first element
    # exactly -- the declared sensitivity Delta ||C e_1||
    for thetas, omegas in cases(horizon):
        counter = BltCounter(horizon, noise_multiplier=1.0, neighbouring=neighbouring,
                             thetas=thetas, omegas=omegas)
        best = brute_force_sensitivity(counter, horizon, neighbouring)
        assert best == pytest.approx(counter.sensitivity, rel=1e-12)


def test_given_parameters_are_used_exposed_and_checkpointed():
    thetas, omegas = BLT_GIVEN[1]
    counter = BltCounter(20, 2, noise_multiplier=1.0, thetas=thetas, omegas=omegas, seed=1)
    assert counter.thetas_.tolist() == thetas and counter.omegas_.tolist() == omegas
    with pytest.raises(ValueError):
        counter.thetas_[0] = 0.5  # read-only: the structure was derived from them
    counter.run(np.full((7, 2), 0.1))
    clone = BltCounter.from_state(counter.get_state())
    assert clone.thetas_.tolist() == thetas
    assert np.array_equal(clone.run(np.zeros((13, 2))), counter.run(np.zeros((13, 2))))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"thetas": [0.5]}, "thetas / omegas must be given both or neither"),
        ({"thetas": [0.0], "omegas": [-0.1]}, r"thetas must lie in the open interval \(0, 1\)"),
        ({"thetas": [1.0], "omegas": [-0.1]}, r"thetas must lie in the open interval \(0, 1\)"),
        ({"thetas": [np.nan], "omegas": [-0.1]}, "thetas must contain only finite values"),
        ({"thetas": [], "omegas": []}, "thetas must be a non-empty 1-d array"),
        ({"thetas": [[0.5]], "omegas": [[-0.1]]}, "thetas must be a non-empty 1-d array"),
        ({"thetas": [0.5, 0.9], "omegas": [-0.1]}, r"omegas must have the shape of thetas"),
        ({"thetas": [0.5], "omegas": [0.1]}, "omegas must be < 0"),
        ({"thetas": [0.5], "omegas": ["a"]}, "omegas must have a real numeric dtype"),
        ({"thetas": [0.5], "omegas": [-0.5]}, r"omegas must satisfy sum\(-omegas"),
        ({"thetas": [0.5, 0.9], "omegas": [-0.3, -0.05]}, r"omegas must satisfy sum"),
        ({"thetas": [0.5], "omegas": [-0.1], "buffers": 2}, "buffers must equal len"),
        ({"buffers": 0}, "buffers must be an integer >= 1"),
        ({"buffers": 2.5}, "buffers must be an integer"),
        ({"noise": "laplace"}, "noise must be 'gaussian'"),
        ({"noise": "gamma"}, "noise must be 'gaussian'"),
    ],
)
def test_bad_parameters_are_refused_naming_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        BltCounter(8, noise_multiplier=1.0, **kwargs)


def test_stability_rule_is_the_boundary():
    # just inside the rule (sum s = 0.999) is accepted; at the rule (sum s = 1) it is not
    thetas = [0.5, 0.9]
    BltCounter(16, noise_multiplier=1.0, thetas=thetas, omegas=[-0.2495, -0.05])
    with pytest.raises(InvalidInputError, match="omegas must satisfy"):
        BltCounter(16, noise_multiplier=1.0, thetas=thetas, omegas=[-0.25, -0.05])
    with pytest.raises(InvalidInputError, match="calibration must be 'tight': BltCounter"):
        BltCounter(8, epsilon=1.0, delta=1e-5, calibration="paper")
    with pytest.raises(InvalidInputError, match="horizon must be an integer >= 1"):
        optimal_blt_parameters(0)


def test_registry_builds_blt_with_calibrated_privacy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counter = make_counter("blt", 64, 3, epsilon=1.0, delta=1e-5, seed=0)
    assert isinstance(counter, BltCounter)
    assert counter.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
    # std = z * Delta ||C e_1|| with the same z as any other counter at (1, 1e-5)
    probe = ToeplitzCounter(64, epsilon=1.0, delta=1e-5)
    z_blt = counter.noise_scale / counter.sensitivity
    assert z_blt == pytest.approx(probe.noise_scale / probe.sensitivity, rel=1e-12)
    assert counter.sensitivity == pytest.approx(2.0 * math.sqrt(counter.strategy.column_norm_sq()))


@pytest.mark.parametrize("horizon", [64, 777, 2**16])
def test_mean_objective_lowers_the_mean_loss_below_the_square_root(horizon):
    mean = BltCounter(horizon, noise_multiplier=1.0, objective="mean")
    default = BltCounter(horizon, noise_multiplier=1.0)
    sqrt = ToeplitzCounter(horizon, noise_multiplier=1.0).strategy.loss("mean")
    # the closed form (doubling of the weighted geometric sums) is the strategy's own figure
    closed = blt_loss(mean.thetas_, mean.omegas_, horizon, "mean")
    assert closed == pytest.approx(mean.strategy.loss("mean"), rel=1e-9)
    assert mean.strategy.loss("mean") < min(sqrt, default.strategy.loss("mean"))
    assert mean.loss() > default.loss()  # it trades the worst step for the average
    assert not np.array_equal(mean.thetas_, default.thetas_)


def test_mean_objective_checkpoints_and_is_refused_with_given_parameters():
    counter = BltCounter(30, 2, noise_multiplier=1.0, objective="mean", seed=3)
    counter.run(np.full((11, 2), 0.2))
    clone = BltCounter.from_state(counter.get_state())
    assert np.array_equal(clone.thetas_, counter.thetas_)
    assert np.array_equal(clone.run(np.zeros((19, 2))), counter.run(np.zeros((19, 2))))
    with pytest.raises(InvalidInputError, match="objective must be left unset"):
        BltCounter(8, noise_multiplier=1.0, thetas=[0.5], omegas=[-0.1], objective="mean")
    with pytest.raises(InvalidInputError, match="objective must be one of"):
        BltCounter(8, noise_multiplier=1.0, objective="median")


@pytest.mark.parametrize(("horizon", "k", "b", "objective"), [
    (8, 2, 4, "max"), (9, 3, 3, "mean"), (11, 2, 5, "max")])
def test_participation_optimised_blt_is_exact_and_beats_the_single_pass(horizon, k, b,
                                                                         objective):
    # two buffers keep the optimiser cheap; the figure is the enumeration of every
    # pattern of the optimised encoder (to rounding of sums of <= 11 positive terms)
    p = Participation(k, b)
    tuned = BltCounter(horizon, noise_multiplier=1.0, buffers=2, objective=objective,
                       participation=p)
    single = BltCounter(horizon, noise_multiplier=1.0, buffers=2, objective=objective)
    encoder = tuned.node_values(np.eye(horizon))
    figure = tuned.strategy.column_norm_sq(p)
    assert figure == pytest.approx(brute_force_sensitivity_sq(encoder, p), rel=1e-12)
    assert _pattern_sensitivity_sq(tuned.thetas_, tuned.omegas_, horizon, k, b) \
        == pytest.approx(figure, rel=1e-12)
    assert tuned.loss(objective) <= single.strategy.loss(objective, p) * (1 + 1e-12)
    # the same counter without participation keeps the single-pass buffers
    assert np.array_equal(single.thetas_, BltCounter(horizon, noise_multiplier=1.0, buffers=2,
                                                     objective=objective,
                                                     participation=(1, b)).thetas_)
