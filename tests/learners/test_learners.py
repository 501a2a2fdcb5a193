"""Contract tests run over every learner (tests/learner_cases.py): the shared machinery of
dpol.learners._base (run, checkpoints, seeds, refusals, horizon, the non-private twin,
the trace's regret) through each of them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from learner_cases import DIM, LEARNERS, loop, make, stream

from dpol.errors import HorizonExceededError, InvalidInputError, NonPrivateWarning
from dpol.learners._wrapper import LearnerWrapper
from dpol.learners.random_features import WithRandomFeatures

ALL = sorted(LEARNERS)
T = 60


@pytest.mark.parametrize("name", ALL)
def test_run_equals_learn_one_loop(name):
    # same seed, same stream: identical released iterates and final model
    X, y = stream(name, T)
    a, b = make(name, T, seed=4), make(name, T, seed=4)
    given = X.copy(), y.copy()
    trace = a.run(X, y)
    # run clips its own copy in place: the caller's rows over the bound stay as given
    assert np.array_equal(X, given[0]) and np.array_equal(y, given[1])
    looped = loop(b, X, y)
    np.testing.assert_allclose(trace.weights, looped, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.final_weights, b.weights, rtol=1e-12, atol=1e-14)
    assert a.n_clipped_ == b.n_clipped_
    # the stream has rows over the bounds (random features clip no row: phi has norm 1)
    assert a.n_clipped_ > 0 or isinstance(a, WithRandomFeatures)
    assert trace.privacy == b.privacy


@pytest.mark.parametrize("name", ALL)
def test_checkpoint_mid_stream_continues_identically(name):
    X, y = stream(name, T, seed=1)
    ref = make(name, T, seed=8)
    full = ref.run(X, y).weights
    a = make(name, T, seed=8)
    a.run(X[:23], y[:23])
    restored = type(a).from_state(a.get_state())
    pickled = pickle.loads(pickle.dumps(a))
    rest = a.run(X[23:], y[23:]).weights
    np.testing.assert_allclose(rest, full[23:], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(restored.run(X[23:], y[23:]).weights, rest, rtol=0, atol=0)
    np.testing.assert_allclose(loop(pickled, X[23:], y[23:]), rest, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ALL)
def test_a_generator_seed_keeps_its_bit_generator(name):
    # seed=Generator(SFC64(s)) (the faster normals of docs/benchmarks/performance.md):
    # run still equals the learn_one loop, and the draws are SFC64's, not PCG64's
    X, y = stream(name, T, seed=2)

    def sfc():
        return np.random.Generator(np.random.SFC64(4))

    a, b = make(name, T, seed=sfc()), make(name, T, seed=sfc())
    trace = a.run(X, y)
    np.testing.assert_allclose(trace.weights, loop(b, X, y), rtol=1e-12, atol=1e-14)
    pcg = make(name, T, seed=np.random.Generator(np.random.PCG64(4))).run(X, y)
    assert not np.allclose(trace.final_weights, pcg.final_weights)


@pytest.mark.parametrize("name", ALL)
def test_different_seeds_give_different_noise(name):
    if name == "pol":
        pytest.skip("POL releases one noisy point, at the end only")
    X, y = stream(name, T)
    a = make(name, T, seed=1).run(X, y).weights
    b = make(name, T, seed=2).run(X, y).weights
    assert not np.allclose(a, b)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [[np.nan, 0, 0], [0, np.inf, 0], [1.0, 2.0], "abc", None,
                                 [[1, 2, 3]]])
def test_bad_features_raise_and_consume_nothing(name, bad):
    X, y = stream(name, 10)
    learner = make(name, 10, seed=3)
    learner.learn_one(X[0], y[0])
    state = pickle.dumps(learner)
    with pytest.raises(InvalidInputError, match=r"^x must .*; got "):
        learner.learn_one(bad, y[1])
    with pytest.raises(InvalidInputError, match=r"^y must .*; got "):
        learner.learn_one(X[1], float("nan"))
    assert pickle.dumps(learner) == state  # nothing consumed


@pytest.mark.parametrize("name", ALL)
def test_bad_blocks_raise_and_consume_nothing(name):
    X, y = stream(name, 10)
    learner = make(name, 10, seed=3)
    state = pickle.dumps(learner)
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(InvalidInputError, match="X must contain only finite values"):
        learner.run(bad, y)
    with pytest.raises(InvalidInputError, match=r"y must have shape \(10,\)"):
        learner.run(X, y[:-1])
    # the comparator is in the learner's coordinates (a feature wrapper's: its learner's)
    dim = learner.weights.size if isinstance(learner, LearnerWrapper) else DIM
    with pytest.raises(InvalidInputError, match=rf"comparator must have shape \({dim},\)"):
        learner.run(X, y, comparator=[1.0])
    with pytest.raises(HorizonExceededError):
        learner.run(np.vstack([X, X]), np.concatenate([y, y]))
    assert pickle.dumps(learner) == state


@pytest.mark.parametrize("name", ALL)
def test_horizon_is_enforced(name):
    X, y = stream(name, 5)
    learner = make(name, 5)
    learner.run(X, y)
    with pytest.raises(HorizonExceededError):
        learner.learn_one(X[0], y[0])
    assert learner.t == 5


@pytest.mark.parametrize("name", ALL)
def test_infinite_epsilon_is_the_non_private_twin_and_warns(name):
    factory, _ = LEARNERS[name]
    with pytest.warns(NonPrivateWarning):
        learner = factory(T, epsilon=float("inf"), delta=0.0, seed=0)
    assert not learner.privacy.is_private
    X, y = stream(name, T)
    twin = make(name, T, epsilon=float("inf"), seed=99).run(X, y).weights
    np.testing.assert_array_equal(learner.run(X, y).weights, twin)  # no randomness left


@pytest.mark.parametrize("name", ALL)
def test_trace_regret_is_cumulative_loss_difference(name):
    X, y = stream(name, T)
    learner = make(name, T)
    # in the learner's coordinates (a feature wrapper's: its learner's)
    u = np.full(learner.weights.size if isinstance(learner, LearnerWrapper) else DIM, 0.1)
    trace = learner.run(X, y, comparator=u)
    mine = make(name, T)._loss_value  # the learner's own loss, regulariser included
    # the rows as learnt (a feature wrapper's _loss_value maps and clips them itself)
    Xc, yc, _ = learner._clip(X, y) if not isinstance(learner, LearnerWrapper) else \
        (X, np.clip(y, -learner.y_bound, learner.y_bound), 0)
    expected = np.cumsum(trace.losses - mine(u, Xc, yc))
    np.testing.assert_allclose(trace.regret, expected, rtol=1e-12)
    np.testing.assert_allclose(trace.average_regret, expected / np.arange(1, T + 1))
