"""The PrivacyBudget odometer: composition through dp-accounting, exact refusal, bad input."""

from __future__ import annotations

import math
import pickle
import warnings

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpol.accounting import PrivacyBudget, PrivacyGuarantee
from dpol.accounting.budget import PLD_VALUE_DISCRETIZATION
from dpol.counters import BinaryTreeCounter, WindowTreeCounter
from dpol.errors import BudgetExceededError, InvalidInputError, NonPrivateWarning

DELTA = 1e-5


def accountant(kind):
    if kind == "pld":
        return dp_accounting.pld.PLDAccountant(
            value_discretization_interval=PLD_VALUE_DISCRETIZATION)
    return dp_accounting.rdp.RdpAccountant()


def composed_epsilon(kind, events, delta=DELTA):
    """What dp-accounting itself certifies for the ComposedDpEvent of ``events``."""
    acc = accountant(kind)
    acc.compose(dp_accounting.ComposedDpEvent(list(events)))
    return float(acc.get_epsilon(delta))


class _Fake:
    """A release stand-in with a chosen dp_event, privacy and horizon."""

    def __init__(self, event=None, privacy=None, horizon=None):
        self.dp_event, self.privacy, self.horizon = event, privacy, horizon


def snapshot(budget):
    return (budget.spent, budget.remaining(), budget.n_releases, budget.history,
            pickle.dumps(budget))


@pytest.mark.parametrize("kind", ["pld", "rdp"])
@pytest.mark.parametrize("z", [0.8, 3.0])
def test_k_gaussian_releases_compose_exactly_as_dp_accounting(kind, z):
    budget = PrivacyBudget(1e6, DELTA, accountant=kind)
    event = dp_accounting.GaussianDpEvent(z)
    previous = 0.0
    for k in range(1, 5):
        spent = budget.spend(event)
        assert spent == budget.spent == composed_epsilon(kind, [event] * k)
        assert spent > previous  # each release costs something
        previous = spent
    assert budget.n_releases == 4
    assert budget.remaining() == 1e6 - budget.spent


@pytest.mark.parametrize("kind", ["pld", "rdp"])
@pytest.mark.parametrize("k", [1, 3])
def test_refuses_the_next_release_exactly_when_the_math_says(kind, k):
    event = dp_accounting.GaussianDpEvent(2.0)
    eps_k = composed_epsilon(kind, [event] * k)
    # a budget of exactly eps_k takes k releases and refuses the (k+1)-th ...
    budget = PrivacyBudget(eps_k, DELTA, accountant=kind)
    for _ in range(k):
        assert budget.can_spend(event)
        budget.spend(event)
    assert budget.spent == eps_k and budget.remaining() == 0.0
    assert not budget.can_spend(event)
    with pytest.raises(BudgetExceededError):
        budget.spend(event)
    # ... and one ulp less refuses the k-th
    tight = PrivacyBudget(math.nextafter(eps_k, 0.0), DELTA, accountant=kind)
    for _ in range(k - 1):
        tight.spend(event)
    assert not tight.can_spend(event)
    with pytest.raises(BudgetExceededError):
        tight.spend(event)
    assert tight.n_releases == k - 1


def test_refusal_names_budget_spent_and_request_and_changes_nothing():
    budget = PrivacyBudget(1.5, DELTA)
    budget.spend(dp_accounting.GaussianDpEvent(4.0))
    budget.spend(PrivacyGuarantee(0.2, 1e-6))
    before = snapshot(budget)
    big = dp_accounting.GaussianDpEvent(1.0)
    alone = composed_epsilon("pld", [big])
    with pytest.raises(BudgetExceededError) as info:
        budget.spend(big)
    message = str(info.value)
    assert message.startswith("PrivacyBudget(epsilon=1.5, delta=1e-05, accountant='pld'")
    assert "GaussianDpEvent(noise_multiplier=1.0)" in message
    assert f"alone costs epsilon {alone:.6g}" in message
    assert f"from {before[0]:.6g}" in message and "nothing was spent" in message
    assert snapshot(budget) == before
    # and the odometer continues exactly like a twin that never saw the refusal
    twin = PrivacyBudget(1.5, DELTA)
    twin.spend(dp_accounting.GaussianDpEvent(4.0))
    twin.spend(PrivacyGuarantee(0.2, 1e-6))
    small = dp_accounting.GaussianDpEvent(8.0)
    assert budget.spend(small) == twin.spend(small)


def test_guarantees_compose_by_basic_composition_beside_the_events():
    budget = PrivacyBudget(5.0, DELTA)
    g1, g2 = PrivacyGuarantee(0.3, 2e-6), PrivacyGuarantee(0.4, 3e-6)
    event = dp_accounting.GaussianDpEvent(2.0)
    assert budget.spend(g1) == 0.3
    assert budget.spend(event) == 0.3 + composed_epsilon("pld", [event], DELTA - 2e-6)
    expected = math.fsum([0.3, 0.4]) + composed_epsilon("pld", [event], DELTA - 2e-6 - 3e-6)
    assert budget.spend(g2) == expected
    assert [round(e, 12) for _, e in budget.history] == [
        0.3, round(0.3 + composed_epsilon("pld", [event], DELTA - 2e-6), 12), round(expected, 12)]
    # guarantees whose deltas use up the budget's delta leave none for a Gaussian event
    full = PrivacyBudget(5.0, DELTA)
    full.spend(PrivacyGuarantee(0.1, DELTA))
    assert not full.can_spend(event)
    assert not full.can_spend(PrivacyGuarantee(0.1, 1e-9))


def test_pure_events_compose_to_the_sum_of_their_epsilons():
    budget = PrivacyBudget(1.5, 0.0)
    event = dp_accounting.LaplaceDpEvent(2.0)  # 0.5-DP
    for k in (1, 2, 3):
        assert budget.spend(event) == 0.5 * k
    assert not budget.can_spend(event)
    # with delta > 0 the accountant's bound is used when smaller than the pure sum
    loose = PrivacyBudget(100.0, DELTA)
    fifty = dp_accounting.SelfComposedDpEvent(event, 50)
    spent = loose.spend(fifty)
    assert spent == min(25.0, composed_epsilon("pld", [fifty]))
    assert spent < 25.0
    assert PrivacyBudget(1.0).spend(dp_accounting.NoOpDpEvent()) == 0.0


def test_counters_and_learners_are_charged_through_event_or_guarantee():
    from dpol.learners import PrivateQuadraticFTL

    budget = PrivacyBudget(3.0, DELTA)
    gaussian = BinaryTreeCounter(64, epsilon=0.5, delta=DELTA, seed=0)
    # the tight calibration certifies 0.5 exactly; PLD is pessimistic by its discretisation
    assert budget.spend(gaussian) == pytest.approx(0.5, abs=5e-3)
    assert budget.spent >= 0.5 - 1e-9
    gamma = BinaryTreeCounter(64, epsilon=0.25, noise="gamma", seed=0)  # no event: guarantee
    assert budget.spend(gamma) == pytest.approx(budget.history[0][1] + 0.25, rel=1e-12)
    # an object with only a guarantee (as most learners) is charged by basic composition;
    # its delta comes off the delta left for the counter's event, which then costs more
    only_privacy = _Fake(privacy=PrivacyGuarantee(0.5, 1e-6))
    expected = 0.25 + 0.5 + composed_epsilon("pld", [gaussian.dp_event()], DELTA - 1e-6)
    assert budget.spend(only_privacy) == pytest.approx(expected, rel=1e-12)
    assert expected > budget.history[1][1] + 0.5
    # a real learner: charged by its events, composed with the counter's Gaussian event by
    # the accountant (mu^2 adds), which costs less than its (0.2, 1e-6) guarantee on top
    learner = PrivateQuadraticFTL(3, horizon=50, epsilon=0.2, delta=1e-6, seed=0)
    before = budget.spent
    expected = 0.25 + 0.5 + composed_epsilon("pld", [gaussian.dp_event(), learner.dp_event()],
                                             DELTA - 1e-6)
    assert budget.spend(learner) == pytest.approx(expected, rel=1e-12)
    assert before < expected < before + 0.2
    # the window tree is DP once its window covers the horizon
    assert budget.can_spend(WindowTreeCounter(16, window=16, epsilon=0.1, delta=DELTA))


def test_pickled_budget_continues_identically():
    budget = PrivacyBudget(3.0, DELTA)
    budget.spend(dp_accounting.GaussianDpEvent(2.0))
    budget.spend(PrivacyGuarantee(0.1, 1e-7))
    copy = pickle.loads(pickle.dumps(budget))
    assert copy.history == budget.history and copy.spent == budget.spent
    event = dp_accounting.GaussianDpEvent(3.0)
    assert copy.spend(event) == budget.spend(event)


def test_non_private_release_is_always_refused():
    budget = PrivacyBudget(1e9, 0.5)
    with pytest.raises(BudgetExceededError, match="epsilon inf"):
        budget.spend(dp_accounting.NonPrivateDpEvent())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        counter = BinaryTreeCounter(8, noise_multiplier=0.0)
    assert not budget.can_spend(counter)
    assert not budget.can_spend(PrivacyGuarantee(math.inf))
    assert budget.n_releases == 0 and budget.spent == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"epsilon": -1.0}, "epsilon must be > 0"),
        ({"epsilon": math.nan}, "epsilon must be finite"),
        ({"epsilon": math.inf}, "epsilon must be finite"),
        ({"epsilon": "1"}, "epsilon must be a real number"),
        ({"epsilon": 1.0, "delta": 1.0}, "delta must be < 1"),
        ({"epsilon": 1.0, "delta": -1e-9}, "delta must be >= 0"),
        ({"epsilon": 1.0, "delta": math.nan}, "delta must be finite"),
        ({"epsilon": 1.0, "accountant": "moments"}, "accountant must be one of"),
        ({"epsilon": 1.0, "neighbouring": "swap"}, "neighbouring must be one of"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        PrivacyBudget(**kwargs)


@pytest.mark.parametrize(
    ("release", "message"),
    [
        ("abc", "^release must be a DpEvent"),
        (None, "^release must be a DpEvent"),
        (1.0, "^release must be a DpEvent"),
        (dp_accounting.UnsupportedDpEvent(), "^release must be a DpEvent the pld accountant"),
        (_Fake(event=lambda: 0.5), r"^release\.dp_event must be a dp_accounting DpEvent"),
        (_Fake(event=dp_accounting.UnsupportedDpEvent()), "^release must be a DpEvent"),
        (PrivacyGuarantee(0.1, 0.0, window=8), "ordinary DP guarantee"),
        (WindowTreeCounter(64, window=8, epsilon=0.1, delta=DELTA), "ordinary DP guarantee"),
        (BinaryTreeCounter(8, epsilon=0.1, delta=DELTA, neighbouring="add_remove"),
         "be private under replace_one"),
    ],
)
def test_releases_that_cannot_be_accounted_are_refused_as_bad_input(release, message):
    budget = PrivacyBudget(10.0, DELTA)
    budget.spend(dp_accounting.GaussianDpEvent(5.0))
    before = snapshot(budget)
    with pytest.raises(InvalidInputError, match=message):
        budget.spend(release)
    with pytest.raises(InvalidInputError, match=message):
        budget.can_spend(release)
    assert snapshot(budget) == before


def test_add_remove_budget_takes_replace_one_releases():
    budget = PrivacyBudget(1.0, DELTA, neighbouring="add_remove")
    both = [BinaryTreeCounter(8, epsilon=0.2, delta=DELTA, neighbouring=n)
            for n in ("replace_one", "add_remove")]
    assert all(budget.can_spend(c) for c in both)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(st.lists(st.floats(0.5, 20.0), min_size=1, max_size=6), st.floats(0.5, 6.0))
def test_odometer_matches_one_shot_composition_and_refuses_exactly(zs, epsilon):
    # RDP (fast): after every accepted release the odometer equals dp-accounting's epsilon
    # for the composed events; a release is refused iff that composition exceeds the budget
    budget = PrivacyBudget(epsilon, DELTA, accountant="rdp")
    accepted = []
    for z in zs:
        event = dp_accounting.GaussianDpEvent(z)
        target = composed_epsilon("rdp", [*accepted, event])
        if target <= epsilon:
            assert budget.spend(event) == target
            accepted.append(event)
        else:
            with pytest.raises(BudgetExceededError):
                budget.spend(event)
        assert budget.n_releases == len(accepted)
        assert budget.spent == (composed_epsilon("rdp", accepted) if accepted else 0.0)
    assert np.all(np.diff([e for _, e in budget.history]) > 0)
