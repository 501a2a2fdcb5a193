"""Absolute noise-scale tests of POL, WDP-COCOP (FTAL) and WDP-COCOL (online Frank-Wolfe),
and zero-noise runs of PGIGA, FTAL and online Frank-Wolfe against independent references.

tests/learners/test_learner_sensitivity.py checks the sensitivities, the counters' inputs and the
POCP noise (``noise_std``); this file checks that the noise actually released by the other
noisy learners has the scale their Privacy sections state. Every expected scale is
recomputed here from the docstring's formula with dp-accounting's analytic Gaussian
(``get_sigma_gaussian`` = 1/mu*), never read from the object alone.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from learner_cases import ball_projection
from scipy import stats
from test_learner_sensitivity import _chi2_accepts, _ref_giga

from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateFTAL, PrivateGIGA, PrivateOfflineLearner, PrivateOnlineFrankWolfe
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

INF = float("inf")
EPS, DELTA = 1.0, 1e-5
# Hinge with y_bound = 0.5: L = X Y = 0.5 on any ball (HingeLoss.lipschitz, h small), so
# the replace-one node sensitivity is 2L = 1 (its gradient_sensitivity is the default 2L).
HINGE = HingeLoss(h=0.25, y_bound=0.5)
NODE_SENS = 1.0


def _z(eps: float = EPS, delta: float = DELTA) -> float:
    """1/mu*(eps, delta): std over l2 sensitivity of one exact Gaussian mechanism."""
    return float(dp_accounting.get_sigma_gaussian(eps, delta))


def _twin(cls, *args, **kwargs):
    with pytest.warns(NonPrivateWarning):
        return cls(*args, epsilon=INF, **kwargs)


def _stream(rng, n, d, labels="sign"):
    X = rng.normal(size=(n, d))
    X *= rng.uniform(0.3, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], size=n) if labels == "sign" else rng.uniform(-1, 1, size=n)
    return X, y


def _path(learner, X, y):
    trace = learner.run(X, y)
    return np.vstack([trace.weights, trace.final_weights])


# ====================================================================== 1. POL
def _pol_beta(T, r, L, excess, eps, delta, factor=2.0):
    """Privacy section: beta = Delta / mu*, Delta = (1/T) sum_{s=2}^{T+1} min(2r, 2L/(alpha s))
    (factor 1 instead of 2 under add/remove), alpha = excess / r^2."""
    alpha = excess / r**2
    s = np.arange(2, T + 2, dtype=float)
    return math.fsum(np.minimum(2 * r, factor * L / (alpha * s))) / T * _z(eps, delta)


@pytest.mark.parametrize(("r", "excess", "nb"), [(1.0, 1.0, "replace_one"),
                                                 (1.0, 0.05, "replace_one"),
                                                 (2.0, 0.1, "add_remove")])
def test_pol_beta_is_the_privacy_formula(r, excess, nb):
    # Catches a beta whose Delta drops the min with 2r (active for s < 15 resp. s < 8 in
    # the last two cases), the 1/alpha, the replace-one factor, or uses another mu*.
    L = 1 / (1 + math.exp(-r))  # logistic, X = Y = 1: sup |phi'(<w, x>, y)| ||x|| = sigma(r)
    m = PrivateOfflineLearner(4, loss=LogisticLoss(), x_star_norm=r, excess=excess,
                              horizon=300, epsilon=EPS, delta=DELTA, neighbouring=nb, seed=0)
    factor = 2.0 if nb == "replace_one" else 1.0
    assert m.beta == pytest.approx(_pol_beta(300, r, L, excess, EPS, DELTA, factor), rel=1e-9)


def test_pol_released_noise_has_scale_beta():
    # Final weights minus the noise-free twin's over N seeds are the release noise
    # N(0, beta^2 I) exactly (the clean IGD never sees the noise) as long as the
    # projection onto the r-ball is inactive, asserted below. n = N d = 200 x 40 = 8000
    # entries: _chi2_accepts (level 1e-4 per tail) accepts sigma within about +-3.1%
    # (3.9 standard errors of 1/sqrt(2n) = 0.8%), and a 2/3 or 3/2 scale moves
    # sum(E^2)/sigma^2 by a factor 2.25 or 1/2.25, about 140 standard deviations.
    # eps = 4 and alpha = 1 keep beta sqrt(d) ~ 0.24, plus ||mean|| <= L/alpha = 0.73, in r = 1.
    d, T, N, eps, r, excess = 40, 128, 200, 4.0, 1.0, 1.0
    X, y = _stream(np.random.default_rng(11), T, d)
    beta = _pol_beta(T, r, 1 / (1 + math.exp(-r)), excess, eps, DELTA)

    def make(**kw):
        return PrivateOfflineLearner(d, loss=LogisticLoss(), x_star_norm=r, excess=excess,
                                     horizon=T, delta=DELTA, **kw)

    with pytest.warns(NonPrivateWarning):
        clean = make(epsilon=INF).run(X, y).final_weights
    released = np.stack([make(epsilon=eps, seed=s).run(X, y).final_weights for s in range(N)])
    assert np.linalg.norm(released, axis=1).max() < r * (1 - 1e-6)  # projection inactive
    E = released - clean
    ratio = float(np.mean(E**2)) / beta**2
    assert _chi2_accepts(E, beta), ("POL noise", ratio)
    assert not _chi2_accepts(E, 1.5 * beta) and not _chi2_accepts(E, beta / 1.5), ratio
    assert make(epsilon=eps, seed=0).beta == pytest.approx(beta, rel=1e-9)


# ====================================================================== 2. FTAL / OFW
def _popcount(n: int) -> int:
    return bin(n).count("1")


def _window_nodes(t: int, block: int) -> int:
    """Node noises in the window tree's release at t = (k-1) W' + j (its docstring): the
    prefix nodes of block k over [0, j) and, for k >= 2, the suffix nodes of block k-1
    over [j, W'), i.e. popcount(j) + popcount(W' - j)."""
    k, j = divmod(t - 1, block)
    return _popcount(j + 1) + (_popcount(block - j - 1) if k else 0)


def _node_sigma(T: int, block: int) -> float:
    """Per-node std of the window tree: z Delta sqrt(m), m = min(log2 W', floor log2 T) + 1
    the nodes one element lies in (Privacy sections of PrivateFTAL / WindowTreeCounter)."""
    m = min(block.bit_length() - 1, T.bit_length() - 1) + 1
    return _z() * NODE_SENS * math.sqrt(m)


@pytest.mark.parametrize(("window", "block"), [(None, 16), (4, 4)])
def test_ftal_iterate_noise_is_the_counter_release_noise(window, block):
    # Stream x = 0: every data gradient is 0, so the counter releases its noise e_t alone
    # and w_{t+1} = Proj(S_t/t - (e_t + mu S_t)/(mu t)) = Proj(-e_t/(mu t)) whatever the
    # earlier iterates were; the ball of radius 100 is not reached at the t checked
    # (asserted), so e_t = -mu t w_{t+1}, with variance nodes(t) sigma^2 per coordinate.
    # Checked at t = 15 (4 nodes without a window, 3 with W = 4) and t = 16 (1 node);
    # n = 200 seeds x 40 coordinates = 8000 per t, as in the POL test above.
    # Catches a node sigma without sqrt(m) or with the wrong m, a variance used as a std, a
    # wrong sensitivity (2L), noise scaled by 1/t twice, or e_t left out of the leader.
    d, T, N, mu, R = 40, 16, 200, 1.0, 100.0
    Z = np.zeros((T, d))

    def make(seed):
        return PrivateFTAL(d, loss=Regularized(HINGE, mu), domain=L2Ball(d, R), horizon=T,
                           epsilon=EPS, delta=DELTA, window=window, seed=seed)

    paths = np.stack([_path(make(s), Z, np.zeros(T)) for s in range(N)])  # (N, T+1, d)
    sigma = _node_sigma(T, block)
    counter = make(0)._counter
    for t in (15, 16):
        assert np.linalg.norm(paths[:, t], axis=1).max() < R * (1 - 1e-6)  # no projection
        E = -mu * t * paths[:, t, :]
        sd = sigma * math.sqrt(_window_nodes(t, block))
        ratio = float(np.mean(E**2)) / sd**2
        assert _chi2_accepts(E, sd), (t, ratio)
        assert not _chi2_accepts(E, 1.5 * sd) and not _chi2_accepts(E, sd / 1.5), (t, ratio)
        assert counter.variance(t) == pytest.approx(sd**2, rel=1e-9)  # what it states


def _ks_accepts(q: np.ndarray, df: int, nc: float, level: float = 1e-4) -> bool:
    """One-sample KS test of 'q is an i.i.d. nct(df, nc) sample' at size ``level``."""
    assert np.all(np.isfinite(stats.nct(df, nc).cdf(q)))  # scipy's nct is nan far out
    return stats.kstest(q, stats.nct(df, nc).cdf).pvalue > level


def test_frank_wolfe_first_step_direction_has_the_counter_noise_scale():
    # The LLOO step depends on the release only through the direction of
    # c_1 = e_1 + mu w_1 (x = 0: zero data gradients; S_1 = w_1 cancels the C0 terms), so
    # the scale of e_1 is seen against the known offset mu w_1, w_1 = -R 1/sqrt(d) (LO of
    # the ones vector). With r_1 >= 2R = diam C (asserted) the LLOO returns the global
    # minimiser p = -R c/||c||, and w_2 = w_1 + (p - w_1)/2 (a = 1/(2 rho^2), rho = 1).
    # Splitting e_1 ~ N(0, s^2 I) along w_1 and across it,
    #   Q = sqrt(d-1) <c, w1/R> / ||c_perp|| = (Z + k) / sqrt(chi2_{d-1}/(d-1)),
    # k = mu R / s: noncentral t with d-1 df and noncentrality k, exactly. s = node sigma
    # (t = 1: one node). d = 20, N = 200 learners, k ~ 4.8: the KS test at level 1e-4 has
    # critical distance 0.156 while the sup-distance to nct(19, k/1.5) or nct(19, 1.5k) is
    # 0.50 resp. 0.61 (nct CDFs computed apart), so those are rejected unless the ECDF is
    # 0.34 off (DKW: probability < 2 exp(-2 N 0.34^2) ~ 1e-20); the correct scale is
    # accepted with probability 1 - 1e-4.
    d, T, N, mu, R = 20, 16, 200, 40.0, 1.0
    w1 = -R * np.ones(d) / math.sqrt(d)
    stat = np.empty(N)
    for seed in range(N):
        m = PrivateOnlineFrankWolfe(d, loss=Regularized(HINGE, mu), domain=L2Ball(d, R),
                                    horizon=T, epsilon=EPS, delta=DELTA, seed=seed)
        np.testing.assert_array_equal(m.weights, w1)
        assert m.radius(1) >= 2 * R  # the local constraint of the LLOO is inactive
        m.learn_one(np.zeros(d), 0.0)
        u = -(2 * m.weights - w1) / R  # c_1 / ||c_1||, from p = 2 w_2 - w_1
        along = float(u @ w1) / R  # (e_par + mu R) / ||c_1||
        stat[seed] = math.sqrt(d - 1) * along / np.linalg.norm(u - along * w1 / R)
    s = _node_sigma(T, 16)
    k = mu * R / s
    assert _ks_accepts(stat, d - 1, k), (k, stats.kstest(stat, stats.nct(d - 1, k).cdf))
    assert not _ks_accepts(stat, d - 1, k / 1.5) and not _ks_accepts(stat, d - 1, 1.5 * k)


# ====================================================================== 3. zero noise
def _grad(kind, w, x, y):
    """Data gradient of phi(<w, x>, y) x: squared 0.5 (z - y)^2, logistic log(1 + e^(-y z))."""
    z = float(w @ x)
    return (z - y) * x if kind == "squared" else -y * x / (1.0 + math.exp(y * z))


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_giga_without_noise_is_projected_ogd(kind):
    # JKT Alg. 3 with its spec 3.2 warm-up: w fixed for t < t_q = ceil(2 L_G^2/alpha^2) + 1,
    # L_G = data smoothness + alpha (hinge X^2 Y^2/h = 1, logistic 1/4), then
    # w <- Proj(w - 2/(alpha t) (grad + alpha w)). The linear case reuses the unused
    # reference of test_learner_sensitivity (|y <w, x>| <= 1/2 < 1 - h: a = -y x).
    T, d, alpha, R = 200, 3, 0.5, 1.0
    rng = np.random.default_rng(3)
    X, y = _stream(rng, T, d)
    if kind == "linear":
        y = y / 2
        loss, tq = Regularized(HINGE, alpha), math.ceil(2 * (1 + alpha) ** 2 / alpha**2) + 1
        expected = _ref_giga(-y[:, None] * X, alpha, R, tq)
    else:
        loss, tq = Regularized(LogisticLoss(), alpha), math.ceil(2 * 0.75**2 / alpha**2) + 1
        expected, w = np.zeros((T + 1, d)), np.zeros(d)
        for t in range(1, T + 1):
            if t >= tq:
                g = _grad("logistic", w, X[t - 1], y[t - 1]) + alpha * w
                w = ball_projection(w - 2.0 / (alpha * t) * g, R)
            expected[t] = w
    got = _path(_twin(PrivateGIGA, d, loss=loss, domain=L2Ball(d, R), horizon=T), X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert np.ptp(expected[tq:], axis=0).min() > 0.01  # the data moved the iterates


def _ref_ftal(kind, X, y, mu, R):
    """FTAL leader: argmin_{||w|| <= R} <G_t, w> + mu/2 sum_{s<=t} ||w - w_s||^2 with
    G_t = sum_s grad f_s(w_s) (regulariser included). The objective is
    mu t/2 ||w - (mean_s w_s - G_t/(mu t))||^2 + const: an isotropic quadratic, whose
    minimiser over a ball is the projection of its centre. w_1 = Proj(0) = 0."""
    T, d = X.shape
    out, w, G, S = np.zeros((T + 1, d)), np.zeros(d), np.zeros(d), np.zeros(d)
    for t in range(1, T + 1):
        G += _grad(kind, w, X[t - 1], y[t - 1]) + mu * w
        S += w
        w = ball_projection(S / t - G / (mu * t), R)
        out[t] = w
    return out


@pytest.mark.parametrize(("kind", "counter"), [("squared", "window"), ("logistic", "tree")])
def test_ftal_without_noise_is_the_approximate_leader(kind, counter):
    T, d, mu, R = 200, 3, 0.5, 0.5
    X, y = _stream(np.random.default_rng(4), T, d, "sign" if kind == "logistic" else "real")
    loss = Regularized(SquaredLoss() if kind == "squared" else LogisticLoss(), mu)
    expected = _ref_ftal(kind, X, y, mu, R)
    got = _path(_twin(PrivateFTAL, d, loss=loss, domain=L2Ball(d, R), horizon=T,
                      counter=counter), X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    on_sphere = np.isclose(np.linalg.norm(expected[1:], axis=1), R, rtol=1e-12)
    assert on_sphere.any() and not on_sphere.all()  # the projection is exercised


def _ref_ball_lloo(x, r, c, R):
    """argmin <c, y> over {||y|| <= R} n {||y - x|| <= r}, unique for c != 0: either the
    minimiser of one ball (-R c^ or x - r c^) if it lies in the other ball, or a point on
    both spheres; those minimising <c, .> lie in span(x, c): the two circle points there.
    Returns the cheapest feasible candidate and which kind it was."""
    ch = c / np.linalg.norm(c)
    cands = [(-R * ch, "ball"), (x - r * ch, "local")]
    nx = np.linalg.norm(x)
    perp = ch - (ch @ x) * x / nx**2 if nx > 0 else np.zeros_like(x)
    if np.linalg.norm(perp) > 1e-12:  # else c is along x: a ball minimiser is feasible
        e1, e2 = x / nx, perp / np.linalg.norm(perp)
        a = (R * R - r * r + nx * nx) / (2 * nx)
        if R * R >= a * a:
            b = math.sqrt(R * R - a * a)
            cands += [(a * e1 + b * e2, "circle"), (a * e1 - b * e2, "circle")]
    tol = 1e-12 * (R + r)
    feasible = [(float(p @ c), k, p) for p, k in cands
                if np.linalg.norm(p) <= R + tol and np.linalg.norm(p - x) <= r + tol]
    _, kind, p = min(feasible, key=lambda f: f[0])
    return p, kind


def test_frank_wolfe_without_noise_follows_the_wdp_recursion():
    # WDP Alg. 2 as the PrivateOnlineFrankWolfe docstring parameterises it, on the unit
    # ball (rho = 1: a = 1/2, C0 = 16) without noise (E = 0): K = 74 L^2 with L = X (Y + R X)
    # + mu R = 3 (squared loss plus its regulariser: spec 5.2 step 3 bounds the whole
    # gradient), r_t = sqrt(2K)/(mu (t + C0)), c_t = G_t + mu((t + C0) w_t - S_t - C0 w_1),
    # w_{t+1} = w_t + a (LLOO(w_t, r_t, c_t) - w_t), w_1 = LO(1) = -1/sqrt(d).
    T, d, mu, R = 300, 3, 1.0, 1.0
    X, y = _stream(np.random.default_rng(5), T, d, "real")
    K, c0, a = 74.0 * (2.0 + mu * R) ** 2, 16.0, 0.5
    w1 = -R * np.ones(d) / math.sqrt(d)
    expected, w, G, S, kinds = [w1], w1.copy(), np.zeros(d), np.zeros(d), set()
    for t in range(1, T + 1):
        G += _grad("squared", w, X[t - 1], y[t - 1]) + mu * w
        S += w
        c = G + mu * ((t + c0) * w - S - c0 * w1)
        p, kind = _ref_ball_lloo(w, math.sqrt(2 * K) / (mu * (t + c0)), c, R)
        kinds.add(kind)
        w = w + a * (p - w)
        expected.append(w)
    got = _path(_twin(PrivateOnlineFrankWolfe, d, loss=Regularized(SquaredLoss(), mu),
                      domain=L2Ball(d, R), horizon=T), X, y)
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-10, atol=1e-13)
    assert kinds == {"ball", "local", "circle"}, kinds  # every branch of the LLOO is used
