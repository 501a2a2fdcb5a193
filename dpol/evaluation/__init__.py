"""Evaluation of online learners (layer L5): regret, prequential scores, audits.

* :mod:`dpol.evaluation.regret` — the best fixed point in hindsight (exact for
  quadratics, certified otherwise) and cumulative / average regret against it;
* :mod:`dpol.evaluation.prequential` — online (test-then-train) accuracy and squared
  error, and held-out accuracy;
* :mod:`dpol.evaluation.excess_risk` — KNJ's excess empirical risk of every release;
* :mod:`dpol.evaluation.audit` — empirical DP audits: a lower bound on epsilon from many
  runs of a counter, learner or bandit learner on two neighbouring streams (the learners'
  runs in :mod:`dpol.evaluation.audit_learners`).
"""

from dpol.evaluation.audit import (
    AuditResult,
    audit,
    audit_bandit,
    audit_counter,
    audit_learner,
    audit_releases,
    bandit_releases,
    counter_releases,
    expected_gaussian_audit,
    learner_releases,
    worst_case_bandit_losses,
    worst_case_learner_streams,
    worst_case_streams,
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
    "AuditResult",
    "ExcessRisk",
    "FixedPointResult",
    "RunningScore",
    "audit",
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
    "worst_case_bandit_losses",
    "worst_case_learner_streams",
    "worst_case_streams",
]
