"""OnlineClassifier(fallback=True): the prior where the model is no better, one guarantee."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.accounting.closed_forms import mu_star
from dpol.adapters import OnlineClassifier
from dpol.adapters import _fallback as fallback_module
from dpol.errors import InvalidInputError, NonPrivateWarning, PriorOnlyWarning
from dpol.learners._fallback_budget import LONG_THRESHOLD
from dpol.learners.trivial_fallback import SIGNIFICANCE, THRESHOLD, WithTrivialFallback


def _noise_labels(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)) / 4, np.where(rng.random(n) < 0.9, "a", "b")


def test_a_drowned_model_falls_back_to_the_majority_class_within_the_same_budget():
    X, y = _noise_labels()
    clf = OnlineClassifier(epsilon=0.1, random_state=0, fallback=True).fit(X, y)
    assert isinstance(clf.learner_, WithTrivialFallback) and not clf.learner_.uses_model
    assert np.all(clf.predict(X) == "a") and np.all(clf.coef_ == 0.0)
    assert clf.intercept_ == clf.learner_.prior < 0  # "a" is the -1 class
    assert clf.privacy_.epsilon == pytest.approx(0.1, rel=1e-6)
    plain = OnlineClassifier(epsilon=0.1, random_state=0, fallback=False).fit(X, y)
    assert clf.score(X, y) > plain.score(X, y)  # here the plain model loses to the prior
    # the default ("auto") is the fallback for this learner: the same fit, bit for bit
    auto = OnlineClassifier(epsilon=0.1, random_state=0).fit(X, y)
    assert isinstance(auto.learner_, WithTrivialFallback)
    np.testing.assert_array_equal(auto.decision_function(X), clf.decision_function(X))


def test_a_good_model_is_kept_and_predicts_as_its_learner_does():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 4
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = OnlineClassifier(epsilon=1.0, random_state=0, fallback=True).fit(X, y)
    # 58% "a": the centred model beats the prior (measured 0.77; the centred classifier
    # alone 0.80, so the gate costs little here), and predicts b + its margin
    assert clf.learner_.uses_model and clf.score(X, y) > 0.7
    margins = np.array([clf.learner_.predict_one(x) for x in X[:20]])
    np.testing.assert_allclose(clf.decision_function(X[:20]), margins, atol=1e-12)


def test_bad_fallback_is_refused_and_nothing_is_fitted():
    X, y = _noise_labels(n=50)
    clf = OnlineClassifier(fallback="yes")
    with pytest.raises(InvalidInputError, match="fallback must be True, False or 'auto'"):
        clf.fit(X, y)
    assert not hasattr(clf, "learner_") and not hasattr(clf, "prep_")


def test_a_kernel_model_behind_the_fallback_predicts_row_by_row():
    # the kernel learner predicts with its own predict_one, not x . w: the estimator's
    # margins must be the wrapper's predict_one of each row
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 2)) / 4
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = OnlineClassifier(learner="kernel", epsilon=4.0, random_state=0, fallback=True)
    clf.fit(X, y)
    assert clf.learner_.uses_model
    np.testing.assert_allclose(clf.decision_function(X[:5]),
                               [clf.learner_.predict_one(x) for x in X[:5]], atol=1e-12)


def test_the_non_private_twin_runs_with_the_fallback():
    # epsilon = inf: no noise in the prior or the gate, the guarantee the learner's
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2)) / 4
    y = np.where(X[:, 0] > 0, "a", "b")
    with pytest.warns(NonPrivateWarning):
        clf = OnlineClassifier(epsilon=np.inf, random_state=0, fallback=True).fit(X, y)
    assert clf.learner_.uses_model and np.isinf(clf.privacy_.epsilon)
    assert clf.learner_.prior_multiplier == clf.learner_.gate_multiplier == 0.0


def test_a_centred_classifier_falls_back_to_its_prior_and_predicts_the_classes_judged():
    # centred on its released class prior b, the learner fits y - b; the gate judges the
    # classes of m + b, which the estimator predicts. Noise labels (90% "a"): the
    # estimator predicts "a" everywhere, by the prior (intercept_ = its margin, coef_ 0)
    # or by the centred model, whose drowned margin never outweighs b: it then beats the
    # fallback's own prior (2,000 rows at 0.1 are short: 0.54 of the budget) where that
    # one's early blocks point the wrong way, and the gate rightly opens (seeds 10 and 11
    # here; 0-9 keep the prior); a clean boundary: the model is chosen and predicts b +
    # its margin
    X, y = _noise_labels()
    chosen = set()
    for seed in range(12):
        clf = OnlineClassifier(epsilon=0.1, random_state=seed, fallback=True,
                               centre_budget=0.1).fit(X, y)
        fallback = clf.learner_
        assert fallback.offset == clf.prep_.centre.value != 0.0
        assert np.all(clf.predict(X) == "a")
        if not fallback.uses_model:
            assert np.all(clf.coef_ == 0.0) and clf.intercept_ == pytest.approx(fallback.prior)
        chosen.add(fallback.uses_model)
        assert clf.privacy_.epsilon == pytest.approx(0.1, rel=1e-6)
    assert chosen == {True, False}
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 4
    y = np.where(X[:, 0] > 0.05, "b", "a")
    clf = OnlineClassifier(epsilon=1.0, random_state=0, fallback=True,
                           centre_budget=0.1).fit(X, y)
    b = clf.prep_.centre.value
    # 58% "a": the centred model beats the prior (measured 0.77; the centred classifier
    # alone 0.80, so the gate costs little here), and predicts b + its margin
    assert clf.learner_.uses_model and clf.score(X, y) > 0.7
    inner = np.array([clf.learner_.learner.predict_one(x) for x in clf.prep_.transform(X[:20])])
    np.testing.assert_allclose(clf.decision_function(X[:20]), np.clip(inner + b, -1, 1),
                               atol=1e-12)
    assert clf.privacy_.epsilon == pytest.approx(1.0, rel=1e-6)




def _shares(fallback: WithTrivialFallback, epsilon: float, delta: float) -> tuple:
    """The prior's and the gate's shares of mu*^2, read off their noise multipliers."""
    mu = mu_star(epsilon, delta)
    return tuple(round(1.0 / (z * mu) ** 2, 9) for z in (fallback.prior_multiplier,
                                                          fallback.gate_multiplier))


def test_the_split_follows_the_public_plan_two_classes_short_or_long_k_classes_never():
    # fallback_plan reads epsilon, delta, the horizon and the classes: a short two-class
    # stream (300 rows at epsilon 1) gives the prior 0.5 and the gate alone the choice;
    # 2,000 rows the default 0.2 and the coin-flip rule; three classes on 300 rows, asked
    # for the fallback (fallback=True: "auto" leaves them to the learner alone), the
    # default too. Each composes to the stated epsilon exactly.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 3)) / 4
    binary, three = np.where(X[:, 0] > 0, "a", "b"), np.array(["a", "b", "c"])[
        np.argmax(X, axis=1)]
    # The gate's threshold: one std on the short stream, 0 (LONG_THRESHOLD) elsewhere.
    for n, y, shares, significance, threshold in (
            (300, binary, (0.5, 0.1), 0.0, THRESHOLD),
            (2000, binary, (0.2, 0.1), SIGNIFICANCE, LONG_THRESHOLD),
            (300, three, (0.2, 0.1), SIGNIFICANCE, LONG_THRESHOLD)):
        clf = OnlineClassifier(epsilon=1.0, delta=1e-5, random_state=0,
                               fallback=True if y is three else "auto").fit(X[:n], y[:n])
        fallback = clf.learner_
        assert _shares(fallback, 1.0, 1e-5) == shares, n
        assert fallback.significance == significance
        assert fallback.threshold == threshold
        assert clf.privacy_.epsilon == pytest.approx(1.0, rel=1e-6)


def test_a_stream_too_short_for_the_gate_is_left_to_the_prior_and_says_so():
    # 600 two-class rows at epsilon 0.1: the gate could not tell error rates apart to
    # within 0.40 (> PRIOR_ONLY_RESOLUTION): the prior takes 90%, the gate 5% and never
    # opens, so the prior predicts every row, even where the model is good (a clean
    # plane here); the whole still composes to epsilon, fallback=False learns as before,
    # without the warning, and three classes are left to their prior as two are
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 3)) / 4
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = OnlineClassifier(epsilon=0.1, delta=1e-5, random_state=0)
    with pytest.warns(PriorOnlyWarning, match=r"at epsilon 0.1, 600 rows are too few .* "
                      r"two classes' error rates apart to within 0\.40\): the private class "
                      r"prior predicts alone, "
                      r"on 90% of the budget; fallback=False"):
        clf.fit(X, y)
    fallback = clf.learner_
    assert _shares(fallback, 0.1, 1e-5) == (0.9, 0.05) and fallback.threshold == np.inf
    assert not fallback.uses_model and len(set(clf.predict(X))) == 1
    assert clf.privacy_.epsilon == pytest.approx(0.1, rel=1e-6)
    trace = fallback.learner  # the learner ran on its 5% but never predicted
    assert trace.t == 600 and np.all(clf.coef_ == 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PriorOnlyWarning)
        OnlineClassifier(epsilon=0.1, fallback=False, random_state=0).fit(X, y)
    three = OnlineClassifier(epsilon=0.1, random_state=0)
    with pytest.warns(PriorOnlyWarning, match="600 rows are too few"):
        three.fit(X, np.array(["a", "b", "c"])[np.argmax(X, axis=1)])
    assert _shares(three.learner_, 0.1, 1e-5) == (0.9, 0.05)
    assert three.learner_.threshold == np.inf and len(set(three.predict(X))) == 1
    assert three.privacy_.epsilon == pytest.approx(0.1, rel=1e-6)


def test_a_learner_built_twice_releases_the_bits_of_one_build(monkeypatch):
    # "auto" builds the learner, then again where the fallback refuses it (add/remove)
    # or where K classes on a short stream need the one split: the second build takes a
    # replica of the learner's seed, so its bits are those of a single build
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3)) / 4
    binary = np.where(X[:, 0] > 0, "a", "b")
    options = {"learner_options": {"neighbouring": "add_remove"}, "random_state": 2}
    auto = OnlineClassifier(epsilon=1.0, **options).fit(X, binary)
    alone = OnlineClassifier(epsilon=1.0, fallback=False, **options).fit(X, binary)
    assert not isinstance(auto.learner_, WithTrivialFallback)
    np.testing.assert_array_equal(auto.decision_function(X), alone.decision_function(X))
    three = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    # "auto" leaves K classes on a stream the gate can judge to the learner alone: built
    # again on the whole budget, it releases what fallback=False releases
    auto = OnlineClassifier(epsilon=1.0, random_state=2).fit(X, three)  # 200 rows at 1
    alone = OnlineClassifier(epsilon=1.0, fallback=False, random_state=2).fit(X, three)
    assert not isinstance(auto.learner_, WithTrivialFallback)
    np.testing.assert_array_equal(auto.decision_function(X), alone.decision_function(X))
    # asked for the fallback, K classes on a short stream are built again on the one split
    twice = OnlineClassifier(epsilon=1.0, fallback=True, random_state=2).fit(X, three)
    # the same fit with a plan that is never short: one build
    real_plan = fallback_module.fallback_plan
    monkeypatch.setattr(fallback_module, "fallback_plan", lambda e, d, h, classes=2:
                        real_plan(e, d, h, classes=3))
    once = OnlineClassifier(epsilon=1.0, fallback=True, random_state=2).fit(X, three)
    assert isinstance(twice.learner_, WithTrivialFallback)
    np.testing.assert_array_equal(twice.decision_function(X), once.decision_function(X))


def test_a_measurement_can_set_the_fallbacks_rules_and_a_bad_one_is_refused_by_name():
    # significance= replaces the plan's rule (the benchmarks measure alternatives with
    # it), through WithTrivialFallback's own check, so a bad value is refused by name
    from dpol.adapters.registry import make_learner

    def build(e, s):
        return make_learner("ridge_classifier", 2, horizon=300, epsilon=e, seed=s)

    common = {"fallback": True, "epsilon": 1.0, "delta": None, "horizon": 300, "seed": 1,
              "learner_seed": 0}
    assert fallback_module.with_fallback(build, **common).significance == 0.0  # short
    assert fallback_module.with_fallback(build, significance=0.5, **common).significance == 0.5
    with pytest.raises(InvalidInputError, match="significance"):
        fallback_module.with_fallback(build, significance=-1.0, **common)
    # threshold= likewise; with shares= the rules are the mechanism's (threshold 1)
    assert fallback_module.with_fallback(build, **common).threshold == THRESHOLD  # short
    assert fallback_module.with_fallback(build, threshold=0.0, **common).threshold == 0.0
    long = {**common, "horizon": 5000}

    def build_long(e, s):
        return make_learner("ridge_classifier", 2, horizon=5000, epsilon=e, seed=s)

    assert fallback_module.with_fallback(build_long, **long).threshold == LONG_THRESHOLD
    assert fallback_module.with_fallback(build_long, shares=(0.2, 0.1), **long
                                         ).threshold == THRESHOLD
    with pytest.raises(InvalidInputError, match="threshold"):
        fallback_module.with_fallback(build, threshold=-1.0, **common)
    with pytest.warns(PriorOnlyWarning):  # 300 rows at 0.1: the prior alone, as it says
        alone = fallback_module.with_fallback(build, threshold=1.0, **{**common,
                                                                       "epsilon": 0.1})
    assert alone.threshold == np.inf
    # gate_from= likewise (the gate in every block: the default before GATE_FROM)
    from dpol.learners.trivial_fallback import GATE_FROM

    assert fallback_module.with_fallback(build, **common).gate_from == GATE_FROM
    assert fallback_module.with_fallback(build, gate_from=0, **common).gate_from == 0
    with pytest.raises(InvalidInputError, match="gate_from must be"):
        fallback_module.with_fallback(build, gate_from=-1, **common)
