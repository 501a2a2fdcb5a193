"""WithIntercept: a constant feature inside the declared norm bound, the learner unchanged."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

from dpol.adapters import LEARNERS, comparator, make_learner
from dpol.clipping import clip_examples, clip_norms
from dpol.errors import (
    ClippingWarning,
    HorizonExceededError,
    InvalidInputError,
    NonPrivateWarning,
)
from dpol.learners import PrivateIGD, PrivateQuadraticFTL
from dpol.learners.intercept import INTERCEPT_SCALING, WithIntercept
from dpol.losses import LogisticLoss, Regularized
from dpol.sets import L2Ball

# the linear learners on x itself (ridge-classifier-rff runs on random features of x:
# tests/learners/test_random_features.py)
LINEAR = [name for name, spec in LEARNERS.items() if spec.linear and spec.features is None]


def _rows(n: int, d: int = 3, seed: int = 0, norm: float | None = None) -> np.ndarray:
    X = np.random.default_rng(seed).normal(size=(n, d))
    if norm is not None:
        X *= norm / np.linalg.norm(X, axis=1, keepdims=True)
    return X


def test_lifted_rows_stay_strictly_inside_the_bound_and_keep_the_constant():
    inner = PrivateQuadraticFTL(4, horizon=10, epsilon=1.0, delta=1e-5, bound=2.5, seed=0)
    m = WithIntercept(inner, intercept_scaling=0.35)
    X = _rows(2000, norm=2.5)  # every row at the bound, up to rounding
    Z = m.lift(X)
    c, kappa = 0.35, (1 - 1e-12) / math.sqrt(1 + 0.35**2)
    assert np.linalg.norm(Z, axis=1).max() <= 2.5 * (1 - 1e-12) * (1 + 4e-16)
    np.testing.assert_allclose(Z[:, -1], kappa * c * 2.5, rtol=1e-15)
    np.testing.assert_allclose(Z[:, :3], kappa * X, rtol=1e-15)


def test_privacy_is_the_learners_and_clips_are_counted_once_per_row():
    inner = PrivateQuadraticFTL(4, horizon=40, epsilon=1.0, delta=1e-5, seed=3)
    twin = PrivateQuadraticFTL(4, horizon=40, epsilon=1.0, delta=1e-5, seed=3)
    m = WithIntercept(inner)
    assert m.privacy_events() == twin.privacy_events()
    assert str(m.privacy) == str(twin.privacy) and m.dp_event() == twin.dp_event()
    X = _rows(40, norm=1.0)  # at the bound: not clipped (the lift stays inside)
    y = np.linspace(-0.9, 0.9, 40)
    X[3] *= 2.0             # x over the bound
    y[5] = 3.0              # label over
    X[7] *= 5.0
    y[7] = -4.0             # both: one row, one clip
    trace = m.run(X[:20], y[:20])
    for i in range(20, 40):
        m.learn_one(X[i], y[i])
    # the learners' rule: a row counts when its norm (clip_norms) exceeds the bound or its
    # label does; rows normalised to 1 may land an ulp above it, and count as they would
    # without the intercept
    over = (clip_norms(X) > 1.0) | (np.abs(y) > 1.0)
    assert over[[3, 5, 7]].all() and m.n_clipped_ == over.sum()
    assert trace.n_clipped == over[:20].sum()
    # the learner saw exactly the clipped, lifted rows
    Xc, yc, _ = clip_examples(X, y, 1.0, 1.0)
    twin.run(m.lift(Xc), yc)
    np.testing.assert_array_equal(m.weights, twin.weights)
    assert twin.n_clipped_ == 0  # the lifted rows never reach its bound


def test_clipping_warns_once_with_the_whole_count():
    m = WithIntercept(PrivateQuadraticFTL(3, horizon=100, epsilon=1.0, delta=1e-5, seed=0))
    X = _rows(60, d=2, seed=5) * 0.3
    X[:4] *= 20.0  # 4 rows with x over the bound, 3 labels over: 7 of 60 > 5%
    y = np.zeros(60)
    y[10:13] = 5.0
    with pytest.warns(ClippingWarning, match="WithIntercept clipped 7 of 60 rows"):
        m.run(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per object; the learner stays silent
        m.learn_one([9.0, 9.0], 9.0)
    assert m.n_clipped_ == 8
    quiet = WithIntercept(PrivateQuadraticFTL(3, horizon=100, epsilon=1.0, delta=1e-5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet.run(X[4:40], y[13:49])  # no row over a bound


def test_run_equals_the_learn_one_loop_and_checkpoints_continue():
    X, y = _rows(60, seed=1) * 0.4, np.random.default_rng(1).choice([-1.0, 1.0], 60)
    loss = Regularized(LogisticLoss(), 0.05)

    def build():
        return WithIntercept(PrivateIGD(4, loss=loss, domain=L2Ball(4, 5.0), horizon=60,
                                        epsilon=2.0, delta=1e-5, seed=11))
    whole, looped = build(), build()
    trace = whole.run(X, y)
    for x, label in zip(X, y, strict=True):
        looped.learn_one(x, label)
    np.testing.assert_array_equal(whole.weights, looped.weights)
    np.testing.assert_array_equal(whole.model_weights, looped.model_weights)
    half = build()
    half.run(X[:25], y[:25])
    restored = pickle.loads(pickle.dumps(WithIntercept.from_state(half.get_state())))
    restored.run(X[25:], y[25:])
    np.testing.assert_array_equal(restored.model_weights, whole.model_weights)
    assert trace.weights.shape == (60, 4)
    Xc = clip_examples(X, y, 1.0, 1.0)[0]  # predictions are made on the clipped rows
    np.testing.assert_allclose(trace.predictions, np.einsum("ij,ij->i", whole.lift(Xc),
                                                            trace.weights), rtol=1e-12)
    with pytest.raises(HorizonExceededError):
        whole.learn_one(X[0], y[0])
    assert whole.t == 60


def test_predictions_are_coef_times_x_plus_intercept():
    inner = PrivateQuadraticFTL(3, horizon=300, epsilon=2.0, delta=1e-5, alpha=0.01, seed=0)
    m = WithIntercept(inner, intercept_scaling=0.5)
    X = _rows(300, d=2, seed=2) * 0.3
    m.run(X, np.clip(X @ [0.4, -0.2] + 0.3, -1, 1))
    for raw in (False, True):
        coef, b = m.linear_model(raw=raw)
        w = m.weights if raw else m.model_weights
        assert b == pytest.approx(w[-1] * 0.5 * (1 - 1e-12) / math.sqrt(1.25), rel=1e-14)
        for x in X[:5]:
            expect = float(np.clip(coef @ x + b, -1, 1)) if not raw else float(coef @ x + b)
            assert m.predict_one(x, raw=raw) == pytest.approx(expect, rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(m.coef, m.linear_model()[0])


def test_the_non_private_intercept_of_a_constant_label_is_the_ridge_formula():
    # zero features: PQFTL's iterate solves (t alpha + t z^2) w = t z y for z = kappa c,
    # so the intercept z w = y z^2 / (z^2 + alpha) at every step, and so is the average
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        inner = PrivateQuadraticFTL(3, horizon=50, epsilon=math.inf, alpha=0.04)
    m = WithIntercept(inner)
    m.run(np.zeros((50, 2)), np.full(50, -0.6))
    z2 = m._kappa**2 * INTERCEPT_SCALING**2
    assert m.intercept == pytest.approx(-0.6 * z2 / (z2 + 0.04), rel=1e-12)
    np.testing.assert_array_equal(m.coef, 0.0)


@pytest.mark.parametrize("name", LINEAR)
def test_every_linear_registry_learner_takes_an_intercept(name):
    spec = LEARNERS[name]
    rng = np.random.default_rng(4)
    X = np.abs(rng.normal(size=(80, 3))) * 0.3
    target = X @ [0.5, -0.3, 0.2] - 0.2
    y = np.sign(target) if spec.task == "classification" else target
    m = make_learner(name, 3, horizon=80, epsilon=2.0, seed=0, fit_intercept=True)
    assert isinstance(m, WithIntercept) and isinstance(m.learner, spec.cls)
    assert m.learner.dim == 4 and m.privacy.epsilon == pytest.approx(2.0)
    u = comparator(m, X, y)  # the best fixed point in the lifted coordinates
    trace = m.run(X, y, comparator=u)
    assert u.shape == (4,) and trace.regret.shape == (80,)
    best = m._loss_value(u, X, y).sum()
    domain = getattr(m.learner, "domain", None)
    for _ in range(5):
        v = u + 0.05 * rng.normal(size=4)
        v = domain.project(v) if domain is not None else v
        assert m._loss_value(v, X, y).sum() >= best - 1e-9


def test_refusals():
    with pytest.raises(InvalidInputError, match="fit_intercept must be False for kernel"):
        make_learner("kernel", 2, horizon=10, epsilon=1.0, fit_intercept=True)
    with pytest.raises(InvalidInputError, match="fit_intercept must be True or False"):
        make_learner("ridge", 2, horizon=10, epsilon=1.0, fit_intercept=1)
    kern = make_learner("kernel", 3, horizon=10, epsilon=1.0)
    with pytest.raises(InvalidInputError, match="learner must be a linear learner"):
        WithIntercept(kern)
    used = PrivateQuadraticFTL(3, horizon=10, epsilon=1.0, delta=1e-5)
    used.learn_one([0.1, 0.2, 0.0], 0.1)
    with pytest.raises(InvalidInputError, match="learner must be fresh"):
        WithIntercept(used)
    fresh = PrivateQuadraticFTL(3, horizon=10, epsilon=1.0, delta=1e-5)
    with pytest.raises(InvalidInputError, match="intercept_scaling must be > 0"):
        WithIntercept(fresh, intercept_scaling=0.0)
    with pytest.raises(InvalidInputError, match="learner must be a full-information"):
        WithIntercept(WithIntercept(fresh))
    m = WithIntercept(PrivateQuadraticFTL(3, horizon=10, epsilon=1.0, delta=1e-5))
    with pytest.raises(InvalidInputError, match="x must contain only finite"):
        m.learn_one([0.1, math.nan], 0.0)
    with pytest.raises(InvalidInputError):
        m.learn_one([0.1, 0.2, 0.3], 0.0)  # d + 1 columns: the lifted dimension is internal
    assert m.t == 0 and m.n_clipped_ == 0
