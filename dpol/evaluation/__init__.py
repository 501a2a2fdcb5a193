"""Evaluation of online learners (layer L5): regret, prequential scores, audits.

* :mod:`dpol.evaluation.regret` — the best fixed point in hindsight (exact for
  quadratics, certified otherwise) and cumulative / average regret against it;
* :mod:`dpol.evaluation.prequential` — online (test-then-train) accuracy and squared
  error, and held-out accuracy;
* :mod:`dpol.evaluation.excess_risk` — KNJ's excess empirical risk of every release;
* :mod:`dpol.evaluation.audit` — empirical DP audits: a lower bound on epsilon from
  runs on two neighbouring streams (runners, pairs, the suite and the adaptive adversary
  in the ``audit_*`` modules).
"""

from dpol.evaluation.audit import AuditResult, audit, audit_releases, expected_gaussian_audit
from dpol.evaluation.audit_adaptive import ADAPTIVE_RELEASES, adaptive_releases, audit_adaptive
from dpol.evaluation.audit_bandit import audit_bandit, bandit_releases, worst_case_bandit_losses
from dpol.evaluation.audit_counters import audit_counter, counter_releases, worst_case_streams
from dpol.evaluation.audit_learners import audit_learner, learner_releases
from dpol.evaluation.audit_pairs import (
    Attainment,
    sensitivity_attainment,
    under_noised,
    worst_case_learner_streams,
)
from dpol.evaluation.excess_risk import ExcessRisk, excess_empirical_risk, released_models
from dpol.evaluation.prequential import (
    RunningScore,
    holdout_accuracy,
    prequential_accuracy,
    prequential_mse,
)
from dpol.evaluation.regret import (
    FixedPointResult,
    average_regret,
    best_fixed_point,
    cumulative_regret,
)

__all__ = [
    "ADAPTIVE_RELEASES",
    "Attainment",
    "AuditResult",
    "ExcessRisk",
    "FixedPointResult",
    "RunningScore",
    "adaptive_releases",
    "audit",
    "audit_adaptive",
    "audit_bandit",
    "audit_counter",
    "audit_learner",
    "audit_releases",
    "average_regret",
    "bandit_releases",
    "best_fixed_point",
    "counter_releases",
    "cumulative_regret",
    "excess_empirical_risk",
    "expected_gaussian_audit",
    "holdout_accuracy",
    "learner_releases",
    "prequential_accuracy",
    "prequential_mse",
    "released_models",
    "sensitivity_attainment",
    "under_noised",
    "worst_case_bandit_losses",
    "worst_case_learner_streams",
    "worst_case_streams",
]
