"""dpol.accounting.events: what a MechanismEvent accepts, and how compose_guarantee turns
events into the one claim (composition rules, windows, relation and unit, the target).

Closed forms are checked against dp-accounting's accountants or against each other: equal
to a relative 1e-12 (float rounding of sums like sum 1/z^2, a few ulps), the accountants'
own error stated where it enters.
"""

from __future__ import annotations

import dataclasses

import dp_accounting
import numpy as np
import pytest

from dpol.accounting import (
    MechanismEvent,
    compose_dp_event,
    compose_guarantee,
    derived_guarantee,
    gaussian_epsilon,
    gaussian_noise_multiplier,
)
from dpol.accounting.events import TARGET_TOLERANCE
from dpol.errors import InvalidInputError

DELTA = 1e-5
GAUSS = dp_accounting.GaussianDpEvent


def test_composition_rules_match_the_accountants():
    # compose_guarantee's closed forms against dp-accounting's PLD on the same events
    events = [MechanismEvent(dp_accounting.GaussianDpEvent(z)) for z in (2.0, 3.0, 5.0)]
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(dp_accounting.ComposedDpEvent([e.event for e in events]))
    exact = compose_guarantee(events, DELTA).epsilon
    # PLD is pessimistic by at most its discretisation summed over the events
    assert exact <= pld.get_epsilon(DELTA) <= exact + 3e-3
    mixed = [*events, MechanismEvent(dp_accounting.LaplaceDpEvent(4.0))]
    assert compose_guarantee(mixed, DELTA).epsilon == pytest.approx(exact + 0.25, rel=1e-12)
    with pytest.raises(InvalidInputError, match="share one neighbouring"):
        compose_guarantee([events[0], MechanismEvent(events[0].event, "add_remove")], DELTA)
    zero = MechanismEvent(dp_accounting.GaussianDpEvent(0.0))
    assert not compose_guarantee([*events, zero], DELTA).is_private
    assert np.isinf(compose_guarantee(events, 0.0).epsilon)  # Gaussian: nothing at delta 0


def test_self_composition_counts_every_release():
    # k releases at z compose to one Gaussian at z / sqrt(k) (GDP); a count of 0 is nothing
    k4 = MechanismEvent(dp_accounting.SelfComposedDpEvent(GAUSS(4.0), 4))
    assert compose_guarantee([k4], DELTA).epsilon == pytest.approx(
        gaussian_epsilon(2.0, DELTA), rel=1e-12)
    nested = MechanismEvent(dp_accounting.ComposedDpEvent(
        [dp_accounting.SelfComposedDpEvent(k4.event, 2), dp_accounting.NoOpDpEvent()]))
    assert compose_guarantee([nested], DELTA).epsilon == pytest.approx(
        gaussian_epsilon(4.0 / np.sqrt(8), DELTA), rel=1e-12)
    none = MechanismEvent(dp_accounting.SelfComposedDpEvent(GAUSS(4.0), 0))
    assert compose_guarantee([none], DELTA).epsilon == 0.0


def test_pure_events_add_up_and_need_no_delta():
    lap = MechanismEvent(dp_accounting.LaplaceDpEvent(4.0), "add_remove")
    gamma = MechanismEvent(dp_accounting.UnsupportedDpEvent(), "add_remove", pure_epsilon=0.5)
    g = compose_guarantee([lap, lap, gamma], DELTA)
    assert (g.epsilon, g.delta) == (1.0, 0.0) and g.is_pure
    # beside a Gaussian, the pure part adds to its epsilon at the requested delta
    gauss = MechanismEvent(GAUSS(2.0), "add_remove")
    g = compose_guarantee([gauss, gamma], DELTA)
    assert (g.epsilon, g.delta) == (pytest.approx(gaussian_epsilon(2.0, DELTA) + 0.5,
                                                  rel=1e-12), DELTA)
    free = MechanismEvent(dp_accounting.LaplaceDpEvent(0.0))
    assert not compose_guarantee([free], DELTA).is_private


def test_zcdp_events_add_their_rho_and_a_gaussian_joins_them():
    from dpol.accounting.closed_forms import zcdp_epsilon

    rho = MechanismEvent(dp_accounting.ZCDpEvent(0.1, 1e-9))
    g = compose_guarantee([rho, rho, MechanismEvent(GAUSS(2.0))], DELTA)
    assert g.epsilon == pytest.approx(zcdp_epsilon(0.2 + 0.125, DELTA, xi=2e-9), rel=1e-12)


def test_events_outside_the_closed_forms_go_to_the_accountants():
    # sampled Laplace noise: no closed form here, PLD accounts it exactly as it alone would
    sampled = dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.LaplaceDpEvent(1.0))
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    assert compose_guarantee([MechanismEvent(sampled)], DELTA).epsilon == pld.compose(
        sampled).get_epsilon(DELTA)
    # randomized response: only RDP's replace-one relation accounts it (as it does
    # sampling without replacement), so an add-remove event of it is refused
    rr = dp_accounting.RandomizedResponseDpEvent(0.5, 2)
    rdp = dp_accounting.rdp.RdpAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    assert compose_guarantee([MechanismEvent(rr)], DELTA).epsilon == rdp.compose(
        rr).get_epsilon(DELTA)
    with pytest.raises(InvalidInputError, match=r"^events must be accountable by "
                       "dp-accounting's PLD or RDP accountant"):
        compose_guarantee([MechanismEvent(rr, "add_remove")], DELTA)


def test_the_window_is_the_smallest_among_the_events_that_are_not_full_dp():
    full = MechanismEvent(GAUSS(4.0), window=32, horizon=16)  # W >= releases: full DP
    w8, w4 = (MechanismEvent(GAUSS(4.0), window=w, horizon=16) for w in (8, 4))
    assert full.is_full_dp and not w8.is_full_dp
    assert compose_guarantee([full], DELTA).window is None
    assert compose_guarantee([full, w8, w4], DELTA).window == 4
    # a window without the releases it spans cannot be shown to cover them
    assert not MechanismEvent(GAUSS(4.0), window=8).is_full_dp


def test_a_guarantee_protects_one_relation_and_one_unit():
    a = MechanismEvent(GAUSS(4.0))
    with pytest.raises(InvalidInputError, match=r"^events must share one unit"):
        compose_guarantee([a, dataclasses.replace(a, unit="one loss function")], DELTA)
    g = compose_guarantee([dataclasses.replace(a, unit="one record")], DELTA, seeded=True)
    assert (g.unit, g.neighbouring, g.seeded) == ("one record", "replace_one", True)
    assert compose_guarantee([], DELTA) == compose_guarantee([], DELTA, seeded=True)  # (0, 0)
    with pytest.raises(InvalidInputError, match=r"^events must contain MechanismEvent"):
        compose_guarantee([a.event], DELTA)
    with pytest.raises(InvalidInputError, match=r"^delta must be < 1"):
        compose_guarantee([a], 1.0)


def test_a_derived_epsilon_just_below_the_target_is_stated_as_the_target():
    z = gaussian_noise_multiplier(1.0, DELTA)
    exact = compose_guarantee([MechanismEvent(GAUSS(z))], DELTA).epsilon
    assert exact <= 1.0
    for target, stated in ((exact * (1 + 0.5 * TARGET_TOLERANCE), "target"),
                           (exact * (1 + 2 * TARGET_TOLERANCE), "derived"),
                           (exact * (1 - 1e-9), "derived")):  # above the target: erratum
        g = compose_guarantee([MechanismEvent(GAUSS(z))], DELTA, target=target)
        assert g.epsilon == (target if stated == "target" else exact)


@pytest.mark.parametrize(("keywords", "message"), [
    ({"event": 2.0}, "event must be a dp_accounting DpEvent"),
    ({"neighbouring": "swap"}, "neighbouring must be one of"),
    ({"window": 0}, "window must be an integer >= 1"),
    ({"horizon": -1}, "horizon must be an integer >= 0"),
    ({"pure_epsilon": -0.5}, "pure_epsilon must be >= 0"),
    ({"event": dp_accounting.UnsupportedDpEvent()}, "pure_epsilon must be given for an "
     "UnsupportedDpEvent"),
])
def test_a_mechanism_event_refuses_by_name(keywords, message):
    with pytest.raises(InvalidInputError, match="^" + message):
        MechanismEvent(**{"event": GAUSS(1.0), **keywords})


def test_compose_dp_event_leaves_out_what_releases_nothing():
    a, b = MechanismEvent(GAUSS(1.0)), MechanismEvent(GAUSS(2.0))
    noop = MechanismEvent(dp_accounting.NoOpDpEvent())
    assert compose_dp_event([noop]) == dp_accounting.NoOpDpEvent()
    assert compose_dp_event([noop, a]) == a.event
    assert compose_dp_event([a, noop, b]) == dp_accounting.ComposedDpEvent([a.event, b.event])


def test_derived_guarantee_is_cached_while_the_events_stay_the_same():
    class Owner:
        seed = None

        def __init__(self):
            self.z, self.calls = 4.0, 0

        def privacy_events(self):
            self.calls += 1
            return (MechanismEvent(GAUSS(self.z)),)

    owner = Owner()
    first = derived_guarantee(owner, DELTA, None)
    assert derived_guarantee(owner, DELTA, None) is first and not first.seeded
    owner.z = 8.0  # other events: a new claim
    assert derived_guarantee(owner, DELTA, None).epsilon < first.epsilon
    owner.seed = 3  # a seed the caller gave: the claim says so
    assert derived_guarantee(owner, DELTA, None).seeded

    class NoDict:
        __slots__ = ()

        def privacy_events(self):
            return (MechanismEvent(GAUSS(4.0)),)

    assert derived_guarantee(NoDict(), DELTA, None).epsilon == first.epsilon  # not cached
