"""The audit suite: every learner with every counter kind it accepts, audited on its releases.

One small configuration per (learner, counter kind) whose default pair attains the
declared sensitivity where the learner allows it (a smoothed hinge loss, a domain too
large to project onto). Every case claims (1, 0.05)-DP under replace-one (a large delta
keeps the runs few; the calibration code is the same at any delta), with a window of 4
for the window counter. :func:`run_case` audits one case or its under-noised twin;
``benchmarks/audits.py`` writes docs/audits.md.

Examples
--------
>>> sorted({c.learner for c in CASES.values()})[:3]
['OutputPerturbation', 'PrivateBanditFrankWolfe', 'PrivateFTAL']
>>> CASES["PrivateFTAL/window_tree"].build(0).privacy.window
4
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.counters import COUNTER_NAMES
from dpol.errors import PaperCalibrationWarning
from dpol.evaluation.audit import AuditResult
from dpol.evaluation.audit_bandit import audit_bandit
from dpol.evaluation.audit_learners import audit_learner
from dpol.evaluation.audit_pairs import under_noised
from dpol.learners import (
    OutputPerturbation,
    PrivateBanditFrankWolfe,
    PrivateFTAL,
    PrivateFTRL,
    PrivateGIGA,
    PrivateIGD,
    PrivateIncrementalERM,
    PrivateIncrementalRegression,
    PrivateKernelRegression,
    PrivateOfflineLearner,
    PrivateOnlineFrankWolfe,
    PrivateQuadraticFTL,
    ProjectedIncrementalRegression,
)
from dpol.losses import HingeLoss, Regularized, SquaredLoss
from dpol.sets import Box, L2Ball, Simplex

__all__ = ["CASES", "SUITE_DELTA", "SUITE_EPSILON", "SUITE_WINDOW", "AuditCase", "run_case"]

#: the epsilon every case of the suite claims
SUITE_EPSILON = 1.0
#: the delta every case of the suite claims
SUITE_DELTA = 0.05
#: the window of the window counter's cases (learners that take one)
SUITE_WINDOW = 4
_DIM, _T = 2, 16
_PRIVACY = {"epsilon": SUITE_EPSILON, "delta": SUITE_DELTA}


@dataclass(frozen=True)
class AuditCase:
    """One learner configuration of the suite.

    ``build(seed)`` makes the learner; ``counter`` is its counter kind (None for learners
    that add their own noise); bandits are audited on their played points.
    """

    name: str
    learner: str
    counter: str | None
    build: Callable[[int], object]
    bandit: bool = False

    def factory(self, factor: float = 1.0) -> Callable[[int], object]:
        """``factory(seed)``: the learner, or its twin with ``factor`` times the noise."""
        if factor == 1.0:
            return self.build
        return lambda seed: under_noised(self.build(seed), factor)

    @property
    def claimed(self) -> PrivacyGuarantee:
        """The real learner's guarantee, what its twins are audited against."""
        return self.build(0).privacy


def run_case(case: AuditCase, n_runs: int, *, factor: float = 1.0, seed: object = 0,
             **options) -> AuditResult:
    """Audit ``case`` (or its twin with ``factor`` times the noise) against the real claim.

    ``n_runs`` per neighbour; ``options`` go to :func:`~dpol.evaluation.audit.audit_releases`
    (``confidence``, ...). Bandits: the played points (``release`` may be overridden).

    Examples
    --------
    >>> result = run_case(CASES["PrivateOfflineLearner"], 200, seed=0)
    >>> result.claimed_epsilon, result.passed
    (1.0, True)
    """
    factory, claimed = case.factory(factor), case.claimed
    if case.bandit:
        options.setdefault("release", "points")
        return audit_bandit(factory, n_runs=n_runs, claimed=claimed, seed=seed, **options)
    return audit_learner(factory, n_runs=n_runs, claimed=claimed, seed=seed, **options)


# ---------------------------------------------------------------------------- configurations
def _hinge(alpha: float) -> Regularized:
    # phi' = -1 for margins <= 1 - h = 1/2: a pair at margin 0 changes the gradient by 2 L
    return Regularized(HingeLoss(0.5), alpha)


def _window_options(counter: str, key: str) -> dict:
    if counter != "window_tree":
        return {"counter": counter}
    if key == "window":  # FTAL and online Frank-Wolfe take the window themselves
        return {"counter": counter, "window": SUITE_WINDOW}
    return {"counter": counter, "counter_options": {"window": SUITE_WINDOW}}


def _ftal(counter: str) -> Callable[[int], object]:
    # a domain too large to project onto: w_{t+1} = -(released gradient sum) / (mu t)
    return lambda seed: PrivateFTAL(_DIM, loss=_hinge(1.0), domain=L2Ball(_DIM, 1e3),
                                    horizon=_T, seed=seed, **_PRIVACY,
                                    **_window_options(counter, "window"))


def _ftrl(counter: str) -> Callable[[int], object]:
    # R^d and a small step: w_{t+1} = -0.01 (released gradient sum), linear in the releases
    return lambda seed: PrivateFTRL(_DIM, loss=HingeLoss(0.5), horizon=_T, eta=0.01,
                                    seed=seed, **_PRIVACY, **_window_options(counter, "options"))


def _frank_wolfe(counter: str) -> Callable[[int], object]:
    return lambda seed: PrivateOnlineFrankWolfe(_DIM, loss=_hinge(1.0), domain=Simplex(_DIM),
                                                horizon=_T, seed=seed, **_PRIVACY,
                                                **_window_options(counter, "window"))


def _pqftl(counter: str) -> Callable[[int], object]:
    return lambda seed: PrivateQuadraticFTL(_DIM, horizon=_T, seed=seed, **_PRIVACY,
                                            **_window_options(counter, "options"))


def _regression(counter: str) -> Callable[[int], object]:
    # NoisyProjGrad's r_t <= 20 (noisy runs need 1-2; noiseless ones would take 100)
    return lambda seed: PrivateIncrementalRegression(
        _DIM, domain=L2Ball(_DIM), horizon=_T, max_iter=20, seed=seed, **_PRIVACY,
        **_window_options(counter, "options"))


def _projected(counter: str) -> Callable[[int], object]:
    # m = 2 of d = 3; the l2 ball's lift is Phi^+ (the l1 ball's, a linear program a step,
    # costs 6x the run)
    return lambda seed: ProjectedIncrementalRegression(
        3, domain=L2Ball(3), horizon=8, projection_dim=2, projection_seed=1, max_iter=5,
        inner_iter=5, seed=seed, **_PRIVACY, **_window_options(counter, "options"))


def _bandit(counter: str) -> Callable[[int], object]:
    # T = 25: 5 batches, 4 counter releases; the window counter must cover all of them
    # (the learner refuses window DP), so its case runs with window 4 = full DP
    options = {"counter_options": {"window": 4}} if counter == "window_tree" else {}
    return lambda seed: PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=_DIM), horizon=25,
                                                counter=counter, seed=seed, **_PRIVACY,
                                                **options)


def _running_mean(w: np.ndarray, t: int, x: np.ndarray, y: float) -> np.ndarray:
    return w + (y * x - w) / t  # w_{t+1} = mean of y_s x_s: t ||w - w'|| <= 2 = lam


def _squared(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return 0.5 * (X @ w - y) ** 2


def _output_perturbation(seed: int) -> OutputPerturbation:
    return OutputPerturbation(_DIM, lam=2.0, step=_running_mean, loss=_squared, horizon=_T,
                              seed=seed, **_PRIVACY)


def _offline(seed: int) -> PrivateOfflineLearner:
    # alpha = excess / ||x*||^2 = 1: w_2 = y x / 2 stays inside the ball and the hinge's
    # linear zone (h = 1/4), so the average moves by exactly the declared sensitivity
    return PrivateOfflineLearner(_DIM, loss=HingeLoss(0.25), x_star_norm=1.0, excess=1.0,
                                 horizon=8, seed=seed, **_PRIVACY)


def _erm(seed: int) -> PrivateIncrementalERM:
    return PrivateIncrementalERM(_DIM, loss=SquaredLoss(), domain=L2Ball(_DIM), horizon=8,
                                 tau=4, solver_options={"steps": 10}, seed=seed, **_PRIVACY)


def _quiet(build: Callable[[int], object]) -> Callable[[int], object]:
    def make(seed: int) -> object:
        with warnings.catch_warnings():  # a twin's calibration report is not news here
            warnings.simplefilter("ignore", PaperCalibrationWarning)
            return build(seed)
    return make


_SELF_NOISED: dict[str, Callable[[int], object]] = {
    "OutputPerturbation": _output_perturbation,
    "PrivateIGD": lambda seed: PrivateIGD(_DIM, loss=_hinge(1.0), horizon=_T, seed=seed,
                                          **_PRIVACY),
    # alpha = 2 and h = 1/2: warm-up t_q = ceil(2 (1/h + alpha)^2 / alpha^2) + 1 = 9,
    # then 8 data-dependent releases
    "PrivateGIGA": lambda seed: PrivateGIGA(_DIM, loss=_hinge(2.0), domain=L2Ball(_DIM),
                                            horizon=_T, seed=seed, **_PRIVACY),
    "PrivateOfflineLearner": _offline,
    "PrivateIncrementalERM": _erm,
    "PrivateKernelRegression": lambda seed: PrivateKernelRegression(
        _DIM, horizon=_T, n_features=16, seed=seed, **_PRIVACY),
}
_WITH_COUNTER: dict[str, Callable[[str], Callable[[int], object]]] = {
    "PrivateFTAL": _ftal,
    "PrivateFTRL": _ftrl,
    "PrivateOnlineFrankWolfe": _frank_wolfe,
    "PrivateQuadraticFTL": _pqftl,
    "PrivateIncrementalRegression": _regression,
    "ProjectedIncrementalRegression": _projected,
    "PrivateBanditFrankWolfe": _bandit,
}

#: name -> case: "Learner/counter" for learners with a counter, "Learner" otherwise
CASES: dict[str, AuditCase] = {
    **{f"{learner}/{counter}": AuditCase(f"{learner}/{counter}", learner, counter,
                                         _quiet(make(counter)),
                                         bandit=learner == "PrivateBanditFrankWolfe")
       for learner, make in _WITH_COUNTER.items() for counter in COUNTER_NAMES},
    **{learner: AuditCase(learner, learner, None, _quiet(build))
       for learner, build in _SELF_NOISED.items()},
}
