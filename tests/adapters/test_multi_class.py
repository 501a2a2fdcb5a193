"""OnlineClassifier on K > 2 classes: one-hot labels on one Gram matrix (PQFTL outputs=K)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpol.adapters import OnlineClassifier
from dpol.adapters.registry import make_learner
from dpol.errors import NonPrivateWarning, PriorOnlyWarning
from dpol.learners.trivial_fallback import WithTrivialFallback


def _three_blobs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = np.array([[0.5, 0.0], [-0.25, 0.43], [-0.25, -0.43]])
    labels = rng.integers(3, size=n)
    X = centres[labels] + 0.12 * rng.normal(size=(n, 2))
    return X, np.array(["red", "green", "blue"])[labels]


def test_k_classes_cost_the_noise_of_one_and_predict_the_largest_margin():
    X, y = _three_blobs(3000, 0)
    T, labels = _three_blobs(1000, 1)
    clf = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=0,
                           fallback=False).fit(X, y)
    assert clf.classes_.tolist() == ["blue", "green", "red"]
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)
    margin = clf.decision_function(T)
    assert margin.shape == (1000, 3)
    np.testing.assert_array_equal(clf.predict(T), clf.classes_[np.argmax(margin, axis=1)])
    # well-separated blobs (centres 0.75 apart, std 0.12): the private model is near
    # perfect; the majority class scores about 1/3
    assert clf.score(T, labels) > 0.9
    # the same guarantee as two classes: the u counter's element vec(x y^T) moves by the
    # scalar bound for one-hot rows (PQFTL's Privacy section)
    binary = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=0,
                              fallback=False).fit(X, y == "red")
    assert str(clf.privacy_) == str(binary.privacy_)
    assert clf.learner_.learner.outputs == 3


def test_the_estimator_is_its_learner_on_one_hot_labels():
    X, y = _three_blobs(500, 2)
    clf = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=4,
                           fallback=False).fit(X, y)
    direct = make_learner("ridge-classifier", 2, horizon=500, epsilon=1.0,
                          seed=clf._seeds()[0], fit_intercept=True, options={"outputs": 3})
    one_hot = (y[:, None] == clf.classes_[None, :]).astype(float)
    direct.run(X, one_hot)
    np.testing.assert_array_equal(clf.learner_.weights, direct.weights)
    coef, intercept = direct.linear_model()
    np.testing.assert_array_equal(clf.coef_, coef.T)
    np.testing.assert_array_equal(clf.intercept_, intercept)


def test_the_non_private_twin_is_least_squares_on_one_hot_labels():
    X, y = _three_blobs(400, 3)
    with pytest.warns(NonPrivateWarning):
        clf = OnlineClassifier("ridge-classifier", epsilon=math.inf).fit(X, y)
    one_hot = (y[:, None] == clf.classes_[None, :]).astype(float)
    A = np.hstack([X, np.ones((len(X), 1))])
    ols = np.linalg.lstsq(A, one_hot, rcond=None)[0]
    # the twin's model is the averaged FTL ridge iterates (alpha = 0.01): its predicted
    # classes are least squares' on all but a few rows
    assert np.mean(clf.predict(X) == clf.classes_[np.argmax(A @ ols, axis=1)]) > 0.98


def test_partial_fit_with_declared_classes_and_centring_on_the_prior_vector():
    X, y = _three_blobs(600, 5)
    clf = OnlineClassifier("ridge-classifier", epsilon=1.0, horizon=600, random_state=0,
                           centre_budget=0.1)
    clf.partial_fit(X[:300], y[:300], classes=["red", "green", "blue"])
    clf.partial_fit(X[300:], y[300:])
    assert clf.t_ == 600 and clf.prep_.centre.value.shape == (3,)
    # one-hot rows: the prior's sum moves by sqrt(2) under replace-one
    assert clf.prep_.centre.sensitivity == pytest.approx(math.sqrt(2.0))
    assert clf.score(X, y) > 0.8
    with pytest.raises(ValueError, match="labels not in classes_"):
        clf.partial_fit(X[:5], np.array(["purple"] * 5))


def test_river_classifier_with_declared_classes():
    pytest.importorskip("river")
    from dpol.adapters import RiverClassifier
    from dpol.errors import InvalidInputError

    X, y = _three_blobs(2000, 6)
    model = RiverClassifier(epsilon=1.0, horizon=2000, seed=0, classes=("red", "green", "blue"))
    before = model.predict_proba_one({"a": 0.0, "b": 0.0})
    assert before == pytest.approx({"red": 1 / 3, "green": 1 / 3, "blue": 1 / 3})
    for row, label in zip(X, y, strict=True):
        model.learn_one({"a": row[0], "b": row[1]}, label)
    T, labels = _three_blobs(300, 7)
    hits = [model.predict_one({"a": r[0], "b": r[1]}) == k for r, k in zip(T, labels,
                                                                           strict=True)]
    assert np.mean(hits) > 0.85  # the majority class scores about 1/3
    # fallback="auto": K classes on a stream the gate could judge learn alone; on one too
    # short for it (150 rows at epsilon 0.1) the private prior predicts alone, and says so
    assert not isinstance(model.learner_, WithTrivialFallback)
    short = RiverClassifier(epsilon=0.1, horizon=150, seed=0, classes=("red", "green", "blue"))
    with pytest.warns(PriorOnlyWarning, match="150 rows are too few"):
        short.learn_one({"a": X[0, 0], "b": X[0, 1]}, y[0])
    assert isinstance(short.learner_, WithTrivialFallback) and short.learner_.threshold == np.inf
    proba = model.predict_proba_one({"a": 0.5, "b": 0.0})
    assert sum(proba.values()) == pytest.approx(1.0) and max(proba, key=proba.get) == "red"
    with pytest.raises(InvalidInputError, match="y must be one of classes"):
        model.learn_one({"a": 0.0, "b": 0.0}, "purple")
    assert model.learner_.t_ == 2000  # nothing learnt from the refused label
    with pytest.raises(InvalidInputError, match="classes must be at least 2 distinct"):
        RiverClassifier(classes=("a", "a"))
    with pytest.raises(InvalidInputError, match="learner must fit 3 classes"):
        RiverClassifier("igd", classes=("a", "b", "c"))
    two = RiverClassifier(epsilon=10.0, horizon=400, seed=0, classes=("no", "yes"))
    for row in X[:400]:
        two.learn_one({"a": row[0], "b": row[1]}, "yes" if row[0] > 0.2 else "no")
    assert two.predict_one({"a": 0.5, "b": 0.0}) == "yes"
    assert set(two.predict_proba_one({"a": 0.5, "b": 0.0})) == {"no", "yes"}
