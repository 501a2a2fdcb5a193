"""WithRandomFeatures: a linear learner on a public random feature map, the learner unchanged."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpol.adapters import LEARNERS, comparator, make_learner
from dpol.errors import ClippingWarning, InvalidInputError, NonPrivateWarning
from dpol.learners import PrivateQuadraticFTL
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import BANDWIDTH, WithRandomFeatures

LINEAR = [name for name, spec in LEARNERS.items() if spec.linear]


def _xor(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows in [-1, 1]^2 labelled by the sign of x1 x2: no linear model beats chance."""
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, 2))
    return X, np.sign(X[:, 0] * X[:, 1])


def _ridge(dim: int, n: int, epsilon: float = 1.0, seed: object = 0, **kw):
    return PrivateQuadraticFTL(dim, horizon=n, epsilon=epsilon, delta=1e-5, alpha=0.01,
                               noise_ridge=True, seed=seed, **kw)


def test_features_have_norm_just_below_one_whatever_the_row():
    # the privacy argument: every row, however large, maps inside the learner's bound 1
    m = WithRandomFeatures(_ridge(16, 10), 3, bandwidth=0.3, x_bound=2.0)
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(500, 3)) * s for s in (1e-3, 1.0, 1e3, 1e12)])
    norms = np.linalg.norm(m.rows(X), axis=1)
    # ||phi(x)||^2 = sum over pairs of (cos^2 + sin^2) / (D/2) = 1 up to rounding of the
    # D = 16 terms (a few ulp), times the shrink 1 - 1e-12: far below 1 at any size
    np.testing.assert_allclose(norms, 1.0 - 1e-12, rtol=1e-14)
    assert norms.max() < 1.0


def test_the_map_is_public_fixed_by_feature_seed_not_by_noise_or_data():
    a = WithRandomFeatures(_ridge(8, 10, seed=1), 2, feature_seed=5)
    b = WithRandomFeatures(_ridge(8, 10, seed=2), 2, feature_seed=5)
    c = WithRandomFeatures(_ridge(8, 10, seed=1), 2, feature_seed=6)
    a.run(*_xor(10))
    np.testing.assert_array_equal(a.feature_map.omega, b.feature_map.omega)
    assert not np.array_equal(a.feature_map.omega, c.feature_map.omega)
    # the bandwidth is b x_bound: Omega's scale is 1 / (b x_bound)
    d = WithRandomFeatures(_ridge(8, 10), 2, feature_seed=5, bandwidth=0.5, x_bound=4.0)
    np.testing.assert_allclose(d.feature_map.omega * (0.5 * 4.0) / BANDWIDTH,
                               b.feature_map.omega, rtol=1e-15)


def test_privacy_is_the_learners_and_the_run_is_the_learners_run_on_the_features():
    X, y = _xor(300, seed=2)
    m = WithRandomFeatures(WithIntercept(_ridge(17, 300, seed=3)), 2)
    twin = WithIntercept(_ridge(17, 300, seed=3))
    assert m.privacy_events() == twin.privacy_events()
    assert str(m.privacy) == str(twin.privacy) and m.dp_event() == twin.dp_event()
    trace = m.run(X, y)
    want = twin.run(m.rows(X), y)  # the same mechanism on the same rows, same noise
    np.testing.assert_array_equal(trace.weights, want.weights)
    np.testing.assert_array_equal(trace.model_predictions, want.model_predictions)
    np.testing.assert_array_equal(m.model_weights, twin.model_weights)
    assert m.n_clipped_ == 0 and m.t == 300  # rows are never clipped, labels in bounds
    np.testing.assert_allclose(m.predict_rows(X[:20]),
                               [m.predict_one(x) for x in X[:20]], rtol=1e-13, atol=1e-15)


def test_without_noise_the_model_is_ridge_regression_on_the_features():
    # epsilon = inf: PQFTL's last iterate solves (t alpha I + sum phi phi^T) w = sum y phi
    X, y = _xor(200, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        m = WithRandomFeatures(PrivateQuadraticFTL(32, horizon=200, epsilon=math.inf,
                                                   alpha=0.01), 2, bandwidth=0.5)
    m.run(X, y)
    F = m.rows(X)
    w = np.linalg.solve(200 * 0.01 * np.eye(32) + F.T @ F, F.T @ y)
    np.testing.assert_allclose(m.weights, w, rtol=1e-9, atol=1e-12)
    # and it learns what no linear model can: accuracy far above chance on fresh rows
    T, labels = _xor(2000, seed=5)
    assert np.mean(np.sign(m.predict_rows(T)) == labels) > 0.85


def test_labels_over_the_bound_warn_once_naming_the_wrapper():
    m = WithRandomFeatures(_ridge(8, 100), 2)
    X, y = _xor(60, seed=6)
    y[:5] = 3.0  # 5 of 60 > 5%
    with pytest.warns(ClippingWarning, match="WithRandomFeatures clipped 5 of 60 rows"):
        m.run(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per object; the learner stays silent
        m.learn_one([9.0, 9.0], 9.0)
    assert m.n_clipped_ == 6


@pytest.mark.parametrize("name", LINEAR)
def test_every_linear_registry_learner_takes_random_features(name):
    spec = LEARNERS[name]
    X, target = _xor(80, seed=7)
    y = target if spec.task == "classification" else 0.5 * target
    m = make_learner(name, 2, horizon=80, epsilon=2.0, seed=0, fit_intercept=True,
                     random_features=16, x_bound=1.5)
    assert isinstance(m, WithRandomFeatures) and isinstance(m.learner, WithIntercept)
    inner = 17 + (2 if spec.features else 0)  # D + 1, and x beside the features
    assert isinstance(m.base, spec.cls) and m.base.dim == inner and m.base.x_bound >= 1.0
    assert m.privacy.epsilon == pytest.approx(2.0)
    assert m.feature_map.kernel.bandwidth == pytest.approx(BANDWIDTH * 1.5)
    u = comparator(m, X, y)  # the best fixed point in the learner's coordinates
    trace = m.run(X, y, comparator=u)
    assert u.shape == (inner,) and trace.regret.shape == (80,)


def test_refusals():
    with pytest.raises(InvalidInputError, match="random_features must be None for kernel"):
        make_learner("kernel", 2, horizon=10, epsilon=1.0, random_features=16)
    with pytest.raises(InvalidInputError, match="random_features must be even"):
        make_learner("ridge", 2, horizon=10, epsilon=1.0, random_features=15)
    with pytest.raises(InvalidInputError, match="random_features must be an integer >= 2"):
        make_learner("ridge", 2, horizon=10, epsilon=1.0, random_features=0)
    with pytest.raises(InvalidInputError, match="learner must be a linear learner"):
        WithRandomFeatures(make_learner("kernel", 8, horizon=10, epsilon=1.0), 2)
    used = _ridge(8, 10)
    used.learn_one(np.full(8, 0.1), 0.1)
    with pytest.raises(InvalidInputError, match="learner must be fresh"):
        WithRandomFeatures(used, 2)
    with pytest.raises(InvalidInputError, match=r"learner\.dim must be even"):
        WithRandomFeatures(_ridge(9, 10), 2)
    with pytest.raises(InvalidInputError, match=r"learner\.x_bound must be at least 1"):
        WithRandomFeatures(_ridge(8, 10, bound=0.5), 2)
    with pytest.raises(InvalidInputError, match="bandwidth must be > 0"):
        WithRandomFeatures(_ridge(8, 10), 2, bandwidth=0.0)
    with pytest.raises(InvalidInputError, match="learner must be a full-information"):
        WithRandomFeatures(WithRandomFeatures(_ridge(8, 10), 2), 2)
    m = WithRandomFeatures(_ridge(8, 10), 2)
    with pytest.raises(InvalidInputError, match="x must contain only finite"):
        m.learn_one([0.1, math.nan], 0.0)
    with pytest.raises(InvalidInputError):
        m.learn_one(np.zeros(8), 0.0)  # the features' dimension is internal
    with pytest.raises(InvalidInputError, match="y must"):
        m.learn_one([0.1, 0.2], math.nan)
    assert m.t == 0 and m.n_clipped_ == 0


def test_rows_beyond_a_million_bounds_are_scaled_counted_once_and_stay_finite():
    # omega . x overflows near 1e307 (cos(inf) = nan); beyond row_bound = 1e6 x_bound a
    # row is scaled to it for numerical reasons, and counted with the label's clip once
    m = WithRandomFeatures(_ridge(8, 10), 2, x_bound=2.0)
    assert m.row_bound == 2e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warning
        assert np.isfinite(m.predict_one([1.7e308, -1.7e308]))
        m.learn_one([1.7e308, -1.7e308], 0.5)   # scaled: counted
        m.learn_one([1e300, 1.0], 5.0)          # scaled and label clipped: counted once
        m.learn_one([1e6, 1e6], 0.5)            # norm 1.4e6 < 2e6: as given, not counted
    assert m.n_clipped_ == 2 and np.all(np.isfinite(m.weights))
    far = m.rows(np.array([[3e6, 4e6]]))
    np.testing.assert_array_equal(far, m.rows(np.array([[1.2e6, 1.6e6]])))  # the scaled row
    again = m._far(np.array([[1.2e6, 1.6e6]]), np.zeros(1))  # idempotent: left alone
    assert again[1] == 0


def test_x_beside_the_features_is_clipped_counted_and_the_run_is_the_step_loop():
    # [c x / x_bound, sqrt(1 - c^2) phi(x)] (1 - 1e-12): norm below 1 whatever x, x's
    # part clipped to x_bound (and counted); run equals the learn_one loop, bit for bit
    X, y = _xor(200, seed=4)
    X[:10] *= 5.0  # beyond x_bound = 1.5
    def build():
        return WithRandomFeatures(WithIntercept(_ridge(16 + 2 + 1, 200, seed=5)), 2,
                                  x_bound=1.5, linear_weight=0.8)
    m, loop = build(), build()
    rows = m.rows(X)
    assert rows.shape == (200, 18) and np.all(np.linalg.norm(rows, axis=1) < 1.0)
    np.testing.assert_allclose(rows[10:, :2], 0.8 * X[10:] / 1.5, rtol=1e-11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        trace = m.run(X, y)
        for x, t in zip(X, y, strict=True):
            loop.learn_one(x, t)
    np.testing.assert_array_equal(trace.final_weights, loop.learner.weights)
    far = int(np.sum(np.linalg.norm(X, axis=1) > 1.5))
    assert m.n_clipped_ == loop.n_clipped_ == far > 0
    with pytest.raises(InvalidInputError, match=r"learner\.dim must be even"):
        WithRandomFeatures(WithIntercept(_ridge(15 + 1, 200)), 2, linear_weight=0.8)  # 13
