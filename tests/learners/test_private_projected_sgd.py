"""Independent checks of PrivateProjectedSGD's Privacy section (learners/private_projected_sgd).

What the noise protects: one step releases a noisy gradient at the current iterate theta (a
public point: adaptive composition), ``"full"``: G(theta; D) = sum_i grad f(theta; z_i), which
moves by <= 2L between replace-one neighbours; ``"one"``: n grad f(theta; z_i) for the sampled
index i, which moves by <= 2nL when i is the changed example and not at all otherwise
(L = loss.lipschitz(domain)). The noise is N(0, sigma^2 I) per step, sigma from
:meth:`calibrate`; this file recomputes that sigma without dpol.accounting.

Noise isolation: ``_SpyBall`` records each vector fit projects, theta_j - eta_j (g_j + noise_j).
With zero rows and the unregularised logistic loss every gradient is exactly 0, so
noise_j = (theta_j - arg_j) / eta_j with eta_j the documented step.
"""

from __future__ import annotations

import math
import zlib

import dp_accounting
import numpy as np
import pytest
from learner_cases import ball_projection
from scipy import stats
from scipy.optimize import brentq
from scipy.special import expit
from test_learner_sensitivity import _chi2_accepts

from dpol.learners import PrivateProjectedSGD
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

EPS, DELTA = 1.0, 1e-5


class _SpyBall(L2Ball):
    """An L2 ball recording every argument of ``project`` and the point it returns."""

    def __init__(self, dim: int, radius: float = 1.0) -> None:
        super().__init__(dim, radius)
        self.args: list[np.ndarray] = []
        self.outs: list[np.ndarray] = []

    def project(self, x):
        out = super().project(x)
        self.args.append(np.array(x, dtype=float))
        self.outs.append(out.copy())
        return out


class _Rng:
    """The two Generator methods fit uses; records the sampled indices (never reorders)."""

    def __init__(self, seed: int) -> None:
        self.rng, self.indices = np.random.default_rng(seed), []

    def integers(self, *args, **kwargs):
        out = self.rng.integers(*args, **kwargs)
        self.indices.extend(np.ravel(out).tolist())
        return out

    def standard_normal(self, *args, **kwargs):
        return self.rng.standard_normal(*args, **kwargs)


# ============================================================ (c) sensitivity of one step
# (loss, radius, least max ratio the search must reach). Small radii make the squared and
# logistic gradient sets at theta ~ 0 symmetric (+-y x), so 2L is nearly attained there; the
# hinge's linear zone attains it exactly. The ridge's alpha R part of L cancels between
# neighbours (measured 0.667) and the logistic 2L is loose (D(1) / (2 sigma(1)) = 0.752, see
# LogisticLoss.gradient_sensitivity), hence lower floors.
SENS_CASES = {
    "squared": (SquaredLoss(), 0.05, 0.9),
    "hinge": (HingeLoss(h=0.5), 1.0, 0.99),
    "logistic-small-ball": (LogisticLoss(), 0.1, 0.9),
    "logistic": (LogisticLoss(), 1.0, 0.74),
    "ridge": (Regularized(SquaredLoss(), 0.3), 0.5, 0.65),
}


def _rows(rng, n, p, x_bound=1.0):
    """n rows with norms uniform in [0, x_bound], a third exactly on the bound."""
    X = rng.normal(size=(n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    r = np.where(rng.random(n) < 1 / 3, 1.0, rng.random(n))
    return X * r[:, None] * x_bound


def _candidates(rng, theta, xb, yb):
    """Feature/label pairs for the adversarial search: +-axes, +-theta and random directions
    at norms xb and xb/2, labels in {+-yb, +-yb/2, 0}."""
    p = theta.size
    dirs = [np.eye(p), -np.eye(p), rng.normal(size=(4, p))]
    if np.linalg.norm(theta) > 0:
        u = theta / np.linalg.norm(theta)
        dirs.append(np.stack([u, -u]))
    D = np.vstack(dirs)
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    D = np.vstack([D * xb, D * xb / 2])
    labels = np.array([-1, -0.5, 0, 0.5, 1.0]) * yb
    return np.repeat(D, labels.size, axis=0), np.tile(labels, len(D))


def _released(solver, theta, X, y, i):
    """The pre-noise vector fit adds noise to (its own expressions)."""
    if solver.sampling == "full":
        return solver._grad_sum(theta, X, y)
    return len(y) * solver._grad_sum(theta, X[i:i + 1], y[i:i + 1])


@pytest.mark.parametrize("name", list(SENS_CASES))
def test_one_step_sensitivity_is_2L_full_and_2nL_one_and_nearly_attained(name):
    # Catches: a sensitivity below the true one (L instead of 2L, the regulariser not
    # cancelling, n missing for "one"), and a gradient other than the loss's (FD check).
    loss, radius, floor = SENS_CASES[name]
    data = loss.loss if isinstance(loss, Regularized) else loss
    xb, yb = data.x_bound, data.y_bound
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # str hash() is salted
    worst = {"full": 0.0, "one": 0.0}
    for trial in range(120):
        n, p = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        ball = _SpyBall(p, radius)
        full = PrivateProjectedSGD(loss, ball, steps=6)
        one = PrivateProjectedSGD(loss, ball, sampling="one", steps=6)
        L = full.lipschitz
        assert L == loss.lipschitz(ball) == one.lipschitz
        X, y = _rows(rng, n, p, xb), rng.choice([-1.0, 1.0], n) * rng.uniform(0.5, 1, n) * yb
        if trial < 5:  # the gradient fit uses is the objective's: central differences
            th, h = _rows(rng, 1, p, radius)[0], 1e-6
            fd = [(np.sum(loss.value(th + h * e, X, y)) - np.sum(loss.value(th - h * e, X, y)))
                  / (2 * h) for e in np.eye(p)]
            np.testing.assert_allclose(full._grad_sum(th, X, y), fd, atol=1e-5)
        full.fit(X, y, 1.0, np.random.default_rng(trial))  # iterates of a real noisy run
        thetas = [np.zeros(p), _rows(rng, 1, p, radius)[0], *ball.outs[1::2]]
        thetas.append(thetas[1] / max(np.linalg.norm(thetas[1]), 1e-300) * radius)
        for theta in thetas:
            Xc, yc = _candidates(rng, theta, xb, yb)
            G = loss.grad(theta, Xc, yc)
            gap = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2)
            a, b = np.unravel_index(int(np.argmax(gap)), gap.shape)
            i = int(rng.integers(n))
            for za, zb in (((Xc[a], yc[a]), (Xc[b], yc[b])),  # adversarial, then random
                           ((X[i], y[i]), (_rows(rng, 1, p, xb)[0], rng.uniform(-yb, yb)))):
                X1, y1, X2, y2 = X.copy(), y.copy(), X.copy(), y.copy()
                (X1[i], y1[i]), (X2[i], y2[i]) = za, zb
                for solver in (full, one):
                    for j in range(n):  # "one": every index the step may sample
                        move = np.linalg.norm(_released(solver, theta, X1, y1, j)
                                              - _released(solver, theta, X2, y2, j))
                        bound = 2 * L * (n if solver.sampling == "one" else 1)
                        assert move <= bound * (1 + 1e-12), (name, solver.sampling, move, bound)
                        if solver.sampling == "one" and j != i:
                            assert move == 0.0  # unsampled change: nothing moves
                        worst[solver.sampling] = max(worst[solver.sampling], move / bound)
    assert min(worst.values()) >= floor, worst  # a bound too small would be caught


# ============================================================ (b) the Gaussian noise in fit
def _mu_ref(eps: float, delta: float) -> float:
    """mu-GDP exactly (eps, delta)-DP (Dong-Roth-Su Cor. 2.13 / Balle-Wang), by root finding."""
    N = stats.norm.cdf
    return brentq(lambda m: N(-eps / m + m / 2) - math.exp(eps) * N(-eps / m - m / 2) - delta,
                  1e-3, 20.0, xtol=1e-14, rtol=1e-14)


def _eps_one(sigma: float, n: int, k: int, L: float) -> float:
    """RDP epsilon of k replace-one subsampled Gaussians (1 of n, sensitivity 2nL)."""
    acc = dp_accounting.rdp.RdpAccountant(
        orders=(1.5, *range(2, 65)),  # own orders, not the library's (optimum ~18)
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    event = dp_accounting.SampledWithoutReplacementDpEvent(
        n, 1, dp_accounting.GaussianDpEvent(sigma / (2 * n * L)))
    acc.compose(dp_accounting.SelfComposedDpEvent(event, k))
    return float(acc.get_epsilon(DELTA))


@pytest.mark.parametrize("sampling", ["full", "one"])
def test_fit_adds_gaussian_noise_of_the_calibrated_std(sampling):
    # Design: N = p k seeds = 25 * 40 * 4 = 4000 draws, level 1e-4 per tail. Under the null
    # Q = sum E^2 / sigma^2 ~ chi2_N, accepted for Q/N in [0.919, 1.085], i.e. an empirical std
    # within [0.959, 1.042] sigma. A 3/2 (2/3) scale multiplies Q by 2.25 (0.444), far outside:
    # the chance of accepting is < 1e-180 (computed below), so the fixed seed is no luck.
    # Catches: a variance used as std, a missing sqrt(k) or factor 2 in the calibration, the
    # wrong n in the "one" sensitivity, noise not added (or added twice) per step.
    n, p, k, seeds = 8, 25, 40, 4
    N, level = p * k * seeds, 1e-4
    hi, lo = stats.chi2.isf(level, N), stats.chi2.ppf(level, N)
    assert stats.chi2.cdf(hi / 2.25, N) < 1e-180 and stats.chi2.sf(lo * 2.25, N) < 1e-180
    loss = LogisticLoss()
    probe = PrivateProjectedSGD(loss, L2Ball(p), sampling=sampling, steps=k)
    L = probe.lipschitz
    assert L == pytest.approx(expit(1.0), rel=1e-15)  # x_bound y_bound sigma(Y R X)
    sigma = probe.calibrate([n], EPS, DELTA)
    if sampling == "full":  # sigma = 2L sqrt(k) / mu*(eps, delta), stated exactly
        ref = 2 * L * math.sqrt(k) / _mu_ref(EPS, DELTA)
        assert sigma == pytest.approx(ref, rel=1e-9)
    else:  # the smallest sigma the (own-orders) RDP accountant certifies
        ref = brentq(lambda s: _eps_one(s, n, k, L) - EPS, 0.9 * sigma, 1.1 * sigma, rtol=1e-5)
        assert sigma == pytest.approx(ref, rel=5e-3)  # orders differ; RDP is order-robust
    draws = []
    for seed in range(seeds):
        ball = _SpyBall(p)
        solver = PrivateProjectedSGD(loss, ball, sampling=sampling, steps=k)
        solver.fit(np.zeros((n, p)), np.ones(n), sigma, np.random.default_rng(seed))
        for j in range(k):  # args[0]/outs[0]: the projected start; then one per step
            if sampling == "full":  # min(1/(n beta), D/(sigma sqrt(p k))), beta = 1/4
                eta = min(1 / (n * 0.25), 2.0 / (sigma * math.sqrt(p * k)))
            else:  # ||C|| / sqrt(j (n^2 L^2 + p sigma^2)), j = 1..k
                eta = 1.0 / math.sqrt((j + 1) * ((n * L) ** 2 + p * sigma**2))
            draws.append((ball.outs[j] - ball.args[j + 1]) / eta)
        assert len(ball.args) == k + 1
    E = np.concatenate(draws)
    assert _chi2_accepts(E, ref, level), (float(E.std()) / ref, sampling)
    assert not _chi2_accepts(E, 1.5 * ref, level)
    assert not _chi2_accepts(E, ref / 1.5, level)
    assert abs(float(E.mean())) < 4 * ref / math.sqrt(N)
    steps = np.array(draws).reshape(seeds, k, p)  # fresh noise each step: no correlation
    assert abs(np.corrcoef(steps[:, :-1].ravel(), steps[:, 1:].ravel())[0, 1]) < 4 / math.sqrt(N)


# ============================================================ (d) zero noise = plain PSGD
def _grad(loss, theta, x, y):
    """Own per-example gradient: squared (x.theta - y) x, logistic -y x sigma(-y x.theta),
    plus alpha theta for Regularized."""
    alpha, base = (loss.alpha, loss.loss) if isinstance(loss, Regularized) else (0.0, loss)
    z = float(x @ theta)
    d = z - y if isinstance(base, SquaredLoss) else -y * expit(-y * z)
    return d * x + alpha * theta


@pytest.mark.parametrize("sampling, loss", [
    ("full", SquaredLoss()), ("full", LogisticLoss()),
    # Regularized: the step is 1/(n beta) with beta = smoothness, alpha included once
    ("full", Regularized(SquaredLoss(), 0.3)),
    ("one", SquaredLoss()), ("one", LogisticLoss()), ("one", Regularized(SquaredLoss(), 0.3)),
])
def test_zero_noise_is_plain_projected_sgd(sampling, loss):
    # sigma = 0 is the non-private run (epsilon() says inf). Catches a step size other than
    # documented, averaging vs last iterate swapped, a start not projected, noise leaking in.
    n, p, k, R = 7, 3, 25, 0.8
    rng = np.random.default_rng(11)
    X, y = _rows(rng, n, p), rng.uniform(-1, 1, n)
    if isinstance(loss, LogisticLoss):
        y = np.sign(y)
    start = np.array([2.0, -1.0, 0.5])  # outside C: fit must project it first
    solver = PrivateProjectedSGD(loss, L2Ball(p, R), sampling=sampling, steps=k)
    assert solver.epsilon([n], 0.0, DELTA) == math.inf
    draw = _Rng(3)
    got = solver.fit(X, y, 0.0, draw, start)
    theta, total = ball_projection(start, R), np.zeros(p)
    L = loss.lipschitz(R)
    for j in range(k):
        if sampling == "full":
            total += theta
            g = sum(_grad(loss, theta, X[i], y[i]) for i in range(n))
            theta = ball_projection(theta - g / (n * loss.smoothness), R)
        else:
            g = n * _grad(loss, theta, X[draw.indices[j]], y[draw.indices[j]])
            theta = ball_projection(theta - R / math.sqrt((j + 1) * (n * L) ** 2) * g, R)
    want = total / k if sampling == "full" else theta
    assert len(draw.indices) == (k if sampling == "one" else 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# ============================================================ out-of-bound data in fit
def test_fit_clips_out_of_bound_rows():
    # Paired runs with the same seed: the noise is identical, so the difference of the first
    # projected arguments is eta (G' - G), the released gradient's move (eta data-free).
    loss, p, n = SquaredLoss(), 2, 3
    X = np.array([[10.0, 0.0], [0.3, 0.1], [0.0, 0.5]])
    y, y2 = np.array([-1.0, 0.2, 0.4]), np.array([1.0, 0.2, 0.4])
    moves = []
    for yy in (y, y2):
        ball = _SpyBall(p)
        solver = PrivateProjectedSGD(loss, ball, steps=3)
        sigma = solver.calibrate([n], EPS, DELTA)
        solver.fit(X, yy, sigma, np.random.default_rng(0))
        moves.append(ball.args[1])
    eta = min(1 / (n * loss.smoothness), 2.0 / (sigma * math.sqrt(p * 3)))
    move = float(np.linalg.norm(moves[0] - moves[1])) / eta
    # fit is public: the row of norm 10 is clipped to x_bound = 1 (and counted), so the
    # release moves by at most 2L as its calibration assumes (20 before the fix)
    assert move <= 2 * solver.lipschitz * (1 + 1e-12), (move, 2 * solver.lipschitz)
    assert solver.n_clipped_ == 1
