"""Every loss, one contract: gradients, batching and the declared constants (attained)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L1Ball, L2Ball

EPS = np.finfo(float).eps
FD_STEP = 1e-5

# Each case: (loss, sup|φ''|, sup|φ'''| or None when φ'' jumps, regularisation alpha).
# They give the finite-difference truncation bound used in test_gradient_matches_fd.
CASES = {
    "squared": (SquaredLoss(), 1.0, 0.0, 0.0),
    "logistic": (LogisticLoss(), 0.25, 1.0 / (6.0 * math.sqrt(3.0)), 0.0),
    "hinge-0.3": (HingeLoss(h=0.3), 1.0 / 0.3, None, 0.0),
    "hinge-1": (HingeLoss(), 1.0, None, 0.0),
    "ridge-logistic": (Regularized(LogisticLoss(), 0.7), 0.25, 1.0 / (6.0 * math.sqrt(3.0)), 0.7),
    "ridge-hinge": (Regularized(HingeLoss(h=0.5), 0.2), 2.0, None, 0.2),
    "ridge-squared": (Regularized(SquaredLoss(), 1.5), 1.0, 0.0, 1.5),
}


def fd_tolerance(case, w, x, y, f_scale):
    """Bound on |central difference − ∂f/∂w_k| for every k, plus rounding.

    f(w + t e_k) = φ(z + t y' x_k) + (α/2)‖w + t e_k‖² (y' = y for margin losses, the
    squared loss has φ(z) = ½(y − z)², y' = 1). Central differences with step h err by
    at most h²/6 · sup|∂³f| for C³ functions (the α-term is quadratic: exact), and by
    at most h/2 · sup|∂²f| when only the gradient is Lipschitz (smoothed hinge, whose
    φ'' jumps at the kinks). Rounding of the two values adds 4ε(1 + |f|)/h·2.
    """
    _, phi2, phi3, alpha = case
    scale = np.abs(x) * (1.0 if isinstance(_unwrap(case[0]), SquaredLoss) else abs(y))
    if phi3 is None:
        trunc = FD_STEP / 2.0 * (phi2 * scale**2 + alpha)
    else:
        trunc = FD_STEP**2 / 6.0 * phi3 * scale**3
    return trunc + 8.0 * EPS * (1.0 + f_scale) / FD_STEP + 1e-13


def _unwrap(loss):
    return loss.loss if isinstance(loss, Regularized) else loss


def central_differences(loss, w, x, y):
    g = np.empty_like(w)
    for k in range(w.shape[0]):
        e = np.zeros_like(w)
        e[k] = FD_STEP
        g[k] = (loss.value(w + e, x, y) - loss.value(w - e, x, y)) / (2.0 * FD_STEP)
    return g


@st.composite
def example(draw):
    d = draw(st.integers(1, 5))
    elems = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
    w = draw(arrays(np.float64, d, elements=elems))
    x = draw(arrays(np.float64, d, elements=elems))
    y = draw(st.one_of(st.sampled_from([-1.0, 1.0]), elems))
    return w, x, y


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=150, deadline=None)
@given(ex=example())
def test_gradient_matches_fd(name, ex):
    w, x, y = ex
    case = CASES[name]
    loss = case[0]
    grad = loss.grad(w, x, y)
    fd = central_differences(loss, w, x, y)
    tol = fd_tolerance(case, w, x, y, abs(loss.value(w, x, y)))
    assert np.all(np.abs(grad - fd) <= tol), (grad, fd, tol)


@pytest.mark.parametrize("name", list(CASES))
def test_batched_equals_per_sample(name):
    loss = CASES[name][0]
    rng = np.random.default_rng(11)
    w, X = rng.normal(size=4), rng.normal(size=(9, 4))
    y = rng.choice([-1.0, 1.0], size=9) * rng.uniform(0.5, 1.5, size=9)
    values, grads = loss.value(w, X, y), loss.grad(w, X, y)
    assert values.shape == (9,) and grads.shape == (9, 4)
    for i in range(9):
        assert isinstance(loss.value(w, X[i], y[i]), float)
        np.testing.assert_allclose(values[i], loss.value(w, X[i], y[i]), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(grads[i], loss.grad(w, X[i], y[i]), rtol=1e-13, atol=1e-15)


BOUNDS = [(1.0, 1.0), (2.0, 0.5), (0.3, 3.0)]


def make(kind, x_bound, y_bound):
    return {
        "squared": lambda: SquaredLoss(x_bound=x_bound, y_bound=y_bound),
        "logistic": lambda: LogisticLoss(x_bound=x_bound, y_bound=y_bound),
        "hinge": lambda: HingeLoss(h=0.4, x_bound=x_bound, y_bound=y_bound),
        "hinge-wide": lambda: HingeLoss(h=7.0, x_bound=x_bound, y_bound=y_bound),
        "ridge": lambda: Regularized(SquaredLoss(x_bound=x_bound, y_bound=y_bound), 0.8),
        "ridge-logistic": lambda: Regularized(LogisticLoss(x_bound=x_bound, y_bound=y_bound), 0.3),
    }[kind]()


KINDS = ["squared", "logistic", "hinge", "hinge-wide", "ridge", "ridge-logistic"]


def bounded_samples(rng, n, d, x_bound, y_bound, radius):
    """Weights in the ball of radius ``radius``, data within the bounds, extremes included."""
    def ball(scale):
        v = rng.normal(size=(n, d))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return v * scale * np.where(rng.random((n, 1)) < 0.3, 1.0, rng.random((n, 1)))

    y = y_bound * np.where(rng.random(n) < 0.5, rng.choice([-1.0, 1.0], n), rng.uniform(-1, 1, n))
    return ball(radius), ball(x_bound), y


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("x_bound", "y_bound"), BOUNDS)
def test_lipschitz_bound_holds_and_is_attained(kind, x_bound, y_bound):
    loss, d, radius = make(kind, x_bound, y_bound), 3, 1.7
    lip = loss.lipschitz(L2Ball(d, radius))
    assert lip == loss.lipschitz(radius) == loss.lipschitz(L1Ball(d, radius))
    W, X, y = bounded_samples(np.random.default_rng(3), 4000, d, x_bound, y_bound, radius)
    grads = np.array([loss.grad(w, x, t) for w, x, t in zip(W, X, y, strict=True)])
    norms = np.linalg.norm(grads, axis=1)
    assert norms.max() <= lip * (1 + 1e-12)
    # worst case of the derivations: w = ±R u, x = X u, y = ±Y
    u = np.ones(d) / math.sqrt(d)
    w = radius * u if kind.startswith("ridge") or kind == "squared" else -radius * u
    y_worst = -y_bound if kind in ("squared", "ridge") else y_bound
    worst = np.linalg.norm(loss.grad(w, x_bound * u, y_worst))
    if kind == "ridge-logistic":  # triangle inequality: a bound, not attained
        assert worst <= lip
    else:
        np.testing.assert_allclose(worst, lip, rtol=1e-12)


def test_lipschitz_of_unbounded_domain():
    assert SquaredLoss().lipschitz(None) == math.inf
    assert LogisticLoss(x_bound=2.0).lipschitz(None) == 2.0
    assert HingeLoss(h=5.0).lipschitz() == 1.0
    assert Regularized(LogisticLoss(), 0.0).lipschitz() == 1.0
    assert Regularized(LogisticLoss(), 0.1).lipschitz() == math.inf


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("x_bound", "y_bound"), BOUNDS)
def test_smoothness_bound_holds(kind, x_bound, y_bound):
    loss, d = make(kind, x_bound, y_bound), 3
    rng = np.random.default_rng(4)
    W1, X, y = bounded_samples(rng, 3000, d, x_bound, y_bound, 3.0)
    W2 = W1 + rng.normal(size=W1.shape) * rng.choice([1e-3, 0.1, 1.0], size=(3000, 1))
    for w1, w2, x, t in zip(W1, W2, X, y, strict=True):
        diff = np.linalg.norm(loss.grad(w1, x, t) - loss.grad(w2, x, t))
        assert diff <= loss.smoothness * np.linalg.norm(w1 - w2) * (1 + 1e-9) + 1e-15


@pytest.mark.parametrize(("x_bound", "y_bound"), BOUNDS)
def test_smoothness_is_attained(x_bound, y_bound):
    u = np.array([0.6, 0.8])
    x = x_bound * u

    def ratio(loss, w1, w2):
        g = loss.grad(w1, x, y_bound) - loss.grad(w2, x, y_bound)
        return np.linalg.norm(g) / np.linalg.norm(w1 - w2)

    sq = SquaredLoss(x_bound=x_bound, y_bound=y_bound)
    np.testing.assert_allclose(ratio(sq, 0.3 * u, -0.2 * u), sq.smoothness, rtol=1e-12)
    lg = LogisticLoss(x_bound=x_bound, y_bound=y_bound)
    np.testing.assert_allclose(ratio(lg, 1e-5 * u, -1e-5 * u), lg.smoothness, rtol=1e-8)
    hg = HingeLoss(h=0.5, x_bound=x_bound, y_bound=y_bound)
    m = 0.75 / (y_bound * x_bound)  # margins 0.75 ± 0.01·... inside the quadratic zone (0.5, 1)
    w1, w2 = (m + 0.01 / (y_bound * x_bound)) * u, (m - 0.01 / (y_bound * x_bound)) * u
    np.testing.assert_allclose(ratio(hg, w1, w2), hg.smoothness, rtol=1e-12)
    rg = Regularized(sq, 0.4)
    assert rg.smoothness == sq.smoothness + 0.4
    np.testing.assert_allclose(ratio(rg, 0.3 * u, -0.2 * u), rg.smoothness, rtol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_strong_convexity_holds_and_is_attained(kind):
    loss, d = make(kind, 1.0, 1.0), 3
    mu = loss.strong_convexity
    assert mu == (0.8 if kind == "ridge" else 0.3 if kind == "ridge-logistic" else 0.0)
    rng = np.random.default_rng(5)
    W1, X, y = bounded_samples(rng, 2000, d, 1.0, 1.0, 3.0)
    W2 = W1 + rng.normal(size=W1.shape)
    for w1, w2, x, t in zip(W1, W2, X, y, strict=True):
        lower = loss.value(w1, x, t) + loss.grad(w1, x, t) @ (w2 - w1)
        lower += 0.5 * mu * np.sum((w2 - w1) ** 2)
        assert loss.value(w2, x, t) >= lower - 1e-12 * (1 + abs(lower))
    # equality when w2 − w1 ⊥ x: the base loss is flat in that direction
    x, w1, w2 = np.array([1.0, 0.0, 0.0]), np.array([0.2, 0.1, 0.0]), np.array([0.2, -0.4, 0.9])
    lower = loss.value(w1, x, 1.0) + loss.grad(w1, x, 1.0) @ (w2 - w1)
    lower += 0.5 * mu * np.sum((w2 - w1) ** 2)
    np.testing.assert_allclose(loss.value(w2, x, 1.0), lower, rtol=1e-12)
