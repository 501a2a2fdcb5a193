"""Private feature scaling and private bounds in the scikit-learn adapters (issue 19); the
scaling itself: tests/datasets/test_private_scaling.py."""

import math

import numpy as np
import pytest

pytest.importorskip("opendp")
pytest.importorskip("sklearn")

from dpol.accounting.closed_forms import gaussian_share
from dpol.accounting.events import compose_guarantee
from dpol.adapters import OnlineClassifier, OnlineRegressor
from dpol.adapters._private_prep import CENTRE_BUDGET
from dpol.datasets.private_bounds import GRID
from dpol.errors import InvalidInputError, PrivateEstimateWarning


def _regression(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal([500.0, -3.0, 0.0], [200.0, 1.0, 0.01], size=(n, 3))
    z = (X - [500.0, -3.0, 0.0]) / [200.0, 1.0, 0.01]
    y = 100.0 + 40.0 * (z @ [0.6, -0.5, 0.3]) + rng.normal(0.0, 5.0, n)
    return X, y


def test_regressor_with_private_scaling_learns_in_the_labels_units():
    X, y = _regression(40_000)
    Xt, yt = _regression(5_000, seed=1)
    reg = OnlineRegressor(x_bound="auto", y_bound="auto", scaling="private", epsilon=4.0,
                          random_state=0).fit(X, y)
    # R^2 of the noise-free model is 1 - 25 / (25 + 1600 * 0.7) = 0.98; the trivial
    # predictor (a constant) scores <= 0. 0.5 leaves room for the noise at epsilon 3.6
    assert reg.score(Xt, yt) > 0.5
    events = [*reg.prep_.events(), *reg.learner_.privacy_events()]
    assert reg.privacy_ == compose_guarantee(events, reg.learner_.delta, target=4.0,
                                             seeded=True)  # random_state=0
    assert reg.privacy_.epsilon <= 4.0
    # 0.9 of epsilon after the estimate; of it, CENTRE_BUDGET of the Gaussian budget
    # (mu^2) for the labels' mean, the rest for the learner
    rest = gaussian_share(0.9 * 4.0, reg.learner_.delta, CENTRE_BUDGET)[1]
    assert math.isclose(reg.learner_.epsilon, rest)


def test_auto_bounds_alone_compose_with_the_learner():
    X, y = _regression(20_000)
    X = (X - X.mean(0)) / X.std(0)  # scaled with public constants, say
    clf = OnlineClassifier(x_bound="auto", epsilon=1.0, bounds_budget=0.2,
                           random_state=0).fit(X, np.sign(y - 100.0))
    assert clf.prep_.estimate.y_bound is None and clf.prep_.x_bound in GRID
    # a classifier is not centred by default: the learner gets all the rest
    assert math.isclose(clf.learner_.epsilon, 0.8) and clf.privacy_.epsilon <= 1.0


def test_few_rows_refuse_a_regressor_and_warn_a_classifier():
    # below PrivateScaling.min_rows (a public function of n and epsilon) the released
    # scale can land far above the data: a regression model on it is unboundedly wrong
    # (measured R^2 down to -5e7), so it is refused, nothing fitted; a classifier's
    # predictions are classes, and its centred labels fall back to the private prior
    X, y = _regression(300)
    reg = OnlineRegressor(x_bound="auto", y_bound="auto", scaling="private", random_state=0)
    with pytest.raises(InvalidInputError, match="scaling must be declared for 300 rows"):
        reg.fit(X, y)
    assert not hasattr(reg, "learner_") and not hasattr(reg, "prep_")
    with pytest.warns(PrivateEstimateWarning, match="300 rows"):
        OnlineClassifier(x_bound="auto", scaling="private", random_state=0).fit(
            X, np.sign(y - np.median(y)))


@pytest.mark.parametrize("est, kwargs, name", [
    (OnlineRegressor, dict(scaling="private"), "scaling"),  # bounds not 'auto'
    (OnlineRegressor, dict(scaling="minmax", x_bound="auto", y_bound="auto"), "scaling"),
    (OnlineClassifier, dict(y_bound="auto"), "y_bound"),
    (OnlineRegressor, dict(x_bound="auto", epsilon=math.inf), "epsilon"),
    (OnlineRegressor, dict(x_bound="auto", bounds_budget=1.0), "bounds_budget"),
    (OnlineRegressor, dict(x_bound="big"), "x_bound"),
])
def test_bad_parameters_name_the_argument_and_fit_nothing(est, kwargs, name):
    X, y = _regression(50)
    model = est(**kwargs)
    with pytest.raises(InvalidInputError, match=name):
        model.fit(X, np.sign(y - 100.0) if est is OnlineClassifier else y)
    assert not hasattr(model, "learner_")


def test_a_huge_finite_row_is_scaled_to_a_finite_row_and_clipped():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    X[5] = [1e307, -1e307]
    y = X[:, 0] + 0.1 * rng.normal(size=3000)
    y[6] = 1.7e308
    # bounds_budget 0.9: 3,000 rows are enough (PrivateScaling.min_rows 1,580)
    est = OnlineRegressor(epsilon=1.0, random_state=0, x_bound="auto", y_bound="auto",
                          scaling="private", bounds_budget=0.9)
    est.fit(X, y)
    assert np.all(np.isfinite(est.prep_.transform(X[5:6])))
    assert np.all(np.isfinite(est.coef_)) and est.n_clipped_ >= 2


def test_add_remove_with_private_estimates_is_refused_before_any_row_is_read():
    # the estimates are replace-one DP (a sized domain: n public); a learner under
    # add/remove cannot compose with them
    est = OnlineRegressor(epsilon=1.0, x_bound="auto",
                          learner_options={"neighbouring": "add_remove"})
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(InvalidInputError, match="learner_options must not set neighbouring"):
        est.fit(X, X[:, 0])
    assert not hasattr(est, "coef_") and not hasattr(est, "prep_")
