"""The one calibrator (dpol.accounting.calibrate): closed forms against the per-kind
calibrators, the generic search against the accountant, monotone, safe-sided, refusals."""

import math

import dp_accounting
import pytest

from dpol.accounting import MechanismEvent, calibrate, compose_guarantee, composed_epsilon
from dpol.accounting.calibrate import _generic
from dpol.accounting.closed_forms import (
    gaussian_noise_multiplier,
    zcdp_gaussian_noise_multiplier,
)
from dpol.errors import InvalidInputError


def gauss(*scales):
    return lambda z: [MechanismEvent(dp_accounting.GaussianDpEvent(c * z)) for c in scales]


def laplace(z):
    return [MechanismEvent(dp_accounting.LaplaceDpEvent(z))]


def zcdp(z):
    return [MechanismEvent(dp_accounting.ZCDpEvent(0.5 / z**2))]


@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
def test_closed_forms_equal_the_per_kind_calibrators(eps):
    assert calibrate(gauss(1.0), eps, 1e-5) == gaussian_noise_multiplier(eps, 1e-5)
    assert calibrate(laplace, eps, 0.0) == 1.0 / eps
    assert calibrate(zcdp, eps, 1e-5) == zcdp_gaussian_noise_multiplier(eps, 1e-5)


def test_gaussian_composition_scales_by_mu():
    # multipliers 1 and 2 compose to mu_1 = sqrt(1 + 1/4)
    z = calibrate(gauss(1.0, 2.0), 1.0, 1e-5)
    assert z == pytest.approx(math.sqrt(1.25) * gaussian_noise_multiplier(1.0, 1e-5),
                              rel=1e-12)
    assert composed_epsilon(gauss(1.0, 2.0)(z), 1e-5) <= 1.0


@pytest.mark.parametrize("events_of", [gauss(1.0, 3.0), zcdp])
def test_generic_search_agrees_with_the_closed_form(events_of):
    fast = calibrate(events_of, 1.0, 1e-5)
    slow = _generic(events_of, 1.0, 1e-5)
    assert slow == pytest.approx(fast, rel=1e-6)


def test_mixed_kinds_go_through_the_generic_search_on_the_safe_side():
    def mixed(z):  # a Gaussian and a Laplace sharing one multiplier
        return [MechanismEvent(dp_accounting.GaussianDpEvent(z)),
                MechanismEvent(dp_accounting.LaplaceDpEvent(4.0 * z))]
    z = calibrate(mixed, 1.0, 1e-5)
    eps = composed_epsilon(mixed(z), 1e-5)
    assert 1.0 * (1 - 1e-6) <= eps <= 1.0
    assert compose_guarantee(mixed(z), 1e-5, target=1.0).epsilon == 1.0
    assert composed_epsilon(mixed(z * (1 - 1e-5)), 1e-5) > 1.0  # tight: less noise fails


def test_monotone_in_epsilon_and_delta():
    events_of = gauss(1.0, 2.0)
    zs = [calibrate(events_of, e, 1e-5) for e in (0.25, 0.5, 1.0, 2.0, 4.0)]
    assert zs == sorted(zs, reverse=True)
    zd = [calibrate(events_of, 1.0, d) for d in (1e-8, 1e-6, 1e-4)]
    assert zd == sorted(zd, reverse=True)


def test_impossible_targets_are_refused_clearly():
    with pytest.raises(InvalidInputError, match="reachable by some noise multiplier"):
        calibrate(gauss(1.0), 1.0, 0.0)  # Gaussian noise certifies nothing at delta 0

    def fixed(z):  # a cost no noise removes
        return [MechanismEvent(dp_accounting.GaussianDpEvent(z)),
                MechanismEvent(dp_accounting.LaplaceDpEvent(0.5))]
    with pytest.raises(InvalidInputError, match="still give epsilon = 2"):
        calibrate(fixed, 1.0, 1e-5)


def test_infinite_epsilon_is_no_noise():
    assert calibrate(gauss(1.0), math.inf, 1e-5) == 0.0


@pytest.mark.parametrize("noise, delta", [("gaussian", 1e-5), ("laplace", 0.0),
                                          ("gamma", 0.0), ("secure", 1e-5),
                                          ("secure_laplace", 0.0)])
@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_a_learner_s_counter_gets_the_multiplier_its_own_calibration_would(noise, delta, eps):
    from dpol.accounting import noise_events
    from dpol.counters import BinaryTreeCounter
    from dpol.noise import noise_kind

    z = calibrate(noise_events(noise_kind(noise), "replace_one"), eps, delta)
    own = BinaryTreeCounter(16, 2, epsilon=eps, delta=delta, noise=noise)
    given = BinaryTreeCounter(16, 2, noise_multiplier=z, delta=delta, noise=noise)
    assert given.noise_scale == own.noise_scale
    assert compose_guarantee(given.privacy_events(), delta, target=eps).epsilon == eps


def test_noise_events_are_the_kind_s_event_at_z():
    from dpol.accounting import noise_events
    from dpol.noise import noise_kind

    one = noise_events(noise_kind("gaussian"), "add_remove")(3.0)
    assert [(e.event, e.neighbouring, e.pure_epsilon) for e in one] == [
        (dp_accounting.GaussianDpEvent(3.0), "add_remove", None)]
    four = noise_events(noise_kind("laplace"), count=4)(2.0)[0]
    assert four.event == dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(2.0), 4)
    assert four.pure_epsilon == 2.0  # 4 releases of epsilon 1/2 each
    # the gamma mechanism has no dp-accounting event: its pure epsilon carries it
    assert noise_events(noise_kind("gamma"), unit="one record")(4.0)[0].pure_epsilon == 0.25
    assert calibrate(noise_events(noise_kind("gamma"), count=3), 0.5, 0.0) == 6.0
