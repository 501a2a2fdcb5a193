"""PrivateIncrementalERM (M1): the scale each solver call receives, and the noise it adds.

With solver="bst" / "frank-wolfe" the scale each call receives equals an independent
recomputation of the Privacy section's calibration, and the noise actually added per call
has that scale (chi-square tests that reject 2/3 and 3/2 of it). The solver classes
themselves are tested in test_private_projected_sgd.py and test_private_frank_wolfe.py;
here only what M1 passes them over its calls. Then its arguments, budget split,
calibration, calls every tau steps and its noise-free run. The contracts it runs through
with the other KNJ learners: test_private_incremental_regression.py.
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
from test_private_incremental_regression import INF, stream
from test_private_projected_sgd import _SpyBall

from dpol.accounting import mu_star
from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.accounting.presets import knj_advanced_composition, knj_mechanism1_split
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.evaluation.excess_risk import released_models
from dpol.learners.private_frank_wolfe import PrivateFrankWolfe
from dpol.learners.private_incremental_erm import PrivateIncrementalERM
from dpol.losses import HingeLoss, LogisticLoss, SquaredLoss
from dpol.sets import L1Ball, L2Ball

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


# ------------------------------------------ arguments, budget split, calls, no noise
@pytest.mark.parametrize("kwargs, match", [
    ({"tau": 17}, "tau must be <= horizon = 16"),
    ({"tau": 0}, "tau must be an integer >= 1"),
    ({"solver": "adam"}, "solver must be one of 'sgd', 'bst', 'frank-wolfe'"),
    ({"solver": object()}, "solver must be 'sgd', 'bst', 'frank-wolfe' or an object"),
    ({"solver": "frank-wolfe"}, "domain must be an L1Ball, a Simplex or a ConvexHull"),
    ({"domain": L2Ball(3)}, "domain must be a convex set of dim 4"),
    ({"calibration": "paper", "epsilon": 40.0}, "epsilon' = .* > 1"),
])
def test_m1_constructor_refuses_bad_arguments(kwargs, match):
    args = {"loss": SquaredLoss(), "domain": L2Ball(4), "horizon": 16, "epsilon": 1.0,
            "delta": DELTA, "tau": 4, **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        PrivateIncrementalERM(4, **args)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-7, 1e-5])
@pytest.mark.parametrize("T, tau", [(100, 1), (100, 7), (1000, 50), (1000, 1000)])
def test_m1_budget_split_totals_epsilon_delta(epsilon, delta, T, tau):
    # Theorem 3.1 with Theorem A.4 at delta* = delta/2, l = T/tau (conservative, A14)
    eps_c, delta_c = knj_mechanism1_split(epsilon, delta, T, tau)
    assert eps_c <= 1.0
    total_eps, total_delta = knj_advanced_composition(eps_c, delta_c, T / tau, delta / 2)
    assert total_eps <= epsilon * (1 + 1e-12)
    assert total_delta == pytest.approx(delta, rel=1e-12)
    if epsilon != 1.0:
        return  # the learner-level checks below once per (T, tau, delta)
    m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L2Ball(3), horizon=T,
                              epsilon=epsilon, delta=delta, tau=tau, calibration="paper",
                              solver_options={"steps": 5})
    assert m.split() == (eps_c, delta_c)
    # each call is calibrated to (eps', delta') exactly (no published formula for "sgd")
    assert all(m.solver.epsilon([n], s, delta_c) <= eps_c * (1 + 1e-9)
               for n, s in zip(m.sizes, m._scales, strict=True))
    # the guarantee is derived from the noise that runs: 5 steps per call, each a
    # Gaussian of ratio 2L / sigma_call, composed exactly (mu^2 adds up); far below the
    # epsilon Theorem A.4 certifies for the split (advanced composition is loose)
    L = SquaredLoss().lipschitz(L2Ball(3))
    mu = math.sqrt(sum(5 * (2 * L / s) ** 2 for s in m._scales))
    assert m.privacy.delta == delta
    assert m.privacy.epsilon == pytest.approx(gaussian_epsilon(1 / mu, delta), rel=1e-9)
    assert m.privacy.epsilon <= total_eps


@pytest.mark.parametrize("solver, opts, domain", [
    ("sgd", {"steps": 30}, L2Ball(3)),
    ("bst", {"steps": 30}, L2Ball(3)),
    ("frank-wolfe", {"iterations": 10}, L1Ball(3)),
])
def test_m1_tight_calibration_certifies_the_whole_mechanism(solver, opts, domain):
    m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=domain, horizon=60, epsilon=1.0,
                              delta=DELTA, tau=20, solver=solver, solver_options=opts)
    scale = m._scales[0]
    assert m.solver.epsilon(m.sizes, scale, DELTA) <= 1.0 + 1e-9
    assert m.solver.epsilon(m.sizes, scale * 0.99, DELTA) > 1.0  # calibrated, not loose
    L = SquaredLoss().lipschitz(domain)
    if solver == "sgd":  # exact Gaussian DP: sigma = 2 L sqrt(k_total) / mu*
        assert scale == pytest.approx(2 * L * math.sqrt(3 * 30) / mu_star(1.0, DELTA))
    if solver != "bst":
        assert m.privacy.epsilon == 1.0
        return
    # BST: the guarantee is derived from the 30 sampled Gaussian steps of each call, read
    # by dp-accounting's RDP accountant (replace-one, its default orders): below the
    # calibration's target, whose fractional orders bound the subsampled RDP more loosely
    acc = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    for n in m.sizes:
        step = dp_accounting.GaussianDpEvent(scale / (2 * n * L))
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.SampledWithoutReplacementDpEvent(n, 1, step), 30))
    assert m.privacy.epsilon == pytest.approx(acc.get_epsilon(DELTA), rel=1e-12)
    assert m.privacy.epsilon <= 1.0


def test_m1_calls_the_solver_on_the_whole_prefix_every_tau_steps(monkeypatch):
    T, tau = 50, 7  # tau does not divide T (KNJ-4): floor(50/7) = 7 calls
    X, y = stream(T, 3, over=False)
    m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L2Ball(3), horizon=T, epsilon=1.0,
                              delta=DELTA, tau=tau, solver_options={"steps": 5}, seed=0)
    seen = []
    original = m.solver.fit

    def spy(Xp, yp, *args):
        seen.append(len(yp))
        np.testing.assert_array_equal(Xp, X[:len(yp)])
        return original(Xp, yp, *args)

    monkeypatch.setattr(m.solver, "fit", spy)
    W = released_models(m.run(X, y))
    assert seen == [7, 14, 21, 28, 35, 42, 49] and m.n_calls_ == 7
    changes = np.flatnonzero(np.any(np.diff(W, axis=0) != 0, axis=1)) + 2
    assert set(changes) <= {7, 14, 21, 28, 35, 42, 49}  # the model changes only at calls
    np.testing.assert_array_equal(W[:6], 0.0)  # P_C(0) before the first call (A13)


def test_frank_wolfe_recalled_ttz_scale_is_flagged_and_m1_derives_its_total():
    # TTZ's recalled Laplace scale matches a score sensitivity L ||C||_1; replace-one needs
    # twice that, so one call certifies more than the epsilon it was calibrated for
    fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(3), iterations=20, noise="laplace")
    assert fw.epsilon([100], fw.paper_sigma(100, 0.5, DELTA), DELTA) > 0.5 * 1.3
    # inside M1 the per-call shortfall is absorbed by the slack of KNJ's split (its second
    # term eps^2/(4 ln(2/delta)) is far below eps/2): Theorem A.4 re-applied with the
    # certified per-call epsilon stays below epsilon ...
    m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L1Ball(3), horizon=1000,
                              epsilon=1.0, delta=DELTA, tau=10, solver="frank-wolfe",
                              solver_options={"noise": "laplace", "iterations": 20},
                              calibration="paper")
    eps_c, delta_c = m.split()
    worst = max(m.solver.epsilon([n], s, delta_c) for n, s in zip(m.sizes, m._scales,
                                                                    strict=True))
    assert worst > eps_c
    total = knj_advanced_composition(worst, delta_c, 100, DELTA / 2)[0]
    assert total <= 1.0
    # ... and the reported guarantee, derived from the 100 x 20 selections themselves
    # (each eps0 = 2 Delta / b-DP, hence eps0^2/2-zCDP: rho adds up, or basic
    # composition if smaller), is tighter still
    L = SquaredLoss().lipschitz(L1Ball(3))
    eps0 = [2 * 2 * L / b for b in m._scales]  # score sensitivity 2 L max ||v|| = 2 L
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(20 * sum(e**2 / 2 for e in eps0)))
    derived = min(20 * sum(eps0), acc.get_epsilon(DELTA))
    assert m.privacy.epsilon == pytest.approx(derived, rel=1e-9) and derived < total


def test_m1_paper_mode_bst_sigma_is_sound():
    m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L2Ball(3), horizon=100,
                              epsilon=1.0, delta=DELTA, tau=50, solver="bst",
                              solver_options={"steps": 20}, calibration="paper")
    eps_c, delta_c = m.split()
    L = SquaredLoss().lipschitz(L2Ball(3))
    acc = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    for n, s in zip(m.sizes, m._scales, strict=True):
        assert s == pytest.approx(math.sqrt(32 * math.log(n / delta_c) * math.log(1 / delta_c))
                                  * L * n / eps_c)
        assert m.solver.epsilon([n], s, delta_c, target=eps_c) <= eps_c
        step = dp_accounting.GaussianDpEvent(s / (2 * n * L))
        acc.compose(dp_accounting.SelfComposedDpEvent(
            dp_accounting.SampledWithoutReplacementDpEvent(n, 1, step), 20))
    # the guarantee of the two calls' 20 sampled Gaussian steps, far below epsilon: BST's
    # sigma and KNJ's split are both conservative
    assert m.privacy.epsilon == pytest.approx(acc.get_epsilon(DELTA), rel=1e-12)
    assert m.privacy.epsilon < 0.1


def test_m1_without_noise_runs_plain_projected_gradient_descent():
    T, tau, k = 30, 10, 15
    X, y = stream(T, 3, seed=8, over=False)
    with pytest.warns(NonPrivateWarning):
        m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L2Ball(3), horizon=T,
                                  epsilon=INF, delta=0.0, tau=tau, solver_options={"steps": k})
    W = released_models(m.run(X, y))
    ball, theta = L2Ball(3), np.zeros(3)
    for n in (10, 20, 30):
        Xn, yn = X[:n], y[:n]
        step = 1.0 / (n * 1.0)  # 1 / (n * smoothness), no noise term
        iterate, total = theta, np.zeros(3)
        for _ in range(k):
            total += iterate
            iterate = ball.project(iterate - step * (Xn.T @ (Xn @ iterate - yn)))
        theta = total / k
        np.testing.assert_allclose(W[n - 1], theta, rtol=1e-12, atol=1e-15)
