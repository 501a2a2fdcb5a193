"""Adapters: learners by name, scikit-learn estimators (check_estimator), river models."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

from dpol.adapters import LEARNERS, comparator, make_learner
from dpol.errors import (
    HorizonExceededError,
    InvalidInputError,
    NonPrivateWarning,
    UnknownFeatureWarning,
)

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
    built = model.base if spec.features else model  # on its random features
    assert isinstance(built, spec.cls) and model.privacy.epsilon == pytest.approx(2.0)
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
    with pytest.raises(InvalidInputError, match=r"^learner must be one of 'pqftl', 'igd', .*"
                       r"\(or an old name: 'frank-wolfe' for 'online_frank_wolfe', .*\); "
                       r"got 'sgd'$"):
        make_learner("sgd", 3, horizon=10, epsilon=1.0)
    old = make_learner("frank-wolfe", 3, horizon=10, epsilon=1.0, seed=0, counter="window")
    new = make_learner("online_frank_wolfe", 3, horizon=10, epsilon=1.0, seed=0,
                       counter="window_tree")
    assert type(old) is type(new) and old.privacy == new.privacy  # old names: the same
    with pytest.raises(InvalidInputError, match="counter must be left unset: PrivateIGD takes"):
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


#: check -> why it fails, for regressors left at y_bound=1
LABEL_SCALE_FAILURES = {
    check: ("its labels lie mostly beyond y_bound=1: OnlineRegressor refuses them with a "
            "ValueError saying which y_bound to declare (the model could only learn "
            "their clipped values: measured R^2 -2.9 on such labels, twin included)")
    for check in ("check_regressor_data_not_an_array", "check_regressors_no_decision_function")
}


def _expected_failures(estimator) -> dict:
    failures = dict(HORIZON_NONE_FAILURES) if estimator.horizon is None else {}
    if isinstance(estimator, OnlineRegressor) and estimator.y_bound == 1.0:
        failures.update(LABEL_SCALE_FAILURES)
    return failures


ESTIMATORS = [
    OnlineRegressor(),
    OnlineRegressor(horizon=1024),
    OnlineRegressor("kernel", horizon=1024),
    OnlineRegressor("pqftl", fit_intercept=False, horizon=1024),
    OnlineRegressor("ftal", counter="tree", horizon=1024),
    OnlineClassifier(),
    OnlineClassifier(horizon=1024),
    OnlineClassifier("pol", horizon=1024),
    OnlineClassifier("igd", postprocess="shrink", horizon=1024),
]


_CHECKS = parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures).mark
# scikit-learn < 1.9.1 hands pytest a generator of cases, which pytest 9 deprecates
# (an error here): the same cases as a list


@pytest.mark.parametrize(_CHECKS.args[0], list(_CHECKS.args[1]), **_CHECKS.kwargs)
def test_sklearn_check_estimator(estimator, check):
    check(estimator)


def test_expected_failures_really_fail_for_the_stated_reason():
    from sklearn.utils.estimator_checks import check_fit_score_takes_y

    with pytest.raises(HorizonExceededError, match=r"calibrated for \(the rows of fit\); "
                       r"set horizon"):
        check_fit_score_takes_y("OnlineRegressor", OnlineRegressor())


def test_partial_fit_continues_the_same_stream_as_fit():
    X, y = _stream("regression", 400, seed=1)
    for name in ("pqftl", "ftal", "kernel"):
        # centre_budget=0: partial_fit releases the labels' mean from its first batch,
        # fit from all its rows (test_private_centre.py); the learner's stream is the same
        whole = OnlineRegressor(name, horizon=400, random_state=3, centre_budget=0.0).fit(X, y)
        parts = OnlineRegressor(name, horizon=400, random_state=3, centre_budget=0.0)
        parts.partial_fit(X[:150], y[:150]).partial_fit(X[150:], y[150:])
        np.testing.assert_array_equal(whole.coef_, parts.coef_)
        assert parts.t_ == 400 and str(parts.privacy_) == str(whole.privacy_)
    with pytest.raises(HorizonExceededError, match=r"OnlineRegressor: 1 more rows after 400 "
                       r"exceed the 400 its noise is calibrated for \(horizon\)"):
        parts.partial_fit(X[:1], y[:1])
    assert parts.t_ == 400  # nothing consumed


def test_regressor_privacy_noise_and_non_private_twin():
    X, y = _stream("regression", 2000, seed=2)
    # centre_budget=0: the learner alone, on the labels as given (test_private_centre.py
    # checks the centred estimator against its learner)
    reg = OnlineRegressor(epsilon=0.5, random_state=0, centre_budget=0.0).fit(X, y)
    assert reg.privacy_.epsilon == pytest.approx(0.5) and reg.privacy_.delta == 1e-5
    direct = make_learner(reg.learner, 3, horizon=2000, epsilon=0.5, seed=reg._seeds()[0],
                          fit_intercept=True)
    trace = direct.run(X, y)
    # the learner, unchanged: its raw release, and coef_ / intercept_ its model's read-out
    np.testing.assert_array_equal(reg.learner_.weights, trace.final_weights)
    coef, intercept = direct.linear_model()
    np.testing.assert_array_equal(reg.coef_, coef)
    assert reg.intercept_ == intercept
    with pytest.warns(NonPrivateWarning):
        exact = OnlineRegressor(epsilon=math.inf, centre_budget=0.0).fit(X, y)
    ridge = comparator(exact.learner_, X, y)  # lifted coordinates: (coef, intercept)
    # the non-private twin follows the leader to the ridge solution; the private one is noisy
    raw = exact.learner_.weights
    assert np.linalg.norm(raw - ridge) < 0.1 * np.linalg.norm(ridge)
    assert np.linalg.norm(reg.learner_.weights - ridge) > 5 * np.linalg.norm(raw - ridge)
    other = OnlineRegressor(epsilon=0.5, random_state=1, centre_budget=0.0).fit(X, y)
    assert not np.array_equal(other.coef_, reg.coef_)  # random_state drives the noise
    assert np.array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))


def test_adapters_fit_an_intercept_and_predict_with_the_post_processed_model():
    # zero features, label 0.5, no noise: every PQFTL iterate is the ridge solution of the
    # constant feature k c (k = 1 / sqrt(1 + c^2) up to 1e-12), w = 0.5 k c / (k^2 c^2 +
    # alpha), so the intercept k c w = 0.5 k^2 c^2 / (k^2 c^2 + alpha), exactly
    X, y = np.zeros((200, 2)), np.full(200, 0.5)
    with pytest.warns(NonPrivateWarning):
        reg = OnlineRegressor(epsilon=math.inf, centre_budget=0.0).fit(X, y)
    k2c2 = (reg.learner_._kappa * reg.intercept_scaling) ** 2
    assert reg.intercept_ == pytest.approx(0.5 * k2c2 / (k2c2 + 0.01), rel=1e-9)
    np.testing.assert_array_equal(reg.coef_, 0.0)
    # centred on the labels' exact mean (the twin's centre has no noise), the learner
    # sees labels 0 and stays at 0: the intercept is the mean, unshrunk
    with pytest.warns(NonPrivateWarning):
        centred = OnlineRegressor(epsilon=math.inf).fit(X, y)
    assert centred.intercept_ == 0.5 and centred.prep_.centre.value == 0.5
    # predict is X @ coef_ + intercept_, clipped to y_bound: predict_one of the learner
    Xr, yr = _stream("regression", 500, seed=3)
    fitted = OnlineRegressor(epsilon=1.0, random_state=0).fit(Xr, yr + 0.3)
    big = np.vstack([Xr[:20], [[30.0, 0.0, 0.0], [-30.0, 0.0, 0.0]]])
    pred = fitted.predict(big)
    np.testing.assert_allclose(pred, np.clip(big @ fitted.coef_ + fitted.intercept_, -1, 1),
                               rtol=1e-12, atol=1e-15)
    assert np.abs(pred[-2:]).max() == 1.0  # far rows: clipped to the label bound
    b = fitted.prep_.centre.value  # the learner fits y - b (the released labels' mean)
    np.testing.assert_allclose(pred, np.clip([fitted.learner_.predict_one(x) + b
                                              for x in big], -1, 1), rtol=1e-12, atol=1e-15)
    raw = fitted.learner_.predict_one(big[0], raw=True)  # the papers' model: last release
    assert raw == pytest.approx(fitted.learner_.lift(big[:1])[0] @ fitted.learner_.weights)
    assert fitted.learner_.weights.shape == (4,)  # the raw release, intercept last
    # an unbalanced stream whose features say nothing: without an intercept or a centre
    # the margin x . w is symmetric about 0 (about half the rows each way); with either,
    # the majority (the released prior alone is enough)
    rng = np.random.default_rng(4)
    Xc = rng.normal(size=(3000, 3)) * 0.3
    yc = np.where(rng.random(3000) < 0.9, "a", "b")
    with_b = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=0,
                              centre_budget=0.0).fit(Xc, yc)
    without = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=0,
                               fit_intercept=False, centre_budget=0.0).fit(Xc, yc)
    centred = OnlineClassifier("ridge-classifier", epsilon=1.0, random_state=0,
                               fit_intercept=False, centre_budget=0.1).fit(Xc, yc)
    assert with_b.score(Xc, yc) == pytest.approx(np.mean(yc == "a"))  # all "a"
    assert without.score(Xc, yc) < 0.75 and without.intercept_ == 0.0
    assert centred.score(Xc, yc) == pytest.approx(np.mean(yc == "a"))
    assert centred.intercept_ == centred.prep_.centre.value < 0.0
    # the kernel learner is not linear: it fits no intercept
    kern = OnlineRegressor("kernel", horizon=100, random_state=0).fit(Xr[:100], yr[:100])
    assert kern.intercept_ == 0.0 and type(kern.learner_).__name__ == "PrivateKernelRegression"


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
    clf = OnlineClassifier("igd", epsilon=20.0, random_state=0).fit(X, y)
    assert clf.classes_.tolist() == ["ham", "spam"]
    margin = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(margin > 0, "spam", "ham"))
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-margin)))
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(proba), atol=1e-12)
    assert clf.score(X, y) > 0.8  # large epsilon: it learns the separator
    with pytest.raises(ValueError, match=r"Only binary classification is supported by "
                       r"learner 'igd'\. The target has 3 classes: learner must be one of "
                       r"ridge_classifier, ridge_classifier_rff"):
        OnlineClassifier("igd").fit(X, np.arange(len(X)) % 3)  # test_multi_class.py: K
    with pytest.raises(ValueError, match="only one class"):
        OnlineClassifier().fit(X, np.ones(len(X)))
    assert not hasattr(OnlineClassifier("pqftl"), "predict_proba")  # not a logistic learner
    assert not hasattr(OnlineClassifier(), "predict_proba")  # the least-squares default
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
        with warnings.catch_warnings():  # river's checks vary the keys of x on purpose
            warnings.simplefilter("ignore", UnknownFeatureWarning)
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
    coef, intercept = model.learner_.linear_model()  # the post-processed model
    assert model.predict_one({"a": 0.5}) == pytest.approx(0.5 * coef[0] + intercept)  # b = 0
    assert model.predict_one({"a": 0.5, "c": 9.0}) == model.predict_one({"a": 0.5})
    with pytest.warns(UnknownFeatureWarning, match=r"RiverRegressor leaves out features it "
                      r"did not see in its first x \('c'\)"):
        model.learn_one({"a": 0.5, "c": 9.0}, 0.1)
    assert model.n_unknown_features_ == 1 and model.learner_.t == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model
        model.learn_one({"a": 0.5, "d": 1.0}, 0.1)
    assert model.n_unknown_features_ == 2
    for _ in range(47):
        model.learn_one({"a": 0.1}, 0.0)
    with pytest.raises(HorizonExceededError):
        model.learn_one({"a": 0.1}, 0.0)
    assert str(model.privacy) == ("(1, 1e-05)-DP, replace_one, unit: one stream element; "
                                  "seeded noise: private only while the seed stays secret")


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


def test_a_regressor_refuses_a_classification_learner_before_reading_a_row(river):
    # igd, pol and ridge-classifier read labels as +-1: on continuous labels they fitted
    # something else without a word; the classifier keeps the regression learners (run
    # with a classification loss, as dpol run does)
    from dpol.adapters.river import RiverRegressor
    from dpol.adapters.sklearn import OnlineRegressor

    X = np.random.default_rng(0).normal(size=(20, 2)) / 3.0
    for name in ("igd", "pol", "ridge-classifier"):
        est = OnlineRegressor(learner=name)
        with pytest.raises(InvalidInputError, match="learner must be a regression learner "
                           "for OnlineRegressor"):
            est.fit(X, X[:, 0])
        assert not hasattr(est, "learner_") and not hasattr(est, "prep_")
        model = RiverRegressor(name)
        with pytest.raises(InvalidInputError, match="for RiverRegressor"):
            model.learn_one({"a": 0.1}, 0.2)
        assert model.learner_ is None
