"""dpol/learners/_fallback_budget.py: the trivial fallback's budget split."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.accounting.closed_forms import mu_star
from dpol.errors import InvalidInputError
from dpol.learners._fallback_budget import (
    GATE_SHARE,
    LONG_THRESHOLD,
    PRIOR_SHARE,
    SHORT_PRIOR_SHARE,
    SHORT_RESOLUTION,
    fallback_budget,
    fallback_plan,
    gate_resolution,
    gate_start,
    schedule_weight,
)


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.1, 1e-6), (8.0, 1e-3)])
def test_the_shares_and_the_learners_rest_compose_to_the_target(epsilon, delta):
    # Gaussian mechanisms compose as mu^2 = sum mu_i^2: the prior's and the gate's shares
    # of mu*^2 are 1 / z^2 over mu*^2, and the learner at the rest's epsilon holds the rest
    z_prior, z_gate, rest = fallback_budget(epsilon, delta)
    total = mu_star(epsilon, delta) ** 2
    assert (1.0 / z_prior) ** 2 / total == pytest.approx(PRIOR_SHARE, rel=1e-9)
    assert (1.0 / z_gate) ** 2 / total == pytest.approx(GATE_SHARE, rel=1e-9)
    learner = mu_star(rest, delta) ** 2 / total
    assert learner == pytest.approx(1.0 - PRIOR_SHARE - GATE_SHARE, rel=1e-6)


def test_no_noise_without_a_budget_and_bad_shares_are_refused():
    assert fallback_budget(math.inf, 1e-5) == (0.0, 0.0, math.inf)
    with pytest.raises(InvalidInputError, match="prior_share"):
        fallback_budget(1.0, 1e-5, prior_share=0.0)
    with pytest.raises(InvalidInputError, match=r"prior_share \+ gate_share must be below 1"):
        fallback_budget(1.0, 1e-5, prior_share=0.6, gate_share=0.4)


def test_the_schedule_and_the_resolution_are_the_mechanisms():
    # schedule_weight and gate_resolution restate the mechanism's blocks and its gate's
    # public std at the horizon: a run to the horizon must end on the same numbers
    from dpol.learners import PrivateQuadraticFTL
    from dpol.learners.trivial_fallback import WithTrivialFallback

    rng = np.random.default_rng(0)
    for horizon in (4, 7, 300, 1000):  # the gate's first block ends after row h // 4
        z_prior, z_gate, rest = fallback_budget(1.0, 1e-5)
        inner = PrivateQuadraticFTL(2, horizon=horizon, epsilon=rest, seed=1)
        m = WithTrivialFallback(inner, prior_multiplier=z_prior, gate_multiplier=z_gate,
                                seed=2)
        m.run(rng.normal(size=(horizon, 2)) / 3, np.where(rng.random(horizon) < 0.7, 1.0, -1.0))
        assert schedule_weight(horizon, after=gate_start(horizon)) == m._gate_weight
        sd = math.hypot(m.gate_multiplier, m._prior_error_std()) / math.sqrt(m._gate_weight)
        assert gate_resolution(1.0, 1e-5, horizon) == pytest.approx(sd, rel=1e-12)


def test_the_plan_is_short_where_the_gate_cannot_resolve_and_never_for_k_classes():
    for epsilon, short, long in ((1.0, 300, 400), (0.1, 2900, 3000)):
        assert gate_resolution(epsilon, 1e-5, short) > SHORT_RESOLUTION
        assert gate_resolution(epsilon, 1e-5, long) <= SHORT_RESOLUTION
        plan = fallback_plan(epsilon, 1e-5, short)
        assert (plan.short, plan.prior_share, plan.gate_share, plan.significance) == (
            True, SHORT_PRIOR_SHARE, GATE_SHARE, 0.0)
        assert plan.threshold is None  # the mechanism's one-sided test of one std
        plan = fallback_plan(epsilon, 1e-5, long)
        assert (plan.short, plan.prior_share, plan.significance) == (False, PRIOR_SHARE, None)
        assert plan.threshold == LONG_THRESHOLD == 0.0
        assert fallback_plan(epsilon, 1e-5, 50).threshold == math.inf  # the prior alone
        assert not fallback_plan(epsilon, 1e-5, short, classes=3).short
    assert not fallback_plan(math.inf, 1e-5, 10).short  # no noise: nothing to resolve


def test_a_horizon_below_one_is_refused_by_name():
    with pytest.raises(InvalidInputError, match="horizon must be"):
        fallback_plan(1.0, 1e-5, 0)


def test_the_learner_starts_at_a_block_end_where_the_whole_budgets_prior_is_precise():
    from dpol.accounting.closed_forms import mu_star
    from dpol.learners._fallback_budget import LEARNER_FROM_STD, gate_start, learner_start

    for epsilon in (0.05, 0.1, 0.3, 1.0, 3.0):
        z = 1.0 / mu_star(epsilon, 1e-5)
        needed = 2.0 * math.sqrt(3.0) * z / LEARNER_FROM_STD  # rows to std 0.15
        for horizon in (40, 300, 1_000, 5_000, 100_000):
            start = learner_start(epsilon, 1e-5, horizon)
            if needed <= gate_start(horizon):  # the gate's silent blocks suffice
                assert start == 0
                continue
            assert start & (start + 1) == 0  # 2^k - 1: the end of a doubling block
            assert start <= horizon / 4
            if 2 * start + 1 <= horizon / 4:  # not cut by the quarter: the first end
                assert start >= needed > (start - 1) / 2
    assert learner_start(math.inf, 1e-5, 10_000) == 0
