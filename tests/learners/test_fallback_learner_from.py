"""WithTrivialFallback(learner_from=R): the rows before R go to the prior alone on the
whole budget; the learner, the gate and the trace after them, privacy and bits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fallback_cases import inner as _inner
from fallback_cases import stream as _stream

from dpol.errors import HorizonExceededError, InvalidInputError
from dpol.learners import PrivateKernelRegression
from dpol.learners.trivial_fallback import WithTrivialFallback


def _wrapped(learner_from, z_prior=2.0, z_gate=3.0, seed=2, **kw):
    return WithTrivialFallback(_inner(**kw), prior_multiplier=z_prior,
                               gate_multiplier=z_gate, seed=seed, learner_from=learner_from)


@pytest.mark.parametrize("outputs", [1, 3])
def test_run_gives_the_learn_one_loop_and_a_trace_of_every_row(outputs):
    X, y = _stream(outputs=outputs)
    kw = {} if outputs == 1 else {"outputs": outputs}
    a, b = _wrapped(31, **kw), _wrapped(31, **kw)
    trace = a.run(X[:100], y[:100])  # two calls: the second starts past the idle rows
    trace2 = a.run(X[100:], y[100:])
    loop = []
    for x, label in zip(X, y, strict=True):
        loop.append(b.predict_one(x))
        b.learn_one(x, label)
    gated = np.concatenate([trace.model_predictions, trace2.model_predictions])
    assert np.allclose(gated, np.array(loop), atol=1e-9)
    for (n_a, p_a, e_a), (n_b, p_b, e_b) in zip(a.releases_, b.releases_, strict=True):
        assert n_a == n_b and np.allclose(p_a, p_b)
        np.testing.assert_allclose(e_a, e_b)
    # the learner learnt the 269 rows after row 31; the trace covers all 300
    assert a.learner.t_ == b.learner.t_ == 269 and a.t_ == b.t_ == 300
    assert len(trace.losses) == len(trace.weights) == len(trace.predictions) == 100
    assert np.all(trace.weights[:31] == 0.0) and np.all(trace.predictions[:31] == 0.0)
    # blocks of 1..16 rows end by row 31: no gate there; the gate starts after row 75
    assert [bool(np.isnan(e)) for _, _, e in a.releases_] == [True] * 6 + [False] * 3


@pytest.mark.filterwarnings("ignore::dpol.errors.NonPrivateWarning")
def test_an_idle_row_moves_its_block_sum_alone():
    # Brute force on a 15-row stream, learner_from 7, without noise: replacing any row
    # before row 7 by any other (x and label) changes its idle block's label sum by at
    # most 2 (2 L, L = 1) and nothing else: the learner's iterates and every later
    # release are those of the unchanged stream (it costs one Gaussian release).
    X, y = _stream(n=15)
    rng = np.random.default_rng(5)

    def ran(Xs, ys):
        m = WithTrivialFallback(_inner(horizon=15, epsilon=math.inf), prior_multiplier=0.0,
                                gate_multiplier=0.0, seed=0, learner_from=7)
        return m, m.run(Xs, ys)

    base, trace = ran(X, y)
    for t in range(7):
        for label in (-1.0, 1.0):
            X2, y2 = X.copy(), y.copy()
            X2[t], y2[t] = rng.normal(size=3), label
            other, trace2 = ran(X2, y2)
            np.testing.assert_array_equal(trace2.weights[7:], trace.weights[7:])
            diffs = [abs(float(a[1]) - float(b[1]))
                     for a, b in zip(base.releases_, other.releases_, strict=True)]
            changed = [i for i, d in enumerate(diffs) if d > 0]
            assert max(diffs) <= 2.0 and len(changed) <= 1
            assert all(sum(n for n, _, _ in base.releases_[:i + 1]) <= 7 for i in changed)
            np.testing.assert_array_equal([e for _, _, e in other.releases_],
                                          [e for _, _, e in base.releases_])


@pytest.mark.filterwarnings("ignore::dpol.errors.NonPrivateWarning")
def test_without_noise_the_learner_is_the_one_fitted_on_the_later_rows():
    X, y = _stream(n=120)
    m = WithTrivialFallback(_inner(horizon=120, epsilon=math.inf), prior_multiplier=0.0,
                            gate_multiplier=0.0, seed=0, learner_from=15)
    m.run(X, y)
    alone = _inner(horizon=120, epsilon=math.inf)
    alone.run(X[15:], y[15:])
    np.testing.assert_array_equal(m.learner.weights, alone.weights)
    assert m.prior == pytest.approx(np.sum([n * s for n, s, _ in m.releases_])
                                    / np.sum([n * n for n, _, _ in m.releases_]))


def test_a_checkpoint_among_the_idle_rows_continues_as_the_whole_run():
    X, y = _stream(n=200)
    whole = _wrapped(31, horizon=200)
    whole.run(X, y)
    cut = _wrapped(31, horizon=200)
    for x, label in zip(X[:20], y[:20], strict=True):
        cut.learn_one(x, label)
    restored = WithTrivialFallback.from_state(cut.get_state())
    assert restored.t_ == 20 and restored.learner.t_ == 0
    restored.run(X[20:], y[20:])
    np.testing.assert_array_equal(restored.learner.weights, whole.learner.weights)
    for (n_a, p_a, e_a), (n_b, p_b, e_b) in zip(restored.releases_, whole.releases_,
                                                strict=True):
        assert n_a == n_b and p_a == p_b
        np.testing.assert_equal(e_a, e_b)


def test_bad_input_is_refused_and_changes_nothing():
    with pytest.raises(InvalidInputError, match="learner_from must be below"):
        _wrapped(300)
    with pytest.raises(InvalidInputError, match="learner_from must be an integer >= 0"):
        _wrapped(-1)
    kernel = PrivateKernelRegression(2, horizon=50, epsilon=1.0, seed=0)
    with pytest.raises(InvalidInputError, match="learner_from must be 0 for a learner"):
        WithTrivialFallback(kernel, prior_multiplier=1.0, gate_multiplier=1.0,
                            learner_from=7)
    # the horizon is the wrapper's: the learner, fed fewer rows, has room left
    X, y = _stream(n=40)
    m = _wrapped(7, horizon=40)
    m.run(X, y)
    with pytest.raises(HorizonExceededError, match="exceed horizon=40"):
        m.learn_one(X[0], 1.0)
    with pytest.raises(HorizonExceededError, match="exceed horizon=40"):
        m.run(X[:1], y[:1])
    assert m.t_ == 40 and m.learner.t_ == 33 and len(m.releases_) == 6


@pytest.mark.parametrize("cut", [5, 10, 40])
def test_a_start_inside_a_gated_block_gives_the_loop_in_any_chunks(cut):
    # learner_from 10 is no block end and the gate counts every block (gate_from 0): the
    # block of rows 8-15 counts the unlearnt model's errors on rows 8-10 (their rows cost
    # the prior's and the gate's mu^2 alone, less than a row may). Chunks of run, ending
    # inside the idle rows, at their end or after, give the learn_one loop's releases.
    X, y = _stream(n=120)
    kw = {"gate_from": 0}
    a = WithTrivialFallback(_inner(horizon=120), prior_multiplier=2.0, gate_multiplier=3.0,
                            seed=2, learner_from=10, **kw)
    b = WithTrivialFallback(_inner(horizon=120), prior_multiplier=2.0, gate_multiplier=3.0,
                            seed=2, learner_from=10, **kw)
    gated = np.concatenate([a.run(X[:cut], y[:cut]).model_predictions,
                            a.run(X[cut:], y[cut:]).model_predictions])
    loop = []
    for x, label in zip(X, y, strict=True):
        loop.append(b.predict_one(x))
        b.learn_one(x, label)
    np.testing.assert_allclose(gated, loop, atol=1e-9)
    for (n_a, p_a, e_a), (n_b, p_b, e_b) in zip(a.releases_, b.releases_, strict=True):
        assert n_a == n_b and p_a == pytest.approx(p_b)
        np.testing.assert_allclose(e_a, e_b)
    assert not np.isnan(a.releases_[3][2])  # rows 8-15: counted by the gate
