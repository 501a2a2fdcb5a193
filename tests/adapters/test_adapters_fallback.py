"""OnlineClassifier(fallback=True): the prior where the model is no better, one guarantee."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.adapters import OnlineClassifier
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners.trivial_fallback import WithTrivialFallback


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
    plain = OnlineClassifier(epsilon=0.1, random_state=0).fit(X, y)
    assert clf.score(X, y) > plain.score(X, y)  # here the plain model loses to the prior


def test_a_good_model_is_kept_and_predicts_as_its_learner_does():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4)) / 4
    y = np.where(X[:, 0] > 0, "a", "b")
    clf = OnlineClassifier(epsilon=1.0, random_state=0, fallback=True).fit(X, y)
    assert clf.learner_.uses_model and clf.score(X, y) > 0.9
    margins = np.array([clf.learner_.predict_one(x) for x in X[:20]])
    np.testing.assert_allclose(clf.decision_function(X[:20]), margins, atol=1e-12)


def test_bad_fallback_is_refused_and_nothing_is_fitted():
    X, y = _noise_labels(n=50)
    clf = OnlineClassifier(fallback="yes")
    with pytest.raises(InvalidInputError, match="fallback must be True or False"):
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


def test_centring_with_the_fallback_is_refused_before_any_release():
    # centred on b, the gate would read sign(m) as the model's class where the estimator
    # predicts sign(m + b), and the prior's class likewise: refused, nothing released
    X, y = _noise_labels(n=50)
    clf = OnlineClassifier(fallback=True, centre_budget=0.1)
    with pytest.raises(InvalidInputError, match="centre_budget must be 0 with fallback=True"):
        clf.fit(X, y)
    assert not hasattr(clf, "prep_")
    OnlineClassifier(learner="igd", fallback=True, centre_budget=0.1).fit(X, y)  # uncentred
