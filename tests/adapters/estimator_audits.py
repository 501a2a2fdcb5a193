"""What the estimators' empirical audits share (test_estimator_audit.py: the regressor;
test_classifier_audit.py: the classifier): the claim audited, the probes, the seeds, the
under-noised twin and the plan check. The audits' rationale (why epsilon = 2, why the
twins' factors) is in test_estimator_audit.py's docstring."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpol.accounting.closed_forms import mu_star
from dpol.adapters import _online_estimator as online_estimator
from dpol.adapters import _private_prep as private_prep
from dpol.evaluation import expected_gaussian_audit
from dpol.evaluation.audit_pairs import under_noised
from dpol.learners._wrapper import LearnerWrapper

EPSILON, DELTA = 2.0, 1e-5
PROBES = np.array([[1.0], [0.0], [-1.0]])
#: a quarter of each side's runs chooses the discriminant and threshold, three quarters
#: count: the view has 6 coordinates, so 250+ runs fit the direction well
TRAIN = 0.25
#: the calibration a fit solves (dp-accounting's analytic Gaussian: ~10 ms of a 12 ms fit)


def seeds(root: int, n: int) -> list[int]:
    """n random_state ints from n spawned children of ``root`` (independent streams)."""
    return [int(c.generate_state(1, np.uint64)[0])
            for c in np.random.SeedSequence(root).spawn(n)]


def under_noised_estimator(monkeypatch: pytest.MonkeyPatch, factor: float) -> None:
    """The estimator with ``factor`` times its noise, in the centre and in the learner:
    the same code and seeds, the noise drawn ``factor`` times too small. The centre keeps
    the original's multiplier on record, so its public std (the 3-std rule) and its event
    are the original's; the learner's counters are rebuilt by ``under_noised``."""
    real_mean, real_make = private_prep.private_label_mean, online_estimator.make_learner

    def mean(y, *, noise_multiplier, **options):
        out = real_mean(y, noise_multiplier=factor * noise_multiplier, **options)
        return dataclasses.replace(out, noise_multiplier=noise_multiplier)

    def make(*args, **options):
        learner = real_make(*args, **options)  # WithIntercept: its noise is its learner's
        under_noised(learner.learner if isinstance(learner, LearnerWrapper) else learner,
                     factor)
        return learner

    monkeypatch.setattr(private_prep, "private_label_mean", mean)
    monkeypatch.setattr(online_estimator, "make_learner", make)


def check_plan(mu: float, factor: float, n_runs: int) -> None:
    """The plan: a view of separation mu (in mu*) drawn with ``factor`` of its noise
    stands 1.5 se above the claim on the held-out runs, in expectation."""
    n_test = n_runs - round(TRAIN * n_runs)
    expected, se = expected_gaussian_audit(mu / factor * mu_star(EPSILON, DELTA), n_test,
                                           delta=DELTA)
    assert expected - 1.5 * se > EPSILON
