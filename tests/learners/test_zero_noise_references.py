"""Zero-noise learners against independent non-private references written here.

With epsilon = inf a private learner must be exactly its clean algorithm; with epsilon
finite the release minus that clean twin must be the Gaussian the Privacy section states.
The references below share no code path with dpol (no _linear, no mu_star).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from learner_cases import ball_projection
from scipy import special
from test_learner_sensitivity import _chi2_accepts

from dpol.errors import NonPrivateWarning
from dpol.learners.output_perturbation import OutputPerturbation
from dpol.learners.private_offline_learner import PrivateOfflineLearner
from dpol.losses import LogisticLoss

D, T = 3, 30


def _stream(seed: int, n: int = T) -> tuple[np.ndarray, np.ndarray]:
    # rows of norm <= 0.9 < x_bound = 1: no clipping, so the reference sees the same data
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    X *= 0.9 * rng.uniform(0.2, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([1.0, -0.5, 0.25]) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _grad_logistic(w: np.ndarray, x: np.ndarray, y: float) -> np.ndarray:
    # d/dw log(1 + exp(-y <x, w>)) = -y sigmoid(-y <x, w>) x
    return -y * special.expit(-y * float(x @ w)) * x


def _ref_implicit_step(w, x, y, eta, alpha, r):
    """argmin_{|v| <= r} 1/2 |v - w|^2 + eta (logistic(<x, v>, y) + alpha/2 |v|^2).

    Solved by projected gradient descent (the library uses a KKT root find instead). The
    objective is mu-strongly convex and L-smooth with mu = 1 + eta alpha, L = mu + eta
    |x|^2 / 4 (logistic'' <= 1/4), so step 1/L contracts by q = 1 - mu/L < 1 and the
    distance to the minimiser is <= |last move| q / (1 - q); we stop at a move < 1e-15.
    """
    mu = 1.0 + eta * alpha
    L = mu + eta * float(x @ x) / 4.0
    v = w.copy()
    for _ in range(100_000):
        g = (v - w) + eta * (_grad_logistic(v, x, y) + alpha * v)
        nxt = ball_projection(v - g / L, r)
        if float(np.linalg.norm(nxt - v)) < 1e-15:
            return nxt
        v = nxt
    raise AssertionError("reference did not converge")


@pytest.mark.parametrize(("radius", "excess"), [(3.0, 1.0), (0.3, 0.02)])
def test_pol_zero_noise_is_averaged_implicit_gd(radius, excess):
    # The docstring (and code) of POL is NOT "release the regularised ERM minimiser": it
    # runs IGD with eta_t = 1/(alpha t) on loss + alpha/2 |w|^2 over the ball of radius
    # x_star_norm, alpha = excess / x_star_norm^2, and releases Proj_C(mean(w_2..w_{T+1}))
    # once, after the last element (0 before). Case 1: the ball is never reached; case 2
    # (small ball) makes the constraint active, exercising the projected branch.
    X, y = _stream(1)
    with pytest.warns(NonPrivateWarning):
        pol = PrivateOfflineLearner(D, loss=LogisticLoss(), x_star_norm=radius, excess=excess,
                                    horizon=T, epsilon=math.inf, seed=0)
    trace = pol.run(X, y)
    alpha = excess / radius**2
    w, path = np.zeros(D), []
    for t in range(1, T + 1):
        w = _ref_implicit_step(w, X[t - 1], y[t - 1], 1.0 / (alpha * t), alpha, radius)
        path.append(w)
    path = np.array(path)
    active = np.isclose(np.linalg.norm(path, axis=1), radius, rtol=1e-12)
    assert active.any() == (radius < 1.0)  # the case really is (in)active as intended
    # nothing data-dependent before the horizon: every pre-step release is the start 0
    assert np.array_equal(trace.weights, np.zeros((T, D)))
    # Each step is a 1-contraction of w (prox of a convex function), so per-step solver
    # errors (reference ~1e-15, library's root find ROOT_TOL = 1e-14 on the margin, i.e.
    # ~1e-14 on v) add up to < T * 1e-13 at most; 1e-11 leaves a safety factor of ~3.
    np.testing.assert_allclose(trace.final_weights, ball_projection(path.mean(axis=0), radius),
                               rtol=0, atol=1e-11)
    assert pol.privacy.epsilon == math.inf


# ---------------------------------------------------------------- OutputPerturbation
ALPHA, R = 0.5, 2.0
LAM = 2.0 * (1.0 + ALPHA * R) / ALPHA  # 2 G / alpha, G = Lipschitz of loss + reg on C


def _ogd_step(w: np.ndarray, t: int, x: np.ndarray, y: float) -> np.ndarray:
    """Projected OGD on logistic + alpha/2 |w|^2 with eta_t = 1/(alpha t) (JKT PIGD's GD)."""
    return ball_projection(w - (_grad_logistic(w, x, y) + ALPHA * w) / (ALPHA * t), R)


def _loss(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    # run() needs a loss for its trace (OutputPerturbation raises without one)
    return np.logaddexp(0.0, -y * (X @ w)) + ALPHA / 2 * float(w @ w)


def _op(T_: int, **kw) -> OutputPerturbation:
    return OutputPerturbation(D, lam=LAM, horizon=T_, step=_ogd_step, loss=_loss, delta=1e-5,
                              **kw)


def test_output_perturbation_zero_noise_is_the_clean_loop():
    X, y = _stream(2)
    with pytest.warns(NonPrivateWarning):
        trace = _op(T, epsilon=math.inf, seed=0).run(X, y)
    # the reference loop, written out: w_1 = 0; w_{t+1} = Proj(w_t - eta_t grad f_t(w_t))
    ref, w = [], np.zeros(D)
    for t in range(1, T + 1):
        ref.append(w.copy())
        g = -y[t - 1] * special.expit(-y[t - 1] * (X[t - 1] @ w)) * X[t - 1] + ALPHA * w
        v = w - g / (ALPHA * t)
        w = v * min(1.0, R / np.linalg.norm(v))
    # same float operations up to ordering, so agreement to rounding (rtol 1e-12)
    np.testing.assert_allclose(trace.weights, np.array(ref), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(trace.final_weights, w, rtol=1e-12, atol=1e-15)


def test_output_perturbation_noise_is_the_stated_gaussian():
    # Privacy section (tight, fixed schedule): s_t = z lam / t, z = sqrt(n) / mu*(eps, delta)
    # over the n = T noised releases; 1/mu* is the analytic-Gaussian sigma at sensitivity 1,
    # recomputed with dp_accounting.get_sigma_gaussian (tol 1e-12), not dpol's mu_star.
    # Sample: N = 400 seeds x T = 30 steps x D = 3 coordinates, each noise divided by its
    # stated s_t -> n = 36000 standardised entries. Under the null Q/n has std
    # sqrt(2/n) = 0.75%; the level-1e-4 two-sided band is ~ +-3.9 sd = +-2.9% on Q/n.
    # Scales 2/3 and 3/2 move Q/n to 2.25 and 0.44: > 70 sd outside, always rejected.
    # Per step (n = 1200) the band is +-16% on Q/n against shifts of -56% / +125%.
    N, eps, delta = 400, 1.0, 1e-5
    X, y = _stream(3)
    with pytest.warns(NonPrivateWarning):
        clean = np.vstack([_op(T, epsilon=math.inf).run(X, y).weights[1:],
                           _op(T, epsilon=math.inf).run(X, y).final_weights])
    released = np.stack([np.vstack([tr.weights[1:], tr.final_weights]) for tr in
                         (_op(T, epsilon=eps, seed=s).run(X, y) for s in range(N))])
    E = released - clean  # (N, T, D); project=None so releases are never clipped
    t = np.arange(1, T + 1)
    s_t = math.sqrt(T) * dp_accounting.get_sigma_gaussian(eps, delta) * LAM / t
    ref = _op(T, epsilon=eps, seed=0)
    # the learner's own statement agrees with the independent one (tolerance of the
    # two bisections, both <= 1e-9 relative)
    np.testing.assert_allclose([ref.noise_std(int(k)) for k in t], s_t, rtol=1e-8)
    Z = E / s_t[None, :, None]
    assert abs(float(Z.mean())) < 4.0 / math.sqrt(Z.size)  # mean 0 (4 sd)
    assert _chi2_accepts(Z, 1.0)
    assert not _chi2_accepts(Z, 2.0 / 3.0)
    assert not _chi2_accepts(Z, 1.5)
    for k in (0, T // 2, T - 1):  # per step too: a mis-sized s_t at one t would hide
        assert _chi2_accepts(Z[:, k], 1.0), k
        assert not _chi2_accepts(Z[:, k], 2.0 / 3.0) and not _chi2_accepts(Z[:, k], 1.5)
    # fresh noise each step: |corr| between consecutive steps < 4 / sqrt(N D)
    c = np.corrcoef(Z[:, 0].ravel(), Z[:, 1].ravel())[0, 1]
    assert abs(float(c)) < 4.0 / math.sqrt(N * D)
