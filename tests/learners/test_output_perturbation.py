"""OutputPerturbation against an independent non-private reference.

With epsilon = inf it must be exactly its clean loop; with epsilon finite the release minus
that clean twin must be the Gaussian the Privacy section states. The reference shares no
code path with dpol (no mu_star: dp_accounting's sigma).
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from learner_cases import ball_projection, logistic_grad, reference_stream
from scipy import special
from test_learner_sensitivity import _chi2_accepts

from dpol.errors import NonPrivateWarning
from dpol.learners.output_perturbation import OutputPerturbation

D, T = 3, 30


ALPHA, R = 0.5, 2.0
LAM = 2.0 * (1.0 + ALPHA * R) / ALPHA  # 2 G / alpha, G = Lipschitz of loss + reg on C


def _ogd_step(w: np.ndarray, t: int, x: np.ndarray, y: float) -> np.ndarray:
    """Projected OGD on logistic + alpha/2 |w|^2 with eta_t = 1/(alpha t) (JKT PIGD's GD)."""
    return ball_projection(w - (logistic_grad(w, x, y) + ALPHA * w) / (ALPHA * t), R)


def _loss(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    # run() needs a loss for its trace (OutputPerturbation raises without one)
    return np.logaddexp(0.0, -y * (X @ w)) + ALPHA / 2 * float(w @ w)


def _op(T_: int, **kw) -> OutputPerturbation:
    return OutputPerturbation(D, lam=LAM, horizon=T_, step=_ogd_step, loss=_loss, delta=1e-5,
                              **kw)


def test_output_perturbation_zero_noise_is_the_clean_loop():
    X, y = reference_stream(2, T)
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
    X, y = reference_stream(3, T)
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
