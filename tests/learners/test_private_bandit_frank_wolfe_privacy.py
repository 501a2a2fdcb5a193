"""ENV bandit privacy: the noised batch sums' sensitivity as an upper bound, and the noise
laws test_private_bandit_frank_wolfe.py leaves untested (Gamma, "secure", "secure_laplace").

test_private_bandit_frank_wolfe.py checks one worst case attaining Delta_2 and the
Gaussian/Laplace scales; here (1) a random + adversarial search over tiny instances shows
no neighbouring pair moves a counter input by more than the stated sensitivity, for every
history of releases, and (2) the remaining noise kinds have the stated law at the stated
scale.
"""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
from scipy import stats

import dpol.noise.discrete as discrete
from dpol.accounting import mu_star
from dpol.accounting.closed_forms import zcdp_gaussian_noise_multiplier
from dpol.learners import PrivateBanditFrankWolfe
from dpol.noise.discrete import grid_spacing
from dpol.sets import Box, ConvexHull, L1Ball, L2Ball, Simplex


class _Tap:
    """Wraps the learner's counter: records every input (the batch sums g~_R the counter
    noises) and, when ``replay`` is set, returns those releases instead of its own, so a
    neighbouring run can be fed exactly the history another run released."""

    def __init__(self, inner):
        self.inner, self.inputs, self.releases, self.replay = inner, [], [], None

    def add(self, g):
        self.inputs.append(np.array(g, dtype=float))
        out = self.inner.add(g)
        if self.replay is not None:
            out = self.replay[len(self.inputs) - 1].copy()
        self.releases.append(out.copy())
        return out

    def __getattr__(self, name):
        return getattr(self.inner, name)


class _TappedBandit(PrivateBanditFrankWolfe):
    def _build_counter(self):
        counter = super()._build_counter()
        return None if counter is None else _Tap(counter)


# ------------------------------------------------------------- 1. sensitivity search
def _instance(rng):
    """A tiny random instance: set, mode, horizon, batch size, zeta, B, relation, noise."""
    n = int(rng.integers(1, 4))
    kind = str(rng.choice(["box", "l2", "l1", "simplex", "hull"]))
    if kind == "simplex":
        n = max(n, 2)  # Simplex(1) is a point (diameter 0)
    dom, ball = {
        "box": (Box(0.0, 1.0, dim=n), (np.full(n, 0.5), 0.5)),
        "l2": (L2Ball(n), (np.zeros(n), 1.0)),
        "l1": (L1Ball(n), (np.zeros(n), 1.0 / math.sqrt(n))),
        "simplex": (Simplex(n), None),  # not full-dimensional: extended mode only (A22)
        "hull": (ConvexHull(rng.normal(size=(n + 2, n))), None),
    }[kind]
    T = int(rng.integers(3, 25))
    kw = {"horizon": T, "epsilon": 1.0, "delta": 1e-6, "seed": int(rng.integers(2**31)),
          "noise": str(rng.choice(["gaussian", "laplace", "gamma", "secure",
                                   "secure_laplace"])),
          "neighbouring": str(rng.choice(["replace_one", "add_remove"]))}
    if rng.random() < 0.5:  # keep m >= 2 batches, so at least one sum is released
        kw["batch_size"] = int(rng.integers(1, (T + 1) // 2 + 1))
    if rng.random() < 0.5:
        kw["loss_bound"] = float(rng.uniform(0.2, 3.0))
    if ball is not None and rng.random() < 0.5:
        kw.update(mode="shrink", inner_ball=ball)
        if rng.random() < 0.5:
            kw["zeta"] = float(rng.uniform(0.05, 0.9) * ball[1])
    elif rng.random() < 0.5:
        kw["zeta"] = float(rng.uniform(0.05, 2.0))
    return dom, kw


def _losses(rng, T, n, B, add_remove):
    """Neighbouring loss tables f_t(x) = a_t + <c_t, x> + w_t sin(3 sum x), differing at t0
    only: a random replacement, the extremes +-big (clipped to +-B) or exactly +-B;
    under add/remove the neighbour's f_t0 is the zero function (the loss removed)."""
    scale = B * float(rng.choice([0.1, 1.0, 10.0]))  # 10 B: clipping is active
    a, C, w = scale * rng.normal(size=T), rng.normal(size=(T, n)), rng.normal(size=T)
    t0 = int(rng.integers(T))
    a2, C2, w2 = a.copy(), C.copy(), w.copy()
    case = rng.integers(3)
    if case == 0:
        a2[t0], C2[t0], w2[t0] = scale * rng.normal(), rng.normal(size=n), rng.normal()
    else:
        big = 1e6 * B if case == 1 else B
        C[t0], w[t0], C2[t0], w2[t0] = 0.0, 0.0, 0.0, 0.0
        a[t0], a2[t0] = big, -big
    if add_remove:
        a2[t0], C2[t0], w2[t0] = 0.0, 0.0, 0.0

    def table(a, C, w):
        return lambda X, s: a[s] + np.einsum("ij,ij->i", C[s], X) + w[s] * np.sin(3 * X.sum(1))

    return t0, table(a, C, w), table(a2, C2, w2)


def _play(monkeypatch, dom, kw, loss, os_seed, replay=None, loop=False):
    """One run (ask/tell loop or run()); the OS generator of secure noise is reseeded, so
    runs with the same os_seed draw the same node noise, as the learner seed does for
    float noise. Returns the learner, the played points and the sphere directions u_t."""
    monkeypatch.setattr(discrete, "OS_RNG", random.Random(os_seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zeta > D (A16): allowed here
        learner = _TappedBandit(dom, **kw)
    learner._counter.replay = replay
    points, centres = [], []
    if loop:
        for t in range(learner.horizon):
            centres.append(learner.iterate)
            points.append(learner.ask())
            learner.tell(float(loss(points[-1][None, :], np.array([t]))[0]))
        points, centres = np.array(points), np.array(centres)
    else:
        trace = learner.run(loss)
        points, centres = trace.points, trace.iterates
    x = points
    if learner.mode == "shrink":  # undo phi(x) = c' + s (x - c')
        x = learner.ball_center + (x - learner.ball_center) / learner.shrink
    return learner, points, (x - centres) / learner.zeta


def test_no_neighbour_moves_a_noised_batch_sum_beyond_the_sensitivity(monkeypatch):
    # Privacy section: with the u_t and the released history fixed, neighbours differing
    # at t0 (batch R0) give identical counter inputs except at R0, where they differ by at
    # most Delta_2 = 2 (n/zeta) B in l2 ((n/zeta) B under add/remove) and sqrt(n) Delta_2
    # in l1. Per instance, three runs with one seed: A on F; B on F' (same seed: same u's,
    # same node noise, so the same releases before R0); C on F' fed A's releases (the
    # adaptive setting the counter's composition covers). Secure noise: the counter rounds
    # its inputs to the grid g first, which its Privacy section pays for with Delta + g
    # sqrt(n) under replace-one; checked on the rounded inputs (add/remove: see below).
    rng, ratios = np.random.default_rng(20240611), []
    for i in range(150):
        dom, kw = _instance(rng)
        n, add_remove = dom.dim, kw["neighbouring"] == "add_remove"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            probe = PrivateBanditFrankWolfe(dom, **kw)
        bound = probe.element_sensitivity
        assert bound == pytest.approx((1 if add_remove else 2) * n / probe.zeta
                                      * probe.loss_bound, rel=1e-12)
        t0, f, f2 = _losses(rng, probe.horizon, n, probe.loss_bound, add_remove)
        a, pa, ua = _play(monkeypatch, dom, kw, f, i)
        b, _, ub = _play(monkeypatch, dom, kw, f2, i, loop=i % 2 == 1)
        c, pc, _ = _play(monkeypatch, dom, kw, f2, i, replay=a._counter.releases)
        # adaptivity: the directions come from the learner's own stream, never the data
        np.testing.assert_allclose(ua, ub, rtol=0, atol=1e-9)
        ga, gb, gc = (np.array(x._counter.inputs) for x in (a, b, c))
        r0 = t0 // probe.batch_size  # 0-based batch of t0; the last batch is never released
        np.testing.assert_array_equal(ga[:r0], gb[:r0])
        # fed the same history, C plays exactly A's points (post-processing of releases)
        # and its inputs differ from A's at R0 alone
        np.testing.assert_array_equal(pc, pa)
        others = np.arange(len(ga)) != r0
        np.testing.assert_array_equal(ga[others], gc[others])
        if r0 >= len(ga):
            continue
        np.testing.assert_array_equal(gb[r0], gc[r0])
        diff = ga[r0] - gc[r0]
        move = float(np.linalg.norm(diff))
        assert move <= bound * (1 + 1e-12), (i, kw, move, bound)
        assert np.abs(diff).sum() <= math.sqrt(n) * bound * (1 + 1e-12)
        ratios.append(move / bound)
        grid = a._counter.grid
        if grid is not None:  # both batch sums are rounded, under either relation
            delta_node = bound + grid * math.sqrt(n)
            assert a._counter.node_sensitivity == pytest.approx(delta_node, rel=1e-12)
            on_grid = np.rint(ga[r0] / grid) * grid - np.rint(gc[r0] / grid) * grid
            assert np.linalg.norm(on_grid) <= delta_node * (1 + 1e-12)
    # the bound is tight: attained (up to rounding) by the +-B cases, and the search
    # released the differing batch often enough to mean something
    assert len(ratios) >= 60 and max(ratios) >= 0.9


def test_secure_add_remove_rounded_batch_sums_stay_within_the_node_sensitivity(monkeypatch):
    # Batch 1 = rounds 0 and 1 (T = 4, K = 2): round 0 keeps a value F0, round 1 has 1e9
    # (clipped to B) or is removed (the zero loss). Unrounded, the sums differ by exactly
    # (n/zeta) B u_1 = Delta; rounded to g Z^2 they can differ by up to Delta + g sqrt(2):
    # the bandit's counter must charge the full rounding, not the add/remove half
    # (Delta + g sqrt(2)/2, which 13 of these 101 values of F0 exceeded at this seed, the
    # worst by 0.85 g sqrt(2) over Delta, before the counter was told replace_one).
    kw = {"horizon": 4, "batch_size": 2, "epsilon": 1.0, "noise": "secure_laplace",
          "neighbouring": "add_remove", "seed": 13}
    dom, moves = Box(0.0, 1.0, dim=2), []
    B = 2 * math.sqrt(2)  # L (D + zeta), default zeta = D sqrt(n) / T^(1/4) = sqrt(2)
    for f0 in np.linspace(-B, B, 101):
        a, c = (_play(monkeypatch, dom, kw, lambda X, s, v=v: v[s], 0)[0]
                for v in (np.array([f0, 1e9, 0, 0]), np.array([f0, 0, 0, 0])))
        grid, bound = a._counter.grid, a.element_sensitivity
        assert np.linalg.norm(a._counter.inputs[0] - c._counter.inputs[0]) == pytest.approx(
            bound, rel=1e-12)
        ra, rc = (np.rint(x._counter.inputs[0] / grid) * grid for x in (a, c))
        moves.append(float(np.linalg.norm(ra - rc)))
    assert a._counter.node_sensitivity == pytest.approx(bound + grid * math.sqrt(2))
    assert max(moves) <= a._counter.node_sensitivity * (1 + 1e-12)
    assert max(moves) > bound + grid * math.sqrt(2) / 2  # the half would not have held


# ------------------------------------------------------------- 2. noise laws
@pytest.fixture
def seeded_os_rng(monkeypatch):
    """Secure samplers read the OS generator at call time: swap in a seeded one (as
    tests/learners/test_secure_learners.py), so the statistical tests are reproducible."""
    monkeypatch.setattr(discrete, "OS_RNG", random.Random(20261123))


def _node_noises(noise, n, runs, T=100):
    """Per-node tree noise of runs on the zero loss: every batch sum is exactly 0, so the
    release at R is the sum of the nodes of the set bits of R, and node R = s~_R -
    s~_(R - lowbit R). T = 100: K = 10, 9 releases, h = floor(log2 9) + 1 = 4 levels."""
    out = []
    for seed in range(runs):
        learner = PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=n), horizon=T, epsilon=1.0,
                                          delta=1e-6, noise=noise, seed=seed)
        s = learner.run(lambda X, steps: np.zeros(len(X))).noisy_sums
        s = np.vstack([np.zeros(n), s])
        out += [s[r] - s[r & (r - 1)] for r in range(1, len(s))]
    assert learner._counter.levels == 4 and not learner._counter.padded
    return np.array(out), learner


def _delta_2(learner):
    # stated Delta_2 = 2 (n/zeta) B with the defaults zeta = D sqrt(n)/T^(1/4), B = L(D+zeta)
    n, T = learner.dim, learner.horizon
    D = math.sqrt(n)
    zeta = D * math.sqrt(n) / T**0.25
    return 2 * n / zeta * (D + zeta)


def _ks_accepts_only_the_stated_scale(z, dist):
    """z: samples divided by the stated scale. The stated scale passes (p > 1e-3), 2/3 and
    3/2 of it are rejected (p < 1e-6). Sample size: with d the sup-distance between the
    cdfs at scale 1 and at 2/3 or 3/2, the empirical cdf is within c_a = sqrt(ln(2/a)/(2N))
    of the truth with probability 1 - a, so rejection at 1e-6 is sure (bar 1e-3) once
    d >= c_1e-3 + c_1e-6 = 4.64 / sqrt(N): N >= 2300 for the normal (d = 0.097), 3940 for
    the Laplace (d = 0.074) and 300 for Gamma(3) radii (d = 0.267)."""
    assert stats.kstest(z, dist).pvalue > 1e-3
    for wrong in (2 / 3, 3 / 2):
        assert stats.kstest(z / wrong, dist).pvalue < 1e-6


def test_gamma_node_noise_is_the_l2_gamma_law_at_theta_h_delta2_over_epsilon():
    # Privacy: Gamma theta = h Delta_2 / epsilon (pure DP; l2 sensitivity per node, h
    # nodes). Law: density ~ exp(-||z||/theta), i.e. radius Gamma(n, theta) and a uniform
    # direction; n = 3, so a direction's first coordinate is uniform on [-1, 1] (Archimedes).
    # 50 runs x 9 nodes = 450 radii >= 300.
    z, learner = _node_noises("gamma", 3, 50)
    theta = 4 * _delta_2(learner) / 1.0
    assert learner.noise_scale == pytest.approx(theta, rel=1e-12)
    radius = np.linalg.norm(z, axis=1)
    _ks_accepts_only_the_stated_scale(radius / theta, stats.gamma(3).cdf)
    assert stats.kstest(z[:, 0] / radius, stats.uniform(-1, 2).cdf).pvalue > 1e-3


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize("noise", ["secure", "secure_laplace"])
def test_secure_node_noise_is_exact_grid_noise_at_the_stated_scale(noise):
    # Counter Privacy (secure): grid g = largest power of two <= min(s0, Delta_2/sqrt(n)) /
    # 2^10, s0 the float twin's scale; node sensitivity Delta' = Delta_2 + g sqrt(n).
    # "secure": discrete Gaussian of std sqrt(h) Delta' z, z the zCDP multiplier certified
    # for (1, 1e-6); "secure_laplace": discrete Laplace of scale h sqrt(n) Delta' / 1.
    # With >= 2^10 grid steps per scale both are the continuous law up to a cdf error
    # < 1e-3, far below the KS cuts. n = 10: 90 coordinates a run; 30 runs (2700 >= 2300)
    # for the normal, 50 runs (4500 >= 3940) for the Laplace.
    n, h = 10, 4
    z, learner = _node_noises(noise, n, 30 if noise == "secure" else 50)
    d2 = _delta_2(learner)
    if noise == "secure":
        mult = zcdp_gaussian_noise_multiplier(1.0, 1e-6)
        s0, dist = math.sqrt(h) * d2 * mult, stats.norm.cdf
        assert mult > 1 / mu_star(1.0, 1e-6)  # the RDP route costs more than the float twin
    else:
        s0, dist = h * math.sqrt(n) * d2, stats.laplace.cdf
    g = grid_spacing(min(s0, d2 / math.sqrt(n)))
    scale = s0 * (d2 + g * math.sqrt(n)) / d2
    assert learner._counter.grid == g
    assert learner.noise_scale == pytest.approx(scale, rel=1e-12)
    np.testing.assert_array_equal(z / g, np.rint(z / g))  # exact multiples of the grid
    _ks_accepts_only_the_stated_scale(z.ravel() / scale, dist)
