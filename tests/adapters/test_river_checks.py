"""dpol/adapters/river.py: RiverRegressor and RiverClassifier pass river's
check_estimator, fix their features at first sight, learn bool labels, and are unseeded
unless given a seed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.errors import HorizonExceededError, UnknownFeatureWarning


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


def test_river_models_are_unseeded_by_default(river):
    from dpol.adapters.river import RiverRegressor

    model = RiverRegressor(horizon=10)
    model.learn_one({"a": 0.1}, 0.2)
    assert not model.privacy.seeded
    seeded = RiverRegressor(horizon=10, seed=1)
    seeded.learn_one({"a": 0.1}, 0.2)
    assert seeded.privacy.seeded
