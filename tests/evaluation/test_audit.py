"""dpol/evaluation/audit.py: the empirical DP audit's bound, sound and close to its
prediction; the runs of counters, learners and their pairs are tested in
test_audit_counters.py, test_audit_learners.py and test_audit_pairs.py.

Planning numbers come from :func:`expected_gaussian_audit` (expected held-out counts of the
best threshold test between N(0, 1) and N(mu, 1) plugged into the Clopper-Pearson bounds,
with the delta-method standard error se of the bound); n_runs are chosen from them, never
by trial until green. A Gaussian mechanism calibrated to (epsilon, delta) has ratio
mu = mu*(epsilon, delta); its half-noise twin has 2 mu.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpol.accounting import PrivacyGuarantee, gaussian_epsilon, mu_star
from dpol.errors import InvalidInputError
from dpol.evaluation import audit, audit_releases, expected_gaussian_audit
from dpol.evaluation.audit import _cp_lower, _cp_upper

DELTA = 1e-5


def gaussian_pair(mu, n, k, seed):
    """n runs of N(0, S) and N(m, S) in R^k with Mahalanobis distance mu, S correlated."""
    rng = np.random.default_rng(seed)
    L = np.eye(k) + 0.5 * rng.normal(size=(k, k))
    shift = L @ (mu * np.eye(k)[0])
    return rng.normal(size=(n, k)) @ L.T, rng.normal(size=(n, k)) @ L.T + shift


# ------------------------------------------------------------------------ the bound itself
@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (1, 250), (57, 250)])
def test_clopper_pearson_matches_scipy_exact_interval(k, n):
    # one-sided bounds at level 1 - g are the ends of the two-sided exact interval at 1 - 2g
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    assert math.isclose(float(_cp_lower(k, n, 0.05)), ci.low, abs_tol=1e-12)
    assert math.isclose(float(_cp_upper(k, n, 0.05)), ci.high, abs_tol=1e-12)


def test_gaussian_bound_is_below_the_truth_and_close_to_the_prediction():
    mu = 2.0 * mu_star(1.0, DELTA)  # 0.536: a half-noise twin of a (1, 1e-5) mechanism
    truth = gaussian_epsilon(1.0 / mu, DELTA)  # 2.15
    a, b = gaussian_pair(mu, 200_000, 4, seed=0)
    result = audit_releases(a, b, epsilon=1.0, delta=DELTA)
    expected, se = expected_gaussian_audit(mu, 100_000, delta=DELTA)  # 1.39, se 0.12
    # sound with 95% confidence (the truth is the best any event can show), and the LDA
    # on correlated 4-d releases loses almost nothing to the 1-d likelihood ratio: within
    # 4 se of the prediction (estimating 4 directions from 1e5 runs costs ~1e-4 in mu)
    assert result.epsilon_lower <= truth
    assert result.epsilon_lower >= expected - 4.0 * se
    assert not result.passed and result.n_test == (100_000, 100_000)


def test_bound_covers_a_tight_mechanism_at_the_stated_confidence():
    # The Laplace mechanism (sensitivity 1, scale 1) is exactly 1-DP and every tail event
    # {x > t}, t >= 1, has probability ratio exactly e: the audit can reach epsilon = 1, so
    # coverage is really at stake. Each of 200 independent audits exceeds 1 with
    # probability <= 5%, so the count is stochastically below Binomial(200, 0.05), whose
    # 99.9% quantile is 21. Intervals that are too narrow are caught: at confidence 0.5
    # (still a valid, weaker statement) the same count is far above that limit.
    def over(confidence):
        count = 0
        for seed in range(200):
            rng = np.random.default_rng(seed)
            a, b = rng.laplace(size=(2_000, 1)), 1.0 + rng.laplace(size=(2_000, 1))
            result = audit_releases(a, b, epsilon=1.0, delta=0.0, confidence=confidence)
            count += result.epsilon_lower > 1.0
        return count

    limit = stats.binom.ppf(0.999, 200, 0.05)
    assert over(0.95) <= limit < over(0.5)


def test_a_non_private_mechanism_is_flagged_with_few_runs():
    # identical releases on each side: all 50 held-out runs separate; the exact one-sided
    # bounds are 0.025^(1/50) (below) and 1 - 0.025^(1/50) (above), so the bound is
    # ln((0.025^(1/50) - delta) / (1 - 0.025^(1/50))) = 2.57 > 1
    a, b = np.zeros((100, 2)), np.ones((100, 2))
    result = audit_releases(a, b, epsilon=1.0, delta=DELTA)
    low = 0.025**0.02
    assert result.epsilon_lower == pytest.approx(math.log((low - DELTA) / (1 - low)), rel=1e-9)
    assert not result.passed and "VIOLATION" in result.summary()


def test_callable_statistic_and_generic_audit():
    def release(stream, n, seed):  # Gaussian mechanism, sensitivity 1, std 1/mu
        return stream + np.random.default_rng(seed).normal(size=(n, 1)) / mu

    mu = 2.0 * mu_star(1.0, DELTA)
    result = audit(release, 0.0, 1.0, n_runs=200_000, seed=3, statistic=lambda r: r[:, 0],
                   claimed=PrivacyGuarantee(1.0, DELTA), name="gaussian")
    expected, se = expected_gaussian_audit(mu, 100_000, delta=DELTA)
    assert gaussian_epsilon(1.0 / mu, DELTA) >= result.epsilon_lower >= expected - 4.0 * se
    assert "DP audit of gaussian" in result.summary()


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"epsilon": -1.0}, "epsilon"), ({"delta": 1.0}, "delta"), ({"confidence": 1.0},
                                                                 "confidence"),
    ({"train_fraction": 0.0}, "train_fraction"), ({"statistic": "lr"}, "statistic"),
    ({"releases_b": np.zeros((10, 3))}, "releases_b"), ({"releases_a": np.zeros((3, 2))},
                                                        "releases_a"),
    ({"releases_a": np.full((10, 2), np.nan)}, "releases_a"),
    ({"statistic": lambda r: r[:3, 0]}, "statistic"),
])
def test_bad_input_names_the_argument(kwargs, word):
    args = {"releases_a": np.zeros((10, 2)), "releases_b": np.ones((10, 2)), "epsilon": 1.0,
            "delta": DELTA, **kwargs}
    with pytest.raises(InvalidInputError, match=word):
        audit_releases(**args)
