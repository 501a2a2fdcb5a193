"""Secure noise: exact discrete samplers on OS randomness, grid soundness, RDP calibration.

The samplers' laws are checked with a seeded ``random.Random`` (reproducible); that the
default path reads the OS generator is checked separately. Secure sources cannot be
seeded, so the statistical counter and learner tests replace the OS generator by a seeded
``random.Random`` (fixture ``seeded_os_rng``): reproducible, with tolerances at a family
error rate of ALPHA.
"""

from __future__ import annotations

import dataclasses
import math
import random
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
from scipy import stats
from variance_checks import check_same_variance

from dpol.accounting.closed_forms import (
    certified_epsilon,
    gaussian_epsilon,
    gaussian_noise_multiplier,
    zcdp_epsilon,
    zcdp_gaussian_noise_multiplier,
)
from dpol.counters import (
    BandedMatrixCounter,
    BandedToeplitzCounter,
    BinaryTreeCounter,
    BltCounter,
    DenseMeanCounter,
    HonakerTreeCounter,
    ToeplitzCounter,
    WindowTreeCounter,
)
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners import OutputPerturbation, PrivateFTAL
from dpol.losses import LogisticLoss, Regularized
from dpol.noise import NoiseSource, bernoulli_exp, discrete_gaussian, discrete_laplace
from dpol.noise.discrete import (
    OS_RNG,
    discrete_gaussian_tau,
    discrete_laplace_variance,
    grid_release,
    grid_spacing,
)
from dpol.sets import L2Ball

ALPHA = 1e-4


@pytest.fixture
def seeded_os_rng(monkeypatch):
    """The samplers look the OS generator up at call time: swap in a seeded one."""
    import dpol.noise.discrete as discrete

    monkeypatch.setattr(discrete, "OS_RNG", random.Random(20261122))
N_LAW = 20_000  # samples per goodness-of-fit test (~0.2 s with random.Random)


# ---------------------------------------------------------------- the samplers' laws
def chi_square_pvalue(samples: list[int], log_weight, radius: int, min_expected: float) -> float:
    """Pearson chi-square of integer samples against the law P[k] prop. to exp(log_weight(k)).

    The pmf is normalized over |k| <= radius (radius = 40 scales: the mass left out is below
    e^-40 for both laws, far under one expected sample). Consecutive support points are
    merged from the left until each bin expects >= min_expected samples (>= 5, the usual
    validity rule); the remainder joins the last bin.
    """
    support = np.arange(-radius, radius + 1)
    logw = log_weight(support.astype(np.float64))
    pmf = np.exp(logw - logw.max())
    pmf /= pmf.sum()
    n = len(samples)
    counts = np.bincount(np.clip(np.asarray(samples), -radius, radius) + radius,
                         minlength=support.size)
    obs, exp, cur_o, cur_e = [], [], 0.0, 0.0
    for o, e in zip(counts, n * pmf, strict=True):
        cur_o, cur_e = cur_o + o, cur_e + e
        if cur_e >= min_expected:
            obs.append(cur_o)
            exp.append(cur_e)
            cur_o = cur_e = 0.0
    obs[-1] += cur_o
    exp[-1] += cur_e
    obs, exp = np.array(obs), np.array(exp)
    stat = float(np.sum((obs - exp) ** 2 / exp))
    return float(stats.chi2.sf(stat, obs.size - 1))


# sigma^2 as an exact Fraction, an int and the float of a realistic grid-unit scale; for
# the wide one the bins hold >= N/40 expected samples, so the test keeps its power
GAUSS_CASES = [(Fraction(9, 4), 5.0), (100, 5.0), (1448.3**2, N_LAW / 40)]


@pytest.mark.parametrize(("sigma2", "min_expected"), GAUSS_CASES)
def test_discrete_gaussian_follows_the_exact_law_and_the_test_rejects_a_wrong_sigma(
        sigma2, min_expected):
    sigma = math.sqrt(float(sigma2))
    radius = int(40 * sigma) + 1
    law = lambda k: -(k**2) / (2.0 * float(sigma2))  # noqa: E731
    good = discrete_gaussian(sigma2, N_LAW, random.Random(1))
    assert chi_square_pvalue(good, law, radius, min_expected) > ALPHA
    for factor in (1.5, 2.0 / 3.0):  # a sampler with sigma x 1.5 or x 2/3 is rejected
        wrong = discrete_gaussian(Fraction(sigma2) * Fraction(factor) ** 2, N_LAW,
                                  random.Random(2))
        assert chi_square_pvalue(wrong, law, radius, min_expected) < ALPHA


@pytest.mark.parametrize(("scale", "min_expected"), [(Fraction(5, 2), 5.0),
                                                     (37.25, 5.0), (1500.5, N_LAW / 40)])
def test_discrete_laplace_follows_the_exact_law_and_the_test_rejects_a_wrong_scale(
        scale, min_expected):
    radius = int(40 * float(scale)) + 1
    law = lambda k: -np.abs(k) / float(scale)  # noqa: E731
    good = discrete_laplace(scale, N_LAW, random.Random(3))
    assert chi_square_pvalue(good, law, radius, min_expected) > ALPHA
    for factor in (1.5, 2.0 / 3.0):
        wrong = discrete_laplace(Fraction(scale) * Fraction(factor), N_LAW, random.Random(4))
        assert chi_square_pvalue(wrong, law, radius, min_expected) < ALPHA


def test_discrete_laplace_variance_formula_matches_a_direct_sum():
    for t in (0.7, 3.0, 1024.0):
        k = np.arange(-int(60 * t) - 5, int(60 * t) + 6, dtype=np.float64)
        w = np.exp(-np.abs(k) / t)
        direct = float(np.sum(k**2 * w) / np.sum(w))
        assert discrete_laplace_variance(t) == pytest.approx(direct, rel=1e-9)


@pytest.mark.parametrize("gamma", [Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_is_exact_and_the_test_rejects_a_wrong_rate(gamma):
    rng = random.Random(5)
    hits = sum(bernoulli_exp(gamma, rng) for _ in range(N_LAW))
    assert stats.binomtest(hits, N_LAW, math.exp(-float(gamma))).pvalue > ALPHA
    for factor in (1.5, 2.0 / 3.0):  # e^(-1.5 gamma) and e^(-2 gamma / 3) are rejected
        assert stats.binomtest(hits, N_LAW, math.exp(-factor * float(gamma))).pvalue < ALPHA
    assert all(bernoulli_exp(0, rng) for _ in range(100))  # e^0 = 1 exactly


def test_samplers_refuse_bad_parameters():
    for bad in (0, -1.0, math.inf, "2", True):
        with pytest.raises(InvalidInputError, match="sigma2 must"):
            discrete_gaussian(bad, 1)
        with pytest.raises(InvalidInputError, match="scale must"):
            discrete_laplace(bad, 1)
    with pytest.raises(InvalidInputError, match="gamma must"):
        bernoulli_exp(Fraction(-1, 2))
    with pytest.raises(InvalidInputError, match="gamma must"):
        bernoulli_exp(0.5)  # floats are not exact rationals here: refused


# ---------------------------------------------------------------- OS randomness
def test_default_samplers_and_secure_sources_read_the_os_generator(monkeypatch):
    # SystemRandom draws every coin from random._urandom (os.urandom): count the calls
    calls = []
    real = random._urandom

    def counting(n):
        calls.append(n)
        return real(n)

    monkeypatch.setattr(random, "_urandom", counting)
    assert isinstance(OS_RNG, random.SystemRandom)
    discrete_gaussian(Fraction(4), 20)
    assert len(calls) >= 20  # at least one coin per sample
    before = len(calls)
    discrete_laplace(3, 20)
    assert len(calls) - before >= 20
    before = len(calls)
    source = NoiseSource("secure", 3, 1.0, seed=0)
    source.draw(4)
    assert len(calls) - before >= 12
    assert source._rng is None and source._radius_rng is None  # no numpy generator at all


def test_tau_is_computed_and_vanishes_at_the_grid_scale():
    # CKS Theorem 15's slack: visible at sigma = 1 lattice unit, 0.0 at 2^10 units
    exact = 10 * sum(math.exp(-2 * math.pi**2 * k / (k + 1)) for k in range(1, 100))
    bound = discrete_gaussian_tau(1.0, 100)  # 10 (d - 1) e^(-pi^2 sigma^2), in log space
    assert exact <= bound == pytest.approx(10 * 99 * math.exp(-math.pi**2), rel=1e-12)
    assert discrete_gaussian_tau(2.0**10, 10**12) == 0.0


# ---------------------------------------------------------------- grid soundness
SECURE_COUNTERS = [
    (BinaryTreeCounter, {}), (BinaryTreeCounter, {"padded": True}),
    (WindowTreeCounter, {"window": 4}),
]


def secure_counter(cls, extra, horizon=16, dim=3, **kwargs):
    kwargs.setdefault("epsilon", 1.0)
    kwargs.setdefault("delta", 1e-5)
    return cls(horizon, dim, noise=kwargs.pop("noise", "secure"), **extra, **kwargs)


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize(("cls", "extra"), SECURE_COUNTERS)
@pytest.mark.parametrize("noise", ["secure", "secure_laplace"])
def test_releases_are_exact_grid_values_and_neighbours_share_their_support(cls, extra, noise):
    rng = np.random.default_rng(0)
    V = rng.uniform(-0.5, 0.5, (16, 3))
    W = V.copy()
    W[5] = [0.4, -0.3, 0.1]  # a neighbouring stream (replace-one)
    a, b = secure_counter(cls, extra, noise=noise), secure_counter(cls, extra, noise=noise)
    g = a.grid
    assert g == grid_spacing(min(a.noise_scale, 2.0 / math.sqrt(3)))  # as documented
    ra, rb = a.run(V), np.stack([b.add(w) for w in W])  # run and the add loop
    for r in (ra, rb):
        assert np.all(r / g % 1 == 0)
    # supports S_t + g Z^3 and S'_t + g Z^3 coincide: the difference is on the lattice
    assert np.all((ra - rb) / g % 1 == 0)
    # without the rounding they would be disjoint: the exact sums differ off the lattice
    assert np.any((np.cumsum(V, axis=0) - np.cumsum(W, axis=0))[5:] / g % 1 != 0)


def test_sensitivity_is_inflated_by_the_rounding_for_both_relations():
    for neighbouring, base, half in (("replace_one", 2.0, 1.0), ("add_remove", 1.0, 0.5)):
        c = BinaryTreeCounter(64, 5, epsilon=1.0, delta=1e-5, noise="secure",
                              neighbouring=neighbouring)
        assert c.node_sensitivity == base + half * c.grid * math.sqrt(5)
        assert c.node_sensitivity / base <= 1 + 2.0**-10  # the grid keeps it tiny
        ref = BinaryTreeCounter(64, 5, epsilon=1.0, delta=1e-5, neighbouring=neighbouring)
        ratio = zcdp_gaussian_noise_multiplier(1.0, 1e-5) / gaussian_noise_multiplier(1.0, 1e-5)
        assert c.noise_scale == pytest.approx(ref.noise_scale * ratio * c.node_sensitivity
                                              / base, rel=1e-12)
    # rounding moves each element by at most g sqrt(d) / 2 in l2
    c = BinaryTreeCounter(8, 5, epsilon=1.0, delta=1e-5, noise="secure")
    rows = np.random.default_rng(1).uniform(-0.4, 0.4, (200, 5))
    moved = np.linalg.norm(c._to_grid(rows.copy()) - rows, axis=1)
    assert moved.max() <= c.grid * math.sqrt(5) / 2


def test_epsilon_inf_is_still_the_exact_cumulative_sum():
    V = np.random.default_rng(2).uniform(-0.5, 0.5, (32, 2))
    for kwargs in ({"epsilon": math.inf}, {"noise_multiplier": 0.0}):
        with pytest.warns(NonPrivateWarning):
            c = BinaryTreeCounter(32, 2, noise="secure", **kwargs)
        assert c.grid is None
        assert np.array_equal(c.run(V), np.cumsum(V, axis=0))


def test_counters_with_non_integer_noise_weights_take_secure_noise_and_refusals():
    # real weights: secure releases post-process exact grid values (test_secure_release)
    matrix = (ToeplitzCounter, BltCounter, DenseMeanCounter, BandedToeplitzCounter,
              BandedMatrixCounter)
    for cls in (HonakerTreeCounter, *matrix):
        assert cls(8, epsilon=1.0, delta=1e-5, noise="secure").grid is not None
    for cls in matrix:
        # l1 column norms grow like sqrt(T) (a band's with b)
        with pytest.raises(InvalidInputError, match="'gaussian' or 'secure'"):
            cls(8, epsilon=1.0, noise="secure_laplace")
    with pytest.raises(InvalidInputError, match="calibration must be 'tight'"):
        BinaryTreeCounter(8, epsilon=1.0, delta=1e-5, noise="secure", calibration="paper")
    with pytest.raises(InvalidInputError, match="delta must be > 0"):
        BinaryTreeCounter(8, epsilon=1.0, noise="secure")
    with pytest.raises(InvalidInputError, match="2\\^52 grid steps"):  # so little noise
        BinaryTreeCounter(1024, noise_multiplier=1e-12, delta=1e-5, noise="secure")


# ---------------------------------------------------------------- calibration
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_rdp_noise_multiplier_certifies_the_target_and_exceeds_the_analytic_one(eps):
    delta = 1e-5
    z = zcdp_gaussian_noise_multiplier(eps, delta)
    analytic = gaussian_noise_multiplier(eps, delta)
    assert 1.0 < z / analytic < 1.12  # measured 1.04-1.11 for eps in [0.1, 10]
    acc = dp_accounting.rdp.RdpAccountant()  # an independent event type, same RDP curve
    acc.compose(dp_accounting.GaussianDpEvent(z))
    assert acc.get_epsilon(delta) <= eps
    assert zcdp_epsilon(0.5 / (z * (1 - 1e-6)) ** 2, delta) > eps  # and it is the smallest
    c = BinaryTreeCounter(16, 2, epsilon=eps, delta=delta, noise="secure")
    assert c.privacy.epsilon == eps and c.privacy.delta == delta
    assert isinstance(c.dp_event(), dp_accounting.ZCDpEvent)
    assert certified_epsilon(c.dp_event(), delta, accountant="rdp") <= eps
    with pytest.raises(InvalidInputError, match="supported by the pld"):
        certified_epsilon(c.dp_event(), delta)  # PLD would need the discrete law's PLD


def test_privacy_of_a_given_noise_multiplier_and_of_the_discrete_laplace():
    c = BinaryTreeCounter(16, 2, noise_multiplier=2.0, delta=1e-5, noise="secure")
    assert c.privacy.epsilon == zcdp_epsilon(0.5 / 2.0**2, 1e-5) > gaussian_epsilon(2.0, 1e-5)
    lap = BinaryTreeCounter(16, 2, epsilon=0.5, noise="secure_laplace")
    ref = BinaryTreeCounter(16, 2, epsilon=0.5, noise="laplace")
    assert (lap.privacy.epsilon, lap.privacy.delta) == (0.5, 0.0)
    assert lap.noise_scale == pytest.approx(ref.noise_scale * lap.node_sensitivity / 2.0)
    assert lap.dp_event() == dp_accounting.ZCDpEvent(0.5**2 / 2, 0.0)  # eps-DP => eps^2/2


# ---------------------------------------------------------------- variances
def two_sided_chi2(stat: float, dof: int) -> float:
    return 2.0 * min(stats.chi2.cdf(stat, dof), stats.chi2.sf(stat, dof))


def check_variances(releases: np.ndarray, variances: np.ndarray) -> None:
    """Per step t, sum_i x_ti^2 / v_t ~ chi^2_R for R i.i.d. zero-mean normal coordinates.

    The release noise is a sum of discrete Gaussians of >= 2^10 grid units: its law and
    kurtosis differ from the normal by e^-(2 pi^2 2^20)-small terms, so the chi-square law
    is exact for this test. Steps share node noises, so each step is tested on its own at
    ALPHA / T (Bonferroni). The same statistic must reject std x 1.5 and x 2/3 (variance
    x 2.25 and x 0.44: >= 12 standard deviations away at R = 1000).
    """
    n_steps, reps = releases.shape
    stat = np.sum(releases**2, axis=1) / variances
    assert min(two_sided_chi2(s, reps) for s in stat) > ALPHA / n_steps
    for factor in (1.5, 2.0 / 3.0):
        assert max(two_sided_chi2(s / factor**2, reps) for s in stat) < ALPHA


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize(("cls", "extra", "path"), [
    (BinaryTreeCounter, {}, "run"), (BinaryTreeCounter, {"padded": True}, "add"),
    (WindowTreeCounter, {"window": 4}, "add"), (WindowTreeCounter, {"window": 4}, "run")])
def test_secure_counter_variance_matches_its_analytic_variance(cls, extra, path):
    reps, horizon = 1000, 16  # the coordinates are the i.i.d. replicates
    c = cls(horizon, reps, noise_multiplier=0.7, noise="secure", delta=1e-5, **extra)
    zeros = np.zeros((horizon, reps))
    out = c.run(zeros) if path == "run" else np.stack([c.add(z) for z in zeros])
    check_variances(out, c.variance(np.arange(1, horizon + 1)))


@pytest.mark.usefixtures("seeded_os_rng")
def test_secure_laplace_counter_variance_matches_its_analytic_variance():
    # noise at t: k = popcount(t) i.i.d. discrete Laplace nodes of variance v, fourth
    # moment 6 v^2 (Laplace kurtosis; the lattice changes it by O(grid^2 / scale^2)), so
    # E X^4 = 6 k v^2 + 3 k (k - 1) v^2 and Var X^2 = k v^2 (3 + 2 k): a z-test on the mean
    # of X^2 over R coordinates, Bonferroni over T steps
    reps, horizon = 1000, 8
    c = BinaryTreeCounter(horizon, reps, epsilon=1.0, noise="secure_laplace")
    out = c.run(np.zeros((horizon, reps)))
    steps = np.arange(1, horizon + 1)
    k = np.array([bin(t).count("1") for t in steps])
    v = c.variance(steps) / k
    z = (np.mean(out**2, axis=1) - k * v) / np.sqrt(k * v**2 * (3 + 2 * k) / reps)
    assert np.max(np.abs(z)) < stats.norm.isf(ALPHA / (2 * horizon))
    for factor in (1.5, 2.0 / 3.0):
        wrong = (np.mean(out**2, axis=1) - factor**2 * k * v) / np.sqrt(
            factor**4 * k * v**2 * (3 + 2 * k) / reps)
        assert np.min(np.abs(wrong)) > stats.norm.isf(ALPHA / 2)


def test_checkpoint_restores_everything_but_the_randomness():
    c = BinaryTreeCounter(16, 3, epsilon=1.0, delta=1e-5, noise="secure", seed=7)
    c.run(np.random.default_rng(3).uniform(-2, 2, (5, 3)))  # clipped rows counted too
    restored = BinaryTreeCounter.from_state(c.get_state())
    assert (restored.t, restored.n_clipped_, restored.grid, restored.privacy) == \
        (c.t, c.n_clipped_, c.grid, c.privacy)
    assert np.array_equal(restored._sum, c._sum)
    for key, value in c._state_arrays().items():
        assert np.array_equal(restored._state_arrays()[key], value)
    v = np.array([0.1, 0.2, -0.3])
    a, b = c.add(v), restored.add(v)
    assert np.all(a / c.grid % 1 == 0) and np.all(b / c.grid % 1 == 0)
    assert not np.array_equal(a, b)  # fresh OS randomness: same law, other values


# ---------------------------------------------------------------- learners
@pytest.mark.usefixtures("seeded_os_rng")
def test_output_perturbation_secure_outputs_have_the_float_variance():
    # a clean iterate that stays at 0: every release is pure noise of std noise_std(t)
    dim, horizon = 1000, 4
    outs, stds = {}, {}
    for noise in ("secure", "gaussian"):
        m = OutputPerturbation(dim, lam=1.0, horizon=horizon, epsilon=1.0, delta=1e-5,
                               step=lambda w, t, x, y: w, noise=noise, seed=0)
        rows = []
        for _ in range(horizon):
            m.learn_one(np.zeros(dim), 0.0)
            rows.append(m.weights)
        outs[noise] = np.array(rows)
        stds[noise] = np.array([m.noise_std(t) for t in range(1, horizon + 1)])
    # the stated ratio: the RDP multiplier over the analytic one, times the rounding
    ratio = zcdp_gaussian_noise_multiplier(1.0, 1e-5) / gaussian_noise_multiplier(1.0, 1e-5)
    assert np.all(stds["secure"] / stds["gaussian"] >= ratio)
    assert np.all(stds["secure"] / stds["gaussian"] <= ratio * (1 + 2.0**-10))
    check_same_variance(outs["secure"], stds["secure"] ** 2, outs["gaussian"],
                        stds["gaussian"] ** 2)
    assert m.privacy.epsilon == 1.0


@pytest.mark.usefixtures("seeded_os_rng")
def test_ftal_secure_outputs_have_the_float_variance():
    # x = 0 makes every data gradient 0, so w_{t+1} = -noise_t / (mu t) exactly (the ball
    # is large enough that the projection never acts): Var = variance(t) / (mu t)^2
    dim, horizon, mu = 1000, 8, 0.5
    outs, variances = {}, {}
    for noise in ("secure", "gaussian"):
        m = PrivateFTAL(dim, loss=Regularized(LogisticLoss(), mu), domain=L2Ball(dim, 1e9),
                        horizon=horizon, epsilon=1.0, delta=1e-5, noise=noise,
                        counter="tree", seed=0)
        trace = m.run(np.zeros((horizon, dim)), np.ones(horizon))
        steps = np.arange(1, horizon + 1)
        outs[noise] = np.vstack([trace.weights[1:], trace.final_weights])
        variances[noise] = m._counter.variance(steps) / (mu * steps) ** 2
    check_same_variance(outs["secure"], variances["secure"], outs["gaussian"],
                        variances["gaussian"])


def test_grid_release_is_on_the_grid_and_refuses_huge_values():
    out = grid_release(np.array([0.3, -1.1, 7.0]), 0.5, 2.0**-11, random.Random(0))
    assert np.all(out * 2**11 % 1 == 0)
    with pytest.raises(InvalidInputError, match="value must stay below"):
        grid_release(np.array([1e13]), 1.0, 2.0**-10)


def test_offline_learner_and_refusals_of_learners():
    from dpol.learners import PrivateOfflineLearner

    kw = {"loss": LogisticLoss(), "x_star_norm": 2.0, "excess": 0.1, "horizon": 50,
          "epsilon": 1.0, "delta": 1e-5}
    flt = PrivateOfflineLearner(3, **kw, seed=0)
    sec = PrivateOfflineLearner(3, **kw, noise="secure")
    ratio = zcdp_gaussian_noise_multiplier(1.0, 1e-5) / gaussian_noise_multiplier(1.0, 1e-5)
    assert sec.beta == pytest.approx(
        flt.beta * ratio * (1 + sec.grid * math.sqrt(3) / sec.sensitivity), rel=1e-12)
    # the same guarantee; the float learner's is seeded (seed=0), secure noise never is
    assert sec.privacy == dataclasses.replace(flt.privacy, seeded=False)
    X = np.random.default_rng(4).normal(size=(50, 3)) / 2
    assert np.linalg.norm(sec.run(X, np.sign(X[:, 0])).final_weights) <= 2.0 + 1e-12
    with pytest.raises(InvalidInputError, match="calibration must be 'tight'"):
        PrivateOfflineLearner(3, **kw, noise="secure", calibration="paper")
    with pytest.raises(InvalidInputError, match="calibration must be 'tight'"):
        OutputPerturbation(3, lam=1.0, horizon=10, epsilon=1.0, delta=1e-5,
                           step=lambda w, t, x, y: w, noise="secure", calibration="paper")
    with pytest.raises(InvalidInputError, match="noise must be one of"):
        OutputPerturbation(3, lam=1.0, horizon=10, epsilon=1.0, delta=1e-5,
                           step=lambda w, t, x, y: w, noise="secure_laplace")
    # FTAL through its counter: Honaker now takes secure noise (test_secure_release)
    ftal = PrivateFTAL(3, loss=Regularized(LogisticLoss(), 0.5), domain=L2Ball(3, 1.0),
                       horizon=16, epsilon=1.0, delta=1e-5, noise="secure", counter="honaker")
    assert ftal._counter.grid is not None
