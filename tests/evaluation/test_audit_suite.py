"""Audits of what a user sees, for every learner and counter kind (dpol.evaluation.audit_suite).

Every case claims (1, 0.05)-DP (the window counter: window DP with W = 4). Planning numbers
come from :func:`expected_gaussian_audit` (expected held-out counts of the best threshold
test between N(0, 1) and N(mu, 1) plugged into the Clopper-Pearson bounds, and the
delta-method standard error se); n_runs are chosen from them, never by trial until green.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.accounting import PrivacyGuarantee, gaussian_epsilon, mu_star
from dpol.errors import InvalidInputError
from dpol.evaluation import (
    audit_learner,
    expected_gaussian_audit,
    learner_releases,
    sensitivity_attainment,
    under_noised,
    worst_case_learner_streams,
)
from dpol.evaluation.audit import audited_rows
from dpol.evaluation.audit_suite import (
    CASES,
    SUITE_DELTA,
    SUITE_EPSILON,
    SUITE_WINDOW,
    _hinge,
    run_case,
)
from dpol.learners import PrivateFTAL
from dpol.sets import L2Ball

MU = mu_star(SUITE_EPSILON, SUITE_DELTA)  # 0.750: a calibrated Gaussian release; twin 2 MU


def held_out_separation_bound(n_test, confidence):
    """The audit's bound when all n_test held-out runs of each side separate."""
    low = ((1.0 - confidence) / 2.0) ** (1.0 / n_test)  # one-sided exact bound at k = n
    return math.log((low - SUITE_DELTA) / (1.0 - low))


# ------------------------------------------------------------------------ the sweep
# Every case passes at confidence 0.999 (each can fail falsely with probability <= 0.001
# when its claim holds, all 37 with probability < 4%), with 150 runs a side (75 held out).
# The sweep can fail: a release without noise separates every held-out run, which shows
# held_out_separation_bound(75, 0.999) = 2.18 > 1 (next test: the noiseless twins).
SWEEP_RUNS, SWEEP_CONFIDENCE = 150, 0.999


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_every_learner_and_counter_kind_passes_its_audit(name):
    case = CASES[name]
    result = run_case(case, SWEEP_RUNS, seed=11, confidence=SWEEP_CONFIDENCE)
    assert result.passed, result.summary()
    claimed = case.claimed
    assert (claimed.epsilon, claimed.delta) == (SUITE_EPSILON, SUITE_DELTA)
    # the window counter's claim is window DP, audited inside its window (the bandit
    # refuses window DP: its window case covers all its releases)
    window = SUITE_WINDOW if case.counter == "window_tree" and not case.bandit else None
    assert claimed.window == window


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_every_noiseless_twin_is_flagged(name):
    # the pair and the releases the sweep reads show the differing element for every case:
    # without noise, 50 held-out runs a side separate (or nearly: the bandit's played
    # points also carry its exploration), above the claim at the sweep's confidence
    # (held_out_separation_bound(50, 0.999) = 1.75 when all separate)
    result = run_case(CASES[name], 100, factor=0.0, seed=12, confidence=SWEEP_CONFIDENCE)
    assert not result.passed, result.summary()


# ------------------------------------------------------------------------ window claims
def ftal_window(window):
    # W = 1: the window tree keeps one noisy node per element (its leaf); release t is
    # the exact sum of the expired elements plus the leaf noise of element t
    return lambda seed: PrivateFTAL(2, loss=_hinge(1.0), domain=L2Ball(2, 1e3), horizon=16,
                                    epsilon=SUITE_EPSILON, delta=SUITE_DELTA, window=window,
                                    counter="window_tree", seed=seed)


def test_the_audit_reads_only_the_releases_inside_the_window():
    claim = PrivacyGuarantee(1.0, 0.05, window=3)
    assert audited_rows(claim, 1, 17) == slice(1, 4)
    assert audited_rows(PrivacyGuarantee(1.0, 0.05), 1, 17) == slice(0, 17)
    with pytest.raises(InvalidInputError, match="first"):
        audited_rows(claim, 17, 17)
    # the learner's release indexing: row k is released after k elements, so the
    # element at position p first changes row p + 1 (noiseless FTAL, position 5)
    make = lambda seed: under_noised(ftal_window(3)(seed), 0.0)  # noqa: E731
    (Xa, ya), (Xb, yb) = worst_case_learner_streams(make(0), position=5)
    a, b = (learner_releases(make, X, y, 1, seed=0).reshape(17, 2)
            for X, y in ((Xa, ya), (Xb, yb)))
    changed = np.flatnonzero(np.any(a != b, axis=1))
    assert changed[0] == 6 and changed[-1] == 16


def test_claiming_full_dp_for_a_window_counter_is_flagged():
    # PrivateFTAL with window W = 1: its true claim is window DP. Read on all 17 releases,
    # the element at position 0 sits in all of them: release 0 with its leaf noise, the
    # later 15 exactly plus one fresh leaf noise each, 16 independent Gaussian looks of
    # ratio MU each, together 4 MU = 3.0 (true epsilon ~ 11 at delta 0.05). 100 held-out
    # runs a side then (almost) all separate, close to held_out_separation_bound(100,
    # 0.95) = 2.9 > 1. Its real window claim reads release 1 only, one Gaussian of ratio
    # MU, whose expected audit on 100 held-out runs is 0 (it can exceed 1 with <= 5%)
    make = ftal_window(1)
    window_claim = make(0).privacy
    assert window_claim.window == 1
    full_claim = PrivacyGuarantee(window_claim.epsilon, window_claim.delta)
    assert full_claim.window is None
    flagged = audit_learner(make, n_runs=200, claimed=full_claim, seed=5)
    assert not flagged.passed, flagged.summary()
    honest = audit_learner(make, n_runs=200, seed=5)
    assert honest.passed, honest.summary()
    assert honest.claimed_epsilon == full_claim.epsilon


# ------------------------------------------------------------------------ twins
def planned(mu, n_test):
    """expected_gaussian_audit at the suite's delta, checked 3 se above the claim."""
    expected, se = expected_gaussian_audit(mu, n_test, delta=SUITE_DELTA)
    assert expected - 3.0 * se > SUITE_EPSILON
    return expected, se


@pytest.mark.slow
def test_half_noise_igd_twin_is_flagged_and_igd_passes():
    # ~15 s. Release t is a Gaussian mechanism of noise z lam / (t + 1) (z = sqrt(T) / MU)
    # and, on the pair, of change lam / (t + 1) (test above): together the releases have
    # mu = MU, the half-noise twin 2 MU
    case = CASES["PrivateIGD"]
    ratio = sensitivity_attainment(case.build).ratio
    mu = MU * math.sqrt(np.sum(ratio**2) / len(ratio))
    assert mu == pytest.approx(MU, rel=1e-9)
    planned(2.0 * mu, 1_500)
    twin = run_case(case, 3_000, factor=0.5, seed=3)
    assert not twin.passed, twin.summary()
    assert twin.epsilon_lower <= gaussian_epsilon(0.5 / mu, SUITE_DELTA)
    real = run_case(case, 1_000, seed=4)  # the same audit: the real IGD passes
    assert real.passed, real.summary()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["OutputPerturbation", "PrivateOfflineLearner",
                                  "PrivateFTAL/window_tree"])
def test_half_noise_twins_of_tight_cases_are_flagged(name):
    # The pair attains the declared sensitivity and the audited releases reveal every
    # noised value: the running mean's releases are independent Gaussians of ratio
    # MU / sqrt(T) each; the offline learner releases one Gaussian of ratio MU; FTAL's
    # iterates are -(released gradient sum) / (mu t), and its window tree (W = 4)
    # releases the three nodes holding element 0 (leaf, [0, 1], [0..3]) as rows 1, 2, 4,
    # the window's rows. Twins: 2 MU = 1.50; expected_gaussian_audit(1.50, 1000) = 1.97,
    # se 0.29 (3.3 se above 1), and below the twin's true epsilon 2.93
    planned(2.0 * MU, 1_000)
    twin = run_case(CASES[name], 2_000, factor=0.5, seed=3)
    assert not twin.passed, twin.summary()
    assert twin.epsilon_lower <= gaussian_epsilon(0.5 / MU, SUITE_DELTA)
