"""LearnerWrapper, the base of the feature wrappers: nested wrappers reach the innermost
learner and its rows, predict through every map, and delegate the learner's state.

Each wrapper's own map: test_intercept.py, test_random_features.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.learners import PrivateKernelRegression, PrivateQuadraticFTL
from dpol.learners._wrapper import predict_rows
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import WithRandomFeatures


def _nested():
    """Random features (3 -> 8) of an intercept lift (8 -> 9) of PQFTL in 9 dims."""
    inner = PrivateQuadraticFTL(9, horizon=30, epsilon=1.0, delta=1e-5, seed=0)
    return inner, WithRandomFeatures(WithIntercept(inner), 3)


def _stream():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3)) * 0.5
    return X, np.clip(X @ [0.5, -0.3, 0.2], -1.0, 1.0)


def test_nested_wrappers_reach_the_innermost_learner_and_predict_through_every_map():
    inner, m = _nested()
    X, y = _stream()
    m.run(X, y)
    assert m.base is inner and m.learner.base is inner
    rows = m.base_rows(X)
    assert rows.shape == (30, 9)
    np.testing.assert_array_equal(rows, m.learner.rows(m.rows(X)))
    # vectorised through both maps == one row at a time through predict_one (the same
    # products in another order: equal to rounding)
    P = predict_rows(m, X)
    np.testing.assert_allclose(P, [m.predict_one(x) for x in X], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(P, [inner.predict_one(r) for r in rows], rtol=1e-12,
                               atol=1e-15)


def test_a_wrapper_delegates_the_learners_state_and_settings():
    inner, m = _nested()
    X, y = _stream()
    m.run(X[:10], y[:10])
    assert m.t_ == inner.t_ == 10
    assert (m.horizon, m.epsilon, m.delta, m.seed) == (30, 1.0, 1e-5, 0)
    np.testing.assert_array_equal(m.weights, inner.weights)
    assert m.mechanism == inner.mechanism and m.privacy_events() == inner.privacy_events()
    m.postprocess = "last"
    assert inner.postprocess == "last"
    with pytest.raises(InvalidInputError, match=r"^postprocess must be one of"):
        m.postprocess = "median"


def test_predict_rows_goes_row_by_row_for_a_learner_with_its_own_predict_one():
    # kernel regression predicts through its feature map, not x . w: the vectorised
    # linear path would multiply rows of dim 1 with weights of dim n_features
    k = PrivateKernelRegression(1, horizon=8, epsilon=1.0, delta=1e-5, seed=0)
    X = np.linspace(-0.8, 0.8, 8)[:, None]
    k.run(X, np.sin(X[:, 0]))
    np.testing.assert_array_equal(predict_rows(k, X), [k.predict_one(x) for x in X])
