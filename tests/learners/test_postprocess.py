"""The post-processed model: averaged releases, shrinkage, clipped predictions.

Every figure the model gives must be a function of the released iterates (and public
constants) only: it is recomputed here from a ``Trace``'s releases, and with zero noise
it is the exact non-private average.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpol.adapters import make_learner
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners import OnlineLearner
from dpol.learners.postprocess import (
    ReleaseAverage,
    js_shrink,
    label_bound,
    release_weights,
)

#: registry learners that keep a linear model x . w (kernel regression predicts otherwise)
LINEAR = ["ridge", "pqftl", "igd", "giga", "ftal", "online_frank_wolfe",
          "incremental_regression", "incremental_erm", "pol"]
CLASSIFIERS = {"igd", "pol"}


def _stream(name: str, n: int = 120, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.3
    if name == "online_frank_wolfe":
        X = np.abs(X)  # its domain's oracle is the registry's; any rows do
    target = X @ np.linspace(0.6, -0.4, d) + 0.1
    y = np.sign(target) if name in CLASSIFIERS else np.clip(target, -1.0, 1.0)
    return X, y


def _build(name: str, n: int, epsilon: float = 1.0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return make_learner(name, 3, horizon=n, epsilon=epsilon, seed=7, **kw)


def _average_of(trace, weights: np.ndarray) -> np.ndarray:
    """sum a_s w_s / sum a_s over the releases after each step, recomputed by hand."""
    after = np.vstack([trace.weights[1:], trace.final_weights])
    return (weights[:, None] * after).sum(axis=0) / weights.sum()


@pytest.mark.parametrize("name", LINEAR)
def test_the_model_is_the_weighted_mean_of_the_trace_releases(name):
    X, y = _stream(name)
    m = _build(name, len(y))
    trace = m.run(X, y)
    steps = np.arange(1, len(y) + 1)
    a = m._release_weights(steps)
    if name == "pol":  # only its release at the horizon depends on the data
        assert a.tolist() == [0.0] * (len(y) - 1) + [1.0]
    else:
        assert a.tolist() == (steps.astype(float) ** 2).tolist()
    np.testing.assert_allclose(m.model_weights, _average_of(trace, a), rtol=1e-12, atol=1e-15)
    assert not np.array_equal(m.model_weights, m.weights) or name == "pol"
    # predict_one: the model (clipped for least squares); raw: the last release
    x = X[0] * 40.0
    bound = label_bound(m)
    expect = float(x @ m.model_weights)
    expect = expect if bound is None else min(bound, max(-bound, expect))
    assert m.predict_one(x) == pytest.approx(expect, rel=1e-12, abs=1e-15)
    assert m.predict_one(x, raw=True) == pytest.approx(float(x @ m.weights), rel=1e-12)
    assert (bound is None) == (name in CLASSIFIERS)


@pytest.mark.parametrize("name", ["ridge", "igd", "giga", "ftal"])
def test_zero_noise_gives_the_exact_non_private_average(name):
    X, y = _stream(name)
    twin = _build(name, len(y), epsilon=math.inf)
    trace = twin.run(X, y)
    # the releases are the clean iterates: recompute them with a fresh twin, step by step
    clean = _build(name, len(y), epsilon=math.inf)
    iterates = []
    for x, label in zip(X, y, strict=True):
        clean.learn_one(x, label)
        iterates.append(clean.weights)
    a = release_weights(np.arange(1, len(y) + 1))
    exact = (a[:, None] * np.array(iterates)).sum(axis=0) / a.sum()
    np.testing.assert_allclose(twin.model_weights, exact, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(trace.final_weights, iterates[-1])


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("name", ["ridge", "igd", "pol", "incremental_regression"])
def test_run_learn_one_slices_and_checkpoints_give_the_same_model(name, intercept):
    X, y = _stream(name, n=90)
    whole = _build(name, 90, fit_intercept=intercept)
    trace = whole.run(X, y)
    looped, preds = _build(name, 90, fit_intercept=intercept), []
    # some rows are out of bounds: learnt clipped, but predicted as given, as predict_one
    # does (a prediction spends no privacy)
    assert np.any(np.linalg.norm(X, axis=1) > 1.0)
    for x, label in zip(X, y, strict=True):
        preds.append(looped.predict_one(x))  # prequential: predicted before it is learned
        looped.learn_one(x, label)
    sliced = _build(name, 90, fit_intercept=intercept)
    sliced.run(X[:37], y[:37])
    restored = type(sliced).from_state(sliced.get_state())
    restored.run(X[37:], y[37:])
    # the same floating-point operations in the same order: the same model bit for bit
    for other in (looped, restored):
        np.testing.assert_array_equal(other.model_weights, whole.model_weights)
    np.testing.assert_allclose(trace.model_predictions, preds, rtol=1e-12, atol=1e-15)


def test_trace_model_predictions_are_clipped_like_predict_one():
    X, y = _stream("ridge", n=200)
    m = _build("ridge", 200, epsilon=0.05)  # loud noise: raw predictions leave [-1, 1]
    trace = m.run(X * 3.0, y)  # rows clipped to norm 1 inside
    assert np.abs(trace.model_predictions).max() <= 1.0
    assert trace.model_predictions.shape == trace.predictions.shape


def test_last_postprocessing_is_the_raw_release_with_clipped_predictions():
    X, y = _stream("pqftl")
    m = _build("pqftl", len(y), postprocess="last")
    trace = m.run(X, y)
    np.testing.assert_array_equal(m.model_weights, m.weights)
    raw = np.einsum("ij,ij->i", X, trace.weights)  # the rows as given (some out of bounds)
    assert not np.allclose(raw, trace.predictions)  # trace.predictions: the rows learnt
    np.testing.assert_allclose(trace.model_predictions, np.clip(raw, -1, 1),
                               rtol=1e-12, atol=1e-15)


def test_js_shrink_follows_its_formula_and_keeps_the_intercept_apart():
    rng = np.random.default_rng(3)
    w = rng.normal(size=6)
    v = 0.05
    p = 5
    out = js_shrink(w, v, intercept=5)
    factor = max(0.0, 1.0 - p * v / float(w[:5] @ w[:5]))
    np.testing.assert_allclose(out[:5], factor * w[:5], rtol=1e-13)
    assert out[5] == pytest.approx(w[5] * max(0.0, 1.0 - v / w[5] ** 2), rel=1e-13)
    np.testing.assert_array_equal(js_shrink(w, math.nan), w)  # no level stated: unchanged
    np.testing.assert_array_equal(js_shrink(w, 0.0), w)
    np.testing.assert_array_equal(js_shrink(np.zeros(3), 1.0), 0.0)


def test_shrinkage_sends_a_drowned_model_to_zero_and_leaves_a_clean_one():
    # GIGA at epsilon = 0.01 on 200 rows: release noise std ~lam/(t mu*) >> the ball, so
    # the average is noise; its public variance makes the James-Stein factor 0 or tiny
    X, y = _stream("giga", n=200)
    drowned = _build("giga", 200, epsilon=0.01, postprocess="shrink")
    drowned.run(X, y)
    avg = drowned._average.mean()
    assert np.linalg.norm(drowned.model_weights) < 0.25 * np.linalg.norm(avg)
    # the variance is the public one: sum a^2 v / (sum a)^2 from the stated noise levels
    steps = np.arange(1, 201)
    a, v = release_weights(steps), drowned._release_noise_variance(steps)
    assert drowned._average.variance == pytest.approx(np.sum(a * a * v) / a.sum() ** 2,
                                                      rel=1e-12)
    stds = np.array([drowned.noise_std(t) for t in steps])
    cap = drowned.domain.diameter ** 2 / drowned.dim
    np.testing.assert_allclose(v, np.minimum(stds ** 2, cap), rtol=1e-15)
    clean = _build("giga", 200, epsilon=math.inf, postprocess="shrink")
    clean.run(X, y)  # no noise: variance 0, no shrinkage
    np.testing.assert_array_equal(clean.model_weights, clean._average.mean())


def test_shrink_needs_a_learner_that_states_its_noise_level():
    with pytest.raises(InvalidInputError, match="postprocess must not be 'shrink' for ridge"):
        make_learner("ridge", 3, horizon=10, epsilon=1.0, postprocess="shrink")
    with pytest.raises(InvalidInputError, match="postprocess must be one of"):
        make_learner("igd", 3, horizon=10, epsilon=1.0, postprocess="median")
    pol = make_learner("pol", 3, horizon=10, epsilon=1.0, postprocess="shrink", seed=0)
    assert pol._release_noise_variance(np.array([9, 10]))[0] == 0.0  # data-independent
    assert pol._release_noise_variance(np.array([10]))[0] == pytest.approx(
        min(pol.beta ** 2, (2 * pol.x_star_norm) ** 2 / 3))


def test_release_average_add_and_extend_agree_bit_for_bit():
    rng = np.random.default_rng(5)
    W = rng.normal(size=(9, 4))  # releases before steps 1..8, then the one after step 8
    a, v, X = release_weights(np.arange(1, 9)), rng.random(8), rng.normal(size=(8, 4))
    one, block = ReleaseAverage(4), ReleaseAverage(4)
    preds = []
    for i in range(8):
        preds.append(X[i] @ one.mean(W[i]))
        one.add(W[i + 1], a[i], v[i])
    out = block.extend(W[:8], W[8], a, v, X)
    np.testing.assert_array_equal(block.total, one.total)
    assert (block.weight, block.noise) == (one.weight, one.noise)
    np.testing.assert_allclose(out, preds, rtol=1e-12)


def test_the_kernel_learner_keeps_its_own_model():
    m = make_learner("kernel", 2, horizon=20, epsilon=1.0, seed=0)
    looped = make_learner("kernel", 2, horizon=20, epsilon=1.0, seed=0)
    X = np.random.default_rng(0).normal(size=(20, 2)) * 0.3
    trace = m.run(X, X[:, 0])
    preds = []
    for x, label in zip(X, X[:, 0], strict=True):
        preds.append(looped.predict_one(x))
        looped.learn_one(x, label)
    np.testing.assert_allclose(trace.model_predictions, preds, rtol=1e-12, atol=1e-15)
    assert type(m).predict_one is not OnlineLearner.predict_one
