"""Adapters: learners by name, scikit-learn estimators (check_estimator), river models."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

from dpol.adapters import LEARNERS, comparator, make_learner
from dpol.errors import HorizonExceededError, InvalidInputError, NonPrivateWarning

sklearn = pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dpol.adapters.sklearn import OnlineClassifier, OnlineRegressor  # noqa: E402

# --------------------------------------------------------------------------- imports


def test_the_adapters_import_from_the_package():
    import dpol.adapters
    from dpol.adapters import OnlineClassifier as Classifier
    from dpol.adapters import OnlineRegressor as Regressor
    from dpol.adapters import RiverClassifier, RiverRegressor
    from dpol.adapters import river as river_adapters

    assert (Classifier, Regressor) == (OnlineClassifier, OnlineRegressor)
    assert (RiverClassifier, RiverRegressor) == (river_adapters.RiverClassifier,
                                                 river_adapters.RiverRegressor)
    assert {"OnlineClassifier", "RiverRegressor"} <= set(dir(dpol.adapters))
    with pytest.raises(AttributeError, match="no attribute 'OnlineRanker'"):
        getattr(dpol.adapters, "OnlineRanker")  # noqa: B009


def test_the_package_imports_without_scikit_learn_and_names_the_extra():
    import subprocess
    import sys

    # a fresh interpreter where importing scikit-learn fails, as in a default install
    code = """
import sys
sys.modules["sklearn"] = None
import dpol.adapters
from dpol.adapters import LEARNERS, RiverRegressor
try:
    from dpol.adapters import OnlineClassifier
except ImportError as exc:
    print(exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    message = out.stdout.strip()
    assert message.startswith("dpol.adapters.OnlineClassifier needs scikit-learn (")
    assert message.endswith("): pip install 'dpol[sklearn]'")


# --------------------------------------------------------------------------- registry


def _stream(task: str, n: int = 300, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.4
    target = X @ np.linspace(0.5, -0.5, d)
    y = np.where(target > 0, 1.0, -1.0) if task == "classification" else target
    return X, y


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_builds_runs_and_its_comparator_minimises(name):
    spec = LEARNERS[name]
    X, y = _stream(spec.task)
    model = make_learner(name, X.shape[1], horizon=len(y), epsilon=2.0, seed=0)
    assert isinstance(model, spec.cls) and model.privacy.epsilon == pytest.approx(2.0)
    u = comparator(model, X, y)
    trace = model.run(X, y, comparator=u)
    assert trace.regret.shape == (len(y),)
    # u is the best fixed point: nudging it (inside the set) never lowers the total loss
    best = model._loss_value(u, X, y).sum()
    domain = getattr(model, "domain", None)
    rng = np.random.default_rng(1)
    for _ in range(5):
        v = u + 0.05 * rng.normal(size=u.shape)
        if domain is not None:
            v = domain.project(v)
        assert model._loss_value(v, X, y).sum() >= best - 1e-9


def test_make_learner_refuses_bad_names_counters_and_options():
    with pytest.raises(InvalidInputError, match="learner must be one of pqftl, igd"):
        make_learner("sgd", 3, horizon=10, epsilon=1.0)
    with pytest.raises(InvalidInputError, match="counter must be left unset: igd"):
        make_learner("igd", 3, horizon=10, epsilon=1.0, counter="tree")
    with pytest.raises(InvalidInputError, match="options must be a dict"):
        make_learner("pqftl", 3, horizon=10, epsilon=1.0, options=[("alpha", 2.0)])
    assert make_learner("pqftl", 3, horizon=10, epsilon=1.0, options={"alpha": 0.25}).alpha \
        == 0.25
    honaker = make_learner("pqftl", 3, horizon=16, epsilon=1.0, counter="honaker")
    assert type(honaker._counters[0]).__name__ == "HonakerTreeCounter"


# ------------------------------------------------------------------------ scikit-learn

#: check -> why it fails, for estimators left at horizon=None
HORIZON_NONE_FAILURES = {
    "check_fit_score_takes_y": (
        "calls partial_fit after fit(X): with horizon=None, fit calibrates the noise for "
        "len(X) rows, so more rows would break the guarantee; dpol raises "
        "HorizonExceededError instead (with horizon set, the check passes)"),
}


def _expected_failures(estimator) -> dict:
    return HORIZON_NONE_FAILURES if estimator.horizon is None else {}


ESTIMATORS = [
    OnlineRegressor(),
    OnlineRegressor(horizon=1024),
    OnlineRegressor("kernel", horizon=1024),
    OnlineRegressor("ftal", counter="tree", horizon=1024),
    OnlineClassifier(),
    OnlineClassifier(horizon=1024),
    OnlineClassifier("pol", horizon=1024),
]


_CHECKS = parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures).mark
# scikit-learn < 1.9.1 hands pytest a generator of cases, which pytest 9 deprecates
# (an error here): the same cases as a list


@pytest.mark.parametrize(_CHECKS.args[0], list(_CHECKS.args[1]), **_CHECKS.kwargs)
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_expected_failures_really_fail_for_the_stated_reason():
    from sklearn.utils.estimator_checks import check_fit_score_takes_y

    with pytest.raises(HorizonExceededError, match="exceed horizon"):
        check_fit_score_takes_y("OnlineRegressor", OnlineRegressor())


def test_partial_fit_continues_the_same_stream_as_fit():
    X, y = _stream("regression", 400, seed=1)
    for name in ("pqftl", "ftal", "kernel"):
        whole = OnlineRegressor(name, horizon=400, random_state=3).fit(X, y)
        parts = OnlineRegressor(name, horizon=400, random_state=3)
        parts.partial_fit(X[:150], y[:150]).partial_fit(X[150:], y[150:])
        np.testing.assert_array_equal(whole.coef_, parts.coef_)
        assert parts.t_ == 400 and str(parts.privacy_) == str(whole.privacy_)
    with pytest.raises(HorizonExceededError):
        parts.partial_fit(X[:1], y[:1])
    assert parts.t_ == 400  # nothing consumed


def test_regressor_privacy_noise_and_non_private_twin():
    X, y = _stream("regression", 2000, seed=2)
    reg = OnlineRegressor(epsilon=0.5, random_state=0).fit(X, y)
    assert reg.privacy_.epsilon == pytest.approx(0.5) and reg.privacy_.delta == 1e-5
    direct = make_learner("pqftl", 3, horizon=2000, epsilon=0.5, seed=0).run(X, y)
    np.testing.assert_array_equal(reg.coef_, direct.final_weights)  # the learner, unchanged
    with pytest.warns(NonPrivateWarning):
        exact = OnlineRegressor(epsilon=math.inf).fit(X, y)
    ridge = comparator(exact.learner_, X, y)
    # the non-private twin follows the leader to the ridge solution; the private one is noisy
    assert np.linalg.norm(exact.coef_ - ridge) < 0.1 * np.linalg.norm(ridge)
    assert np.linalg.norm(reg.coef_ - ridge) > 5 * np.linalg.norm(exact.coef_ - ridge)
    other = OnlineRegressor(epsilon=0.5, random_state=1).fit(X, y)
    assert not np.array_equal(other.coef_, reg.coef_)  # random_state drives the noise
    assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))


def test_parameters_are_checked_at_fit_not_in_init():
    X, y = _stream("regression", 50)
    bad = OnlineRegressor(epsilon=-1.0)  # scikit-learn: no validation in __init__
    with pytest.raises(InvalidInputError, match="epsilon must be > 0"):
        bad.fit(X, y)
    assert not hasattr(bad, "learner_")
    with pytest.raises(InvalidInputError, match="learner must be one of"):
        OnlineRegressor("nope").fit(X, y)


def test_classifier_labels_probabilities_and_refusals():
    X, y01 = _stream("classification", 3000, d=2, seed=4)
    y = np.where(y01 > 0, "spam", "ham")
    clf = OnlineClassifier(epsilon=20.0, random_state=0).fit(X, y)
    assert clf.classes_.tolist() == ["ham", "spam"]
    margin = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(margin > 0, "spam", "ham"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-margin)))
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba), atol=1e-12)
    assert clf.score(X, y) > 0.8  # large epsilon: it learns the separator
    with pytest.raises(ValueError, match="Only binary classification"):
        OnlineClassifier().fit(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="only one class"):
        OnlineClassifier().fit(X, np.ones(len(X)))
    assert not hasattr(OnlineClassifier("pqftl"), "predict_proba")  # not a logistic learner
    stream = OnlineClassifier(horizon=100)
    with pytest.raises(ValueError, match="only one class"):
        stream.partial_fit(X[:5], np.ones(5))  # no classes given, one class seen
    stream.partial_fit(X[:5], np.ones(5), classes=[0.0, 1.0])
    with pytest.raises(ValueError, match="labels not in classes_"):
        stream.partial_fit(X[5:10], np.full(5, 2.0))
    assert stream.t_ == 5


# ------------------------------------------------------------------------------ river


@pytest.fixture
def river():
    return pytest.importorskip("river")


def test_river_check_estimator(river):
    from river import checks

    from dpol.adapters.river import RiverClassifier, RiverRegressor

    for model in (RiverRegressor(), RiverClassifier(), RiverRegressor("ftal", horizon=4000)):
        assert isinstance(model, river.base.Estimator)
        checks.check_estimator(model)


def test_river_dict_features_fixed_at_first_sight(river):
    from dpol.adapters.river import RiverRegressor

    model = RiverRegressor(horizon=50, seed=0)
    assert model.predict_one({"a": 1.0}) == 0.0 and model.privacy is None
    model.learn_one({"b": 0.2, "a": 0.1}, 0.3)
    assert model.features_ == ("a", "b") and model.learner_.dim == 2
    shuffled = RiverRegressor(horizon=50, seed=0)
    shuffled.learn_one({"a": 0.1, "b": 0.2}, 0.3)
    for x in ({"a": 0.3, "b": -0.1}, {"b": -0.1, "a": 0.3}):
        assert model.predict_one(x) == shuffled.predict_one(x)
    w = model.learner_.weights
    assert model.predict_one({"a": 0.5}) == pytest.approx(0.5 * w[0])  # missing feature: 0
    assert model.predict_one({"a": 0.5, "c": 9.0}) == model.predict_one({"a": 0.5})
    model.learn_one({"a": 0.5, "c": 9.0}, 0.1)
    assert model.n_unknown_features_ == 1 and model.learner_.t == 2
    for _ in range(48):
        model.learn_one({"a": 0.1}, 0.0)
    with pytest.raises(HorizonExceededError):
        model.learn_one({"a": 0.1}, 0.0)
    assert str(model.privacy) == "(1, 1e-05)-DP, replace_one, unit: one stream element"


def test_river_classifier_bool_labels(river):
    from dpol.adapters.river import RiverClassifier

    rng = np.random.default_rng(5)
    model = RiverClassifier(epsilon=20.0, horizon=3000, seed=1)
    correct = 0
    for _ in range(3000):
        a, b = rng.normal(size=2) * 0.4
        x, label = {"a": a, "b": b}, bool(a > b)
        correct += model.predict_one(x) == label  # prequential: test, then train
        model.learn_one(x, label)
    proba = model.predict_proba_one({"a": 0.5, "b": -0.5})
    assert set(proba) == {False, True} and proba[True] + proba[False] == pytest.approx(1.0)
    assert proba[True] > 0.5
    assert correct / 3000 > 0.75


def test_learners_warn_only_when_non_private():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_learner("igd", 2, horizon=10, epsilon=1.0)
    with pytest.warns(NonPrivateWarning):
        make_learner("igd", 2, horizon=10, epsilon=math.inf)
