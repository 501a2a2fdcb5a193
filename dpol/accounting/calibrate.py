"""The one calibrator: the smallest noise multiplier whose events meet a target.

A mechanism is a function from its noise multiplier z to the
:class:`~dpol.accounting.events.MechanismEvent` s it runs (one noise kind:
:func:`noise_events`). :func:`calibrate` returns the smallest z whose
:func:`~dpol.accounting.events.compose_guarantee`, the function every ``privacy`` is
derived with, meets the target, so a reported claim is the one the noise was sized for.

Closed forms where the events scale with z (checked at z = 1 and 2): Gaussians compose
into mu_1 / z, mu_1 = sqrt(sum 1/c_i^2) (Dong, Roth, Su 2019, Corollary 3.3), so z =
mu_1 / mu*(epsilon, delta) (analytic Gaussian, Balle, Wang 2018); pure events give z =
e_1 / epsilon; zCDP events z = sqrt(2 rho_1) z_zCDP(epsilon, delta, xi) (Bun, Steinke
2016, Lemma 2.3). Anything else goes through dp-accounting's ``calibrate_dp_mechanism``
on :func:`compose_guarantee`'s epsilon, and every answer is checked and stepped up until
it meets the target.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np

from dpol._validation import check_real, fail
from dpol.accounting.closed_forms import (
    check_epsilon,
    gaussian_noise_multiplier,
    mu_star,
    zcdp_gaussian_noise_multiplier,
)
from dpol.accounting.events import (
    FLOAT_ROUNDING,
    MechanismEvent,
    _leaves,
    compose_guarantee,
)
from dpol.accounting.guarantee import ELEMENT
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.kinds import NoiseKind

__all__ = ["bisect_multiplier", "calibrate", "composed_epsilon", "noise_events"]

EventsOf = Callable[[float], Sequence[MechanismEvent]]

#: relative tolerance of the generic search (the calibrators' "within 1e-10")
_TOL = 1e-10
#: the generic search gives up past this multiplier: the target is out of reach
_LARGEST = 2.0**60


def noise_events(kind: NoiseKind, neighbouring: str = "replace_one", *, count: int = 1,
                 unit: str = ELEMENT) -> EventsOf:
    """z -> the events of ``count`` releases of noise ``kind`` at noise multiplier z: the
    kind's :meth:`~dpol.noise.kinds.NoiseKind.dp_event` (self-composed when ``count`` >
    1), under ``neighbouring``, protecting ``unit``; a pure kind states its epsilon
    (``count / z``), which composition then uses.

    Examples
    --------
    >>> from dpol.noise.kinds import noise_kind
    >>> noise_events(noise_kind("secure"))(2.0)[0].event
    ZCDpEvent(rho=0.125, xi=0.0)
    >>> calibrate(noise_events(noise_kind("laplace"), count=4), 0.5, 0.0)  # 4 / z <= 0.5
    8.0
    """
    def events_of(z: float) -> list[MechanismEvent]:
        event, pure = kind.dp_event(z), kind.pure_epsilon(z)
        if count != 1:
            event = dp_accounting.SelfComposedDpEvent(event, count)
            pure = None if pure is None else count * pure
        return [MechanismEvent(event, neighbouring, unit=unit, pure_epsilon=pure)]
    return events_of


def composed_epsilon(events: Sequence[MechanismEvent], delta: float) -> float:
    """The epsilon at ``delta`` that :func:`compose_guarantee` derives for ``events``.

    Examples
    --------
    >>> composed_epsilon([MechanismEvent(dp_accounting.LaplaceDpEvent(4.0))], 1e-5)
    0.25
    """
    return compose_guarantee(events, delta).epsilon


def _shape(events: Sequence[MechanismEvent]) -> tuple[str, float, float] | None:
    """(kind, size, xi) when every event is of one closed-form kind, else None.

    Gaussian: size = mu^2 = sum count / c^2; pure: the summed epsilon; zCDP: the summed
    rho (and xi).
    """
    mu2 = pure = rho = xi = 0.0
    kinds = set()
    for mech in events:
        if mech.pure_epsilon is not None:
            kinds.add("pure")
            pure += mech.pure_epsilon
            continue
        for event, count in _leaves(mech.event):
            if isinstance(event, dp_accounting.NoOpDpEvent):
                continue
            if isinstance(event, dp_accounting.GaussianDpEvent):
                kinds.add("gaussian")
                mu2 += (count * (1.0 / event.noise_multiplier) ** 2 if event.noise_multiplier
                        else math.inf)
            elif isinstance(event, dp_accounting.LaplaceDpEvent):
                kinds.add("pure")
                pure += count / event.noise_multiplier if event.noise_multiplier else math.inf
            elif isinstance(event, dp_accounting.ZCDpEvent):
                kinds.add("zcdp")
                rho += count * event.rho
                xi += count * event.xi
            else:
                return None
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    return kind, {"gaussian": mu2, "pure": pure, "zcdp": rho}[kind], xi


def _closed_form(events_of: EventsOf, epsilon: float, delta: float) -> float | None:
    """The fast paths of the module docstring, or None when they do not apply."""
    one, two = _shape(events_of(1.0)), _shape(events_of(2.0))
    if one is None or two is None or one[0] != two[0] or not 0.0 < one[1] < math.inf:
        return None
    kind, size, xi = one
    if kind == "gaussian" and math.isclose(two[1], size / 4.0, rel_tol=1e-12):
        if delta <= 0.0:
            return None  # refused by the generic search, with its message
        if size == 1.0:  # one Gaussian: z* itself, as every counter calibrates
            return gaussian_noise_multiplier(epsilon, delta)
        return math.sqrt(size) / mu_star(epsilon, delta)  # sensitivity over mu*
    if kind == "pure" and math.isclose(two[1], size / 2.0, rel_tol=1e-12):
        return size / epsilon
    if (kind == "zcdp" and math.isclose(two[1], size / 4.0, rel_tol=1e-12)
            and two[2] == xi and 0.0 < delta and xi < epsilon):
        return zcdp_gaussian_noise_multiplier(epsilon, delta, xi=xi) * math.sqrt(2.0 * size)
    return None


@functools.cache
def _search_classes() -> tuple[type, type]:
    """(the event of a noise multiplier, the accountant composing a mechanism's events):
    dp-accounting's interfaces for its generic search, made on first use (subclassing
    them imports dp-accounting)."""
    import attr

    @attr.define(frozen=True)
    class _Multiplier(dp_accounting.DpEvent):
        """The mechanism at noise multiplier ``value`` (what the generic search composes)."""

        value: float

    class _EventsAccountant(dp_accounting.PrivacyAccountant):
        """dp-accounting's accountant interface around :func:`compose_guarantee`."""

        def __init__(self, events_of: EventsOf) -> None:
            super().__init__(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
            self._events_of = events_of
            self._events: list[MechanismEvent] = []

        def _maybe_compose(self, event: dp_accounting.DpEvent, count: int,
                           do_compose: bool):
            if not isinstance(event, _Multiplier):
                return self.CompositionErrorDetails(event, "not a noise multiplier")
            if do_compose:
                self._events.extend(list(self._events_of(event.value)) * count)
            return None

        def get_epsilon(self, target_delta: float) -> float:
            return composed_epsilon(self._events, target_delta)

    return _Multiplier, _EventsAccountant


def calibrate(events_of: EventsOf, epsilon: float, delta: float) -> float:
    """Smallest noise multiplier z whose events are (epsilon, delta)-DP.

    Parameters
    ----------
    events_of : callable
        z -> the mechanism's ``MechanismEvent`` s at noise multiplier z (more noise for
        larger z: the composed epsilon must not increase with z).
    epsilon : float
        The target, in :data:`~dpol.accounting.closed_forms.EPSILON_RANGE`; ``inf``: no
        noise (0.0).
    delta : float
        The delta at which epsilon is stated (0 for pure DP).

    Returns
    -------
    float
        z with ``compose_guarantee(events_of(z), delta).epsilon <= epsilon`` (up to the
        rounding :mod:`dpol.accounting.events` counts as the target), within a relative
        1e-6 of the smallest such z (closed forms: exact).

    Raises
    ------
    InvalidInputError
        When no multiplier reaches the target (e.g. Gaussian noise at delta = 0, or a
        zCDP slack xi of at least epsilon).

    Examples
    --------
    >>> from dpol.accounting.closed_forms import gaussian_noise_multiplier
    >>> gauss = lambda z: [MechanismEvent(dp_accounting.GaussianDpEvent(z))]
    >>> calibrate(gauss, 1.0, 1e-5) == gaussian_noise_multiplier(1.0, 1e-5)
    True
    >>> two = lambda z: [MechanismEvent(dp_accounting.GaussianDpEvent(z))] * 2
    >>> round(calibrate(two, 1.0, 1e-5) / calibrate(gauss, 1.0, 1e-5), 12)  # sqrt(2)
    1.414213562373
    >>> calibrate(gauss, 1.0, 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: epsilon must be reachable by some noise multiplier ...
    """
    epsilon = check_epsilon(epsilon)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if math.isinf(epsilon):
        return 0.0
    z = _closed_form(events_of, epsilon, delta)
    if z is None:
        z = _generic(events_of, epsilon, delta)
    # never on the unsafe side (float rounding of FLOAT_ROUNDING is the target's own)
    while composed_epsilon(events_of(z), delta) > epsilon * (1.0 + FLOAT_ROUNDING):
        z *= 1.0 + 1e-12
    return z


def _quiet_epsilon(events_of: EventsOf, z: float, delta: float) -> float:
    """The epsilon at a bracket end: at huge z the Gaussian curve's log underflows to
    epsilon 0 (dp-accounting warns about the log of 0 on the way)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return composed_epsilon(events_of(z), delta)


def _generic(events_of: EventsOf, epsilon: float, delta: float) -> float:
    """dp-accounting's ``calibrate_dp_mechanism`` with compose_guarantee's epsilon."""
    high = 1.0
    while _quiet_epsilon(events_of, high, delta) > epsilon:
        high *= 2.0
        if high > _LARGEST:
            eps = _quiet_epsilon(events_of, high, delta)
            raise fail("epsilon", "be reachable by some noise multiplier (at z = 2^60 the "
                       f"events still give epsilon = {eps:.4g} at delta = {delta:g})", epsilon)
    low = high / 2.0
    while low > 1e-12 and composed_epsilon(events_of(low), delta) <= epsilon:
        high, low = low, low / 2.0
    multiplier, accountant = _search_classes()
    return float(dp_accounting.calibrate_dp_mechanism(
        lambda: accountant(events_of), multiplier, epsilon, delta,
        dp_accounting.ExplicitBracketInterval(low, high), tol=_TOL * high))


def bisect_multiplier(epsilon_of: Callable[[float], float], epsilon: float, high: float,
                      rel: float = 1e-4) -> float:
    """The calibrator for an accountant outside :func:`compose_guarantee`: the smallest
    noise level (to ``rel``, geometric bisection below ``high``) whose ``epsilon_of`` is
    at most ``epsilon``, always on the safe side (the upper end is returned).

    For mechanisms whose accounting needs its own tuning (noisy SGD's subsampled
    Gaussian reads dp-accounting's RDP accountant with its own orders, 10x faster there
    than the generic search of :func:`calibrate`); ``high`` must meet the target.

    Examples
    --------
    >>> round(bisect_multiplier(lambda z: 1.0 / z, 0.5, high=10.0), 3)  # pure: 1/z <= 0.5
    2.0
    """
    low = high * rel
    while high / low > 1.0 + rel:
        mid = math.sqrt(low * high)
        low, high = (low, mid) if epsilon_of(mid) <= epsilon else (mid, high)
    return high

