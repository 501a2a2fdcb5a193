"""RiverClassifier(fallback=True): the prior where the model is no better, one guarantee
(RiverRegressor's centre: test_river_centre.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.adapters.river import RiverClassifier
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners.trivial_fallback import WithTrivialFallback

PROBES = [{"a": 0.5, "b": -0.5}, {"a": -0.5, "b": 0.5}, {"a": 0.0, "b": 0.0}]


def _learn(model: RiverClassifier, n: int, *, signal: bool, seed: int = 1,
           classes: tuple | None = None) -> RiverClassifier:
    """n rows of two features; the label a > b (signal) or 10% True (none)."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        a, b = rng.normal(size=2) / 2
        label = bool(a > b) if signal else bool(rng.random() < 0.1)
        model.learn_one({"a": a, "b": b}, label if classes is None else classes[label])
    return model


def test_the_guarantee_is_the_target_with_the_fallback_share_inside():
    model = _learn(RiverClassifier(epsilon=1.0, horizon=300, seed=0, fallback=True), 300,
                   signal=True)
    assert isinstance(model.learner_, WithTrivialFallback)
    assert model.privacy.epsilon == pytest.approx(1.0, rel=1e-6)
    assert model.privacy.delta == pytest.approx(1e-5)
    names = [e.name for e in model.learner_.privacy_events()]
    assert names[-2:] == ["trivial fallback: prior", "trivial fallback: gate"]
    # the learner runs on its share only: 80% of mu^2 is below the whole epsilon
    assert model.learner_.learner.privacy.epsilon < 0.9


def test_a_closed_gate_predicts_the_private_prior_for_every_x():
    # epsilon 1 and 300 rows of 10% True that x does not explain: the prior's rate (about
    # -0.8) has the public std 2 z_p / sqrt(sum n_j^2) = 2 x 11.8 / 154.5 = 0.15 (blocks of
    # 1, ..., 128 rows and 45), so it is no coin flip; the model is no better than it, so
    # the gate (std sqrt(11.8^2 + 11.8^2) / 154.5 = 0.11) opens, below -1 std, with
    # probability at most 16%; seeded: the closed outcome is fixed
    model = _learn(RiverClassifier(epsilon=1.0, horizon=300, seed=0, fallback=True), 300,
                   signal=False)
    assert not model.learner_.uses_model
    prior = model.learner_.prior
    margin_p = 0.5 * (1.0 + min(1.0, max(-1.0, prior)))  # least squares: p = (1 + m) / 2
    for x in PROBES:
        assert model.predict_one(x) == (prior > 0)
        assert model.predict_proba_one(x)[True] == pytest.approx(margin_p, abs=1e-12)


def test_an_open_gate_predicts_with_the_model_as_the_learner_does():
    # epsilon = inf: no noise, the gate opens where the model's errors are below the
    # prior's, which a separable stream gives within its first blocks
    with pytest.warns(NonPrivateWarning):
        model = _learn(RiverClassifier(epsilon=math.inf, horizon=300, seed=0,
                                       fallback=True), 300, signal=True)
    assert model.learner_.uses_model and math.isinf(model.privacy.epsilon)
    inner = model.learner_.learner
    for x in PROBES:
        m = inner.predict_one(np.array([x["a"], x["b"]]))
        assert model.predict_proba_one(x)[True] == pytest.approx(
            0.5 * (1.0 + min(1.0, max(-1.0, m))), abs=1e-12)
    assert model.predict_one(PROBES[0]) and not model.predict_one(PROBES[1])


def test_k_classes_fall_back_to_the_majority_class():
    # 10% "b", 90% "a" and no signal at epsilon 1: the prior's rates (0.9 against 0.1)
    # have the noise std z_p sqrt(2) / sqrt(sum n_j^2) = 11.8 x 1.41 / 154.5 = 0.11 each,
    # so "a" leads by far more than the coin-flip margin (1 std of the difference, 0.15);
    # the gate stays closed as above (seeded)
    model = _learn(RiverClassifier(epsilon=1.0, horizon=300, seed=0, fallback=True,
                                   classes=("a", "b", "c")), 300, signal=False,
                   classes=("a", "b", "c"))
    assert not model.learner_.uses_model and model.learner_.prior.shape == (3,)
    assert {model.predict_one(x) for x in PROBES} == {"a"}
    assert sum(model.predict_proba_one(PROBES[0]).values()) == pytest.approx(1.0)


def test_bad_fallback_is_refused_at_construction():
    with pytest.raises(InvalidInputError,
                       match="fallback must be True, False or 'auto'; got 'yes'"):
        RiverClassifier(fallback="yes")


def test_the_fallback_needs_gaussian_replace_one_learners_and_says_so():
    model = RiverClassifier(fallback=True, learner_options={"neighbouring": "add_remove"})
    with pytest.raises(InvalidInputError, match="neighbouring must be 'replace_one'"):
        model.learn_one({"a": 0.1}, True)
    assert model.learner_ is None  # nothing half-built


def test_without_the_fallback_the_learner_runs_alone_on_the_whole_budget():
    off = _learn(RiverClassifier(epsilon=1.0, horizon=100, seed=0, fallback=False), 100,
                 signal=True)
    auto = _learn(RiverClassifier(epsilon=1.0, horizon=100, seed=0), 100, signal=True)
    assert not isinstance(off.learner_, WithTrivialFallback)
    assert off.learner_.epsilon == 1.0 and off.learner_.privacy.epsilon == 1.0
    # the default ("auto") wraps it, on the same whole guarantee
    assert isinstance(auto.learner_, WithTrivialFallback) and auto.learner_.learner.epsilon < 1
    assert auto.learner_.privacy.epsilon == pytest.approx(1.0, rel=1e-6)


def test_auto_runs_the_learner_alone_where_the_fallback_cannot_wrap_it():
    # add/remove neighbouring: the fallback would refuse it; "auto" gives the learner the
    # whole budget, as fallback=False does, bit for bit
    opts = {"neighbouring": "add_remove"}
    auto = _learn(RiverClassifier(epsilon=1.0, horizon=100, seed=0, learner_options=opts),
                  100, signal=True)
    off = _learn(RiverClassifier(epsilon=1.0, horizon=100, seed=0, learner_options=opts,
                                 fallback=False), 100, signal=True)
    assert not isinstance(auto.learner_, WithTrivialFallback)
    assert [auto.predict_proba_one(x) for x in PROBES] == [off.predict_proba_one(x)
                                                           for x in PROBES]


def test_river_clones_keep_the_fallback():
    # river.checks.check_estimator passes on the class (test_river_checks.py); what the new
    # parameter adds to it is that river's clone (its _get_params) carries it
    pytest.importorskip("river")
    model = RiverClassifier(fallback=True, seed=3)
    assert model._get_params()["fallback"] is True
    clone = _learn(model.clone(), 20, signal=True)
    assert isinstance(clone.learner_, WithTrivialFallback) and model.learner_ is None
