"""Statistical tests of the counters' noise: right variance, right law, wrong scales rejected.

Coordinates of Gaussian and Laplace noise are independent and identically structured,
so one counter of dimension R on an all-zero stream yields R independent replications
of the noise at every step (the release *is* the noise). The Gamma mechanism couples
the coordinates of a node, so it is tested through many independent counters instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from counter_cases import COUNTERS, make, noises

ALL = sorted(COUNTERS)
WITH_LAPLACE = [n for n in ALL if "laplace" in noises(n)]
SCALES_THAT_MUST_FAIL = (2 / 3, 3 / 2)
HORIZON = 24
REPS = 4000
# Family-wise false-alarm rate per test function; Bonferroni over the steps tested.
ALPHA = 1e-4


def chi2_accepts(noise: np.ndarray, variance: float, n_tests: int) -> bool:
    """Two-sided chi-square test of the variance of zero-mean Gaussian samples.

    For x_i ~ N(0, v) i.i.d., sum x_i^2 / v ~ chi2(n) exactly, so the mean square divided
    by v must lie in [chi2.ppf(a/2, n)/n, chi2.ppf(1-a/2, n)/n] with a = ALPHA/n_tests.
    With n = 4000 that interval is about 1 +- 0.10; a 2/3x scale gives 0.44 and a 3/2x
    scale 2.25, far outside it.
    """
    n = noise.size
    a = ALPHA / n_tests
    ratio = float(np.mean(noise**2)) / variance
    return stats.chi2.ppf(a / 2, n) / n <= ratio <= stats.chi2.ppf(1 - a / 2, n) / n


def clt_accepts(noise: np.ndarray, variance: float, n_tests: int) -> bool:
    """z-test of E[x^2] = v for any zero-mean law, with the standard error of x^2 estimated.

    By the CLT mean(x^2) ~ N(v, var(x^2)/n); |z| <= Phi^-1(1 - a/2), a = ALPHA/n_tests.
    """
    sq = noise.ravel() ** 2
    z = (sq.mean() - variance) / (sq.std(ddof=1) / np.sqrt(sq.size))
    return abs(z) <= stats.norm.ppf(1 - ALPHA / n_tests / 2)


def zero_stream_noise(name: str, noise: str, scale: float = 1.0) -> tuple[np.ndarray, object]:
    """(T, REPS) noise of a counter with REPS coordinates on an all-zero stream."""
    counter = make(name, HORIZON, REPS, noise=noise, seed=2024)
    return scale * counter.run(np.zeros((HORIZON, REPS))), counter


@pytest.mark.parametrize("name", ALL)
def test_gaussian_variance_matches_analytic_at_every_step(name):
    noise, counter = zero_stream_noise(name, "gaussian")
    steps = np.arange(1, HORIZON + 1)
    expected = counter.variance(steps)
    assert all(chi2_accepts(noise[t - 1], expected[t - 1], HORIZON) for t in steps)
    assert np.all(np.abs(noise.mean(axis=1)) < 5 * np.sqrt(expected / REPS))  # unbiased
    for scale in SCALES_THAT_MUST_FAIL:  # the same test flags a wrong noise scale
        assert not any(chi2_accepts(scale * noise[t - 1], expected[t - 1], HORIZON)
                       for t in steps)


@pytest.mark.parametrize("name", WITH_LAPLACE)
def test_laplace_variance_matches_analytic_at_every_step(name):
    noise, counter = zero_stream_noise(name, "laplace")
    steps = np.arange(1, HORIZON + 1)
    expected = counter.variance(steps)
    assert all(clt_accepts(noise[t - 1], expected[t - 1], HORIZON) for t in steps)
    for scale in SCALES_THAT_MUST_FAIL:
        assert not any(clt_accepts(scale * noise[t - 1], expected[t - 1], HORIZON)
                       for t in steps)


def ks_gaussian_pvalue(noise: np.ndarray, variance: np.ndarray) -> float:
    """KS p-value of standardized noise against N(0, 1), one step per coordinate.

    Noise at different steps of one coordinate is correlated (shared nodes), so each
    coordinate contributes the noise of a single step (coordinate r -> step r mod T):
    REPS independent N(0, 1) draws under the null.
    """
    reps = noise.shape[1]
    steps = np.arange(reps) % noise.shape[0]
    z = noise[steps, np.arange(reps)] / np.sqrt(variance[steps])
    return float(stats.kstest(z, "norm").pvalue)


@pytest.mark.parametrize("name", ALL)
def test_gaussian_law_ks_accepts_right_scale_and_rejects_wrong_ones(name):
    noise, counter = zero_stream_noise(name, "gaussian")
    variance = counter.variance(np.arange(1, HORIZON + 1))
    assert ks_gaussian_pvalue(noise, variance) > ALPHA
    for scale in SCALES_THAT_MUST_FAIL:
        # with 4000 draws the KS distance of N(0, s^2) from N(0, 1) (0.08 at s = 2/3,
        # 0.09 at s = 3/2) is ~6x the 1e-4 critical value 0.03
        assert ks_gaussian_pvalue(scale * noise, variance) < ALPHA


@pytest.mark.parametrize("name", ["binary", "window-4", "honaker"])
def test_laplace_node_law_ks(name):
    # at t = 1 the release is one node: i.i.d. Laplace(scale) coordinates
    noise, counter = zero_stream_noise(name, "laplace")
    law = stats.laplace(scale=counter.noise_scale)
    assert stats.kstest(noise[0], law.cdf).pvalue > ALPHA
    for scale in SCALES_THAT_MUST_FAIL:
        assert stats.kstest(scale * noise[0], law.cdf).pvalue < ALPHA


@pytest.mark.parametrize("name", ["binary", "window-4"])
def test_gamma_node_radius_ks_and_variance(name):
    # at t = 1 the release is one Gamma-mechanism draw: ||n|| ~ Gamma(d, theta) and the
    # per-coordinate variance is (d + 1) theta^2; many independent counters, d = 3
    dim, n = 3, 3000
    releases = np.stack([make(name, 4, dim, noise="gamma", seed=s).add(np.zeros(dim))
                         for s in range(n)])
    theta = make(name, 4, dim, noise="gamma").noise_scale
    radius = np.linalg.norm(releases, axis=1)
    law = stats.gamma(a=dim, scale=theta)
    assert stats.kstest(radius, law.cdf).pvalue > ALPHA
    for scale in SCALES_THAT_MUST_FAIL:
        assert stats.kstest(scale * radius, law.cdf).pvalue < ALPHA
    assert clt_accepts(releases, (dim + 1) * theta**2, 1)
    # isotropy: the mean direction is near zero (each coordinate of the mean unit vector
    # has std 1/sqrt(3 n) = 0.0105; 5 of those is the bound)
    mean_dir = (releases / radius[:, None]).mean(axis=0)
    assert np.all(np.abs(mean_dir) < 5 / np.sqrt(dim * n))


@pytest.mark.parametrize("name", ["binary", "window-4", "honaker"])
def test_gamma_variance_matches_analytic(name):
    # sums of independent Gamma nodes at later steps; many independent counters
    dim, n, horizon = 2, 2000, 8
    noise = np.stack([make(name, horizon, dim, noise="gamma", seed=s).run(np.zeros((horizon, dim)))
                      for s in range(n)])  # (n, T, d)
    counter = make(name, horizon, dim, noise="gamma")
    for t in range(1, horizon + 1):
        assert clt_accepts(noise[:, t - 1], counter.variance(t), horizon)
        for scale in SCALES_THAT_MUST_FAIL:
            assert not clt_accepts(scale * noise[:, t - 1], counter.variance(t), horizon)


def test_noise_is_persistent_across_releases():
    # the node (0, 4] of the binary tree is noised once and reused at t = 4..7: the
    # releases at 5, 6, 7 minus their own newer nodes all carry that same draw, so the
    # covariance of noise_4 and noise_6 equals one node variance (JKT spec test 6)
    noise, counter = zero_stream_noise("binary", "gaussian")
    unit = counter.variance(1)
    cov = float(np.mean(noise[3] * noise[5]))  # steps 4 and 6 share node (0, 4]
    # noise_4 = a, noise_6 = a + b with a, b i.i.d. N(0, u): Var(a (a + b)) = E a^4 +
    # E a^2 b^2 - u^2 = 3u^2, so the mean of REPS products has standard error u sqrt(3/REPS)
    se = unit * np.sqrt(3 / REPS)
    assert abs(cov - unit) < 5 * se
    independent = float(np.mean(noise[0] * noise[1]))  # steps 1 and 2 share no node
    assert abs(independent) < 5 * se
