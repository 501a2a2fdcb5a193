"""dpol/learners/_fallback_budget.py: the trivial fallback's budget split."""

from __future__ import annotations

import math

import pytest

from dpol.accounting.closed_forms import mu_star
from dpol.errors import InvalidInputError
from dpol.learners._fallback_budget import GATE_SHARE, PRIOR_SHARE, fallback_budget


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
