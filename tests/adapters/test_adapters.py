"""dpol/adapters (the package): the four estimators imported lazily from it, without
scikit-learn too; its registry of learners by name; both estimators refuse a
classification learner for regression. The estimators' own tests: test_sklearn.py,
test_river.py, test_river_checks.py."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from stream_cases import make_stream

from dpol.adapters import LEARNERS, comparator, make_learner
from dpol.errors import InvalidInputError, NonPrivateWarning

sklearn = pytest.importorskip("sklearn")

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
@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_builds_runs_and_its_comparator_minimises(name):
    spec = LEARNERS[name]
    X, y = make_stream(spec.task)
    # an entry with random features, on them (a stream this short would drop them)
    features = None if spec.features is None else spec.features[0]
    model = make_learner(name, X.shape[1], horizon=len(y), epsilon=2.0, seed=0,
                         random_features=features)
    built = model.base if spec.features else model
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


def test_learners_warn_only_when_non_private():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_learner("igd", 2, horizon=10, epsilon=1.0)
    with pytest.warns(NonPrivateWarning):
        make_learner("igd", 2, horizon=10, epsilon=math.inf)


# ------------------------------------------------------------------------ both estimators
@pytest.fixture
def river():
    return pytest.importorskip("river")


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
