"""PrivateIncrementalERM (M1): the scale each solver call receives, and the noise it adds.

With solver="bst" / "frank-wolfe" the scale each call receives equals an independent
recomputation of the Privacy section's calibration, and the noise actually added per call
has that scale (chi-square tests that reject 2/3 and 3/2 of it). The solver classes
themselves are tested in test_private_projected_sgd.py and test_private_frank_wolfe.py;
here only what M1 passes them over its calls.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq
from scipy.special import expit
from test_learner_sensitivity import _chi2_accepts
from test_private_projected_sgd import _SpyBall

from dpol.learners.private_incremental_erm import PrivateIncrementalERM
from dpol.losses import HingeLoss, LogisticLoss
from dpol.sets import L1Ball

EPS, DELTA = 1.0, 1e-5


def _bst_epsilon(sigma, sizes, k, L):
    """Own-orders RDP epsilon of M1 with BST: per call on n examples, k replace-one
    subsampled Gaussians (1 of n, sensitivity 2 n L, multiplier sigma / (2 n L))."""
    acc = dp_accounting.rdp.RdpAccountant(
        orders=(1.5, *range(2, 33)), neighboring_relation=dp_accounting.NeighboringRelation.
        REPLACE_ONE)
    for n in sizes:
        event = dp_accounting.SampledWithoutReplacementDpEvent(
            n, 1, dp_accounting.GaussianDpEvent(sigma / (2 * n * L)))
        acc.compose(dp_accounting.SelfComposedDpEvent(event, k))
    return float(acc.get_epsilon(DELTA))


@pytest.mark.parametrize("calibration", ["tight", "paper"])
def test_bst_calls_receive_and_add_the_stated_gaussian_noise(calibration, monkeypatch):
    # Zero rows and the unregularised logistic loss: every data gradient is exactly 0, so
    # step j of a call is theta_j - eta_j sigma z_j with eta_j = R / sqrt(j (n^2 L^2 + p
    # sigma^2)), and sigma z_j = (theta_j - arg_j) / eta_j is recovered from the spy ball
    # (eta_j from the sigma the call received: what it really added). Design: p = 50, k = 40
    # steps, 2 calls (n = 8, 16): N = 4000 draws of the noise over the stated std, which
    # are N(0, 1) under H0; level 1e-4 per tail accepts an empirical std in [0.959, 1.042],
    # while 3/2 (2/3) moves the statistic by 2.25 (0.444): accepted with prob < 1e-180.
    p, k, tau, T = 50, 40, 8, 16
    sizes, L = [8, 16], expit(1.0)  # logistic: L = X Y sigma(Y R X) at X = Y = R = 1
    if calibration == "tight":  # one sigma for all calls: composition of every step is eps
        ref = brentq(lambda s: _bst_epsilon(s, sizes, k, L) - EPS, 20.0, 2000.0, rtol=1e-6)
        expected, rel = dict.fromkeys(sizes, ref), 5e-3  # library orders differ (0.15%)
    else:  # KNJ split, then BST14's sigma per call (both stated in the Privacy sections)
        eps_c = EPS / (2 * math.sqrt(2 * T / tau * math.log(2 / DELTA)))
        delta_c = DELTA * tau / (2 * T)
        expected = {n: math.sqrt(32 * math.log(n / delta_c) * math.log(1 / delta_c)) * L * n
                    / eps_c for n in sizes}
        rel = 1e-12
    ball = _SpyBall(p)
    m = PrivateIncrementalERM(p, loss=LogisticLoss(), domain=ball, horizon=T, epsilon=EPS,
                              delta=DELTA, tau=tau, solver="bst", solver_options={"steps": k},
                              calibration=calibration, seed=11)
    calls, original = [], m.solver.fit

    def spy(X, y, sigma, rng, start=None):
        ball.args.clear()
        ball.outs.clear()
        out = original(X, y, sigma, rng, start)
        n = len(y)
        eta = 1.0 / np.sqrt(np.arange(1, k + 1) * ((n * L) ** 2 + p * sigma**2))
        noise = (np.array(ball.outs[:k]) - np.array(ball.args[1:])) / eta[:, None]
        calls.append((n, sigma, noise / expected[n]))  # over the stated std: N(0, 1)
        return out

    monkeypatch.setattr(m.solver, "fit", spy)
    m.run(np.zeros((T, p)), np.ones(T))
    assert [n for n, _, _ in calls] == sizes and len(ball.args) == k + 1
    E = np.concatenate([e.ravel() for _, _, e in calls])
    assert E.size == 4000
    assert _chi2_accepts(E, 1.0), float(E.std())
    assert not _chi2_accepts(E, 1.5) and not _chi2_accepts(E, 1 / 1.5)
    assert abs(float(E.mean())) < 4 / math.sqrt(E.size)
    for n, sigma, _ in calls:  # and the argument itself is the recomputed calibration
        assert sigma == pytest.approx(expected[n], rel=rel)


FW_X, FW_TAU, FW_CALLS, FW_RUNS = np.array([0.85, 0.3]), 80, 40, 100


def test_frank_wolfe_calls_receive_the_stated_scale_and_select_by_its_law():
    # Rows 1..tau are (x, -1) with x = (0.85, 0.3), the rest x = 0; HingeLoss(h = 0.1) on
    # L1Ball(2): |<x, theta>| <= 0.85 < 1 - h keeps every example in the hinge's linear zone,
    # so the gradient of the sum is -sum y_i x_i = tau x at every call and every start. With
    # iterations = 1 (mu_0 = 1) each release at a call is the selected vertex: 40 calls x
    # 100 seeds = N = 4000 i.i.d. draws of the exponential mechanism softmin(V g / b).
    # Stated b (Privacy): score sensitivity Delta = 2 L max ||v|| = 2 (L = X Y min(1, (1 +
    # Y R X)/h) = 1), eps0 = 2 Delta / b, k = 40 selections; the smallest b with
    # min(k eps0, eps of k eps0^2/8-zCDP) <= eps. Score range / b = 2.66, every expected
    # count >= 169; power computed below.
    rho = brentq(lambda r: _zcdp_epsilon(r) - EPS, 1e-4, 1.0, xtol=1e-14, rtol=1e-12)
    delta_s, k = 2.0, FW_CALLS
    b = min(2 * delta_s * math.sqrt(k / (8 * rho)), 2 * delta_s * k / EPS)
    V = np.vstack([np.eye(2), -np.eye(2)])
    scores = V @ (FW_TAU * FW_X)

    def law(scale):
        w = np.exp(-(scores - scores.min()) / scale)
        return w / w.sum()

    T = FW_TAU * FW_CALLS
    X, y = np.zeros((T, 2)), -np.ones(T)
    X[:FW_TAU] = FW_X
    counts, scales = np.zeros(4), []
    for seed in range(FW_RUNS):
        m = PrivateIncrementalERM(2, loss=HingeLoss(h=0.1), domain=L1Ball(2), horizon=T,
                                  epsilon=EPS, delta=DELTA, tau=FW_TAU, solver="frank-wolfe",
                                  solver_options={"iterations": 1}, seed=seed)
        original = m.solver.fit

        def spy(Xp, yp, scale, rng, start=None, original=original):
            out = original(Xp, yp, scale, rng, start)
            hit = np.flatnonzero(np.all(V == out, axis=1))
            assert hit.size == 1  # the release is exactly one vertex
            counts[hit[0]] += 1
            scales.append(scale)
            return out

        m.solver.fit = spy  # a local learner: no monkeypatch needed
        m.run(X, y)
    N = FW_CALLS * FW_RUNS
    assert counts.sum() == N and N * law(b).min() > 150
    crit = stats.chi2.ppf(1 - 1e-4, 3)
    assert stats.chisquare(counts, N * law(b)).pvalue > 1e-4
    for f in (2 / 3, 3 / 2):
        q = law(f * b)  # noncentrality N sum (p - q)^2 / q: 595 at 2/3, 253 at 3/2
        lam = N * float(np.sum((law(b) - q) ** 2 / q))
        assert stats.ncx2.sf(crit, 3, lam) > 1 - 1e-12
        assert stats.chisquare(counts, N * q).pvalue < 1e-4
    np.testing.assert_allclose(scales, b, rtol=1e-5)  # every call, the recomputed scale


def _zcdp_epsilon(rho):
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(rho))
    return float(acc.get_epsilon(DELTA))
