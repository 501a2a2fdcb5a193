"""Privacy events of the mechanisms that ran, and the one function that turns them into a
guarantee.

A :class:`MechanismEvent` is a dp-accounting ``DpEvent`` plus whom it protects: the
neighbouring relation, the window of window DP (WDP, Definition 6) and the unit. Every
noisy object lists the events it ran (``privacy_events()``) and its ``privacy`` is
:func:`compose_guarantee` of them, never typed by hand, so no window, relation or unit
is lost on the way to the claim.

Composition (sound, adaptive included): Gaussian events into one Gaussian of ``mu =
sqrt(sum 1/z_i^2)`` (Dong, Roth, Su 2019, Corollary 3.3; analytic Gaussian curve, Balle,
Wang 2018); zCDP events add their (xi, rho) (Bun, Steinke 2016, Lemma 2.3; a Gaussian
counts as ``1/(2 z^2)``), certified by dp-accounting's RDP accountant; pure events add up
(Dwork, Roth Theorem 3.16) and add to the rest; anything else goes to dp-accounting's
PLD accountant, or RDP where PLD refuses it. The guarantee's window is the smallest
among the events (a window at least the number of releases is full DP).

Examples
--------
>>> import dp_accounting
>>> tree = MechanismEvent(dp_accounting.GaussianDpEvent(4.0), "replace_one")
>>> noise = MechanismEvent(dp_accounting.GaussianDpEvent(3.0), "replace_one")
>>> g = compose_guarantee([tree, noise], 1e-5)  # one Gaussian of z = 1/sqrt(1/16 + 1/9)
>>> windowed = MechanismEvent(dp_accounting.GaussianDpEvent(4.0), window=8, horizon=100)
>>> str(compose_guarantee([windowed, noise], 1e-5))
'(1.627, 1e-05)-DP, replace_one, window W=8, unit: one stream element'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.closed_forms import gaussian_epsilon, zcdp_epsilon
from dpol.accounting.guarantee import ELEMENT, NEIGHBOURING_RELATIONS, PrivacyGuarantee
from dpol.noise._dp_accounting import dp_accounting

__all__ = [
    "ELEMENT",
    "TARGET_TOLERANCE",
    "MechanismEvent",
    "compose_dp_event",
    "compose_guarantee",
    "gaussian_mu",
]

#: a derived epsilon at most this much (relative) below the calibration's target is
#: stated as the target: calibrators stop within 1e-10 of it, on the safe side
TARGET_TOLERANCE = 1e-6
#: relative float rounding of a derived epsilon (e.g. ``1 / (1 / epsilon)``) that still
#: counts as the target; far below the accountants' own float precision
FLOAT_ROUNDING = 1e-12


@dataclass(frozen=True)
class MechanismEvent:
    """One mechanism's privacy: its dp-accounting event and whom the event protects.

    Parameters
    ----------
    event : dp_accounting.DpEvent
        The noise relative to the l2 (Laplace: l1) sensitivity under ``neighbouring``
        (account with sensitivity one).
    neighbouring : {"replace_one", "add_remove"}
        The relation the sensitivity was derived under.
    window : int or None
        W of window DP (protected in the W releases from its arrival); None: DP.
    horizon : int or None
        Number of releases of the mechanism; a window of at least ``horizon`` is full DP.
    unit : str
        What one neighbour changes: one stream element, one loss function, ...
    pure_epsilon : float or None
        The exact pure epsilon of a mechanism whose event does not state it (WDP's l2
        Gamma mechanism, the discrete Laplace); composition counts it as pure DP.
    name : str
        Which mechanism this is (for messages and reports).

    Examples
    --------
    >>> import dp_accounting
    >>> e = MechanismEvent(dp_accounting.LaplaceDpEvent(2.0), "add_remove", name="noise")
    >>> e.window, e.is_full_dp
    (None, True)
    """

    event: dp_accounting.DpEvent
    neighbouring: str = "replace_one"
    window: int | None = None
    horizon: int | None = None
    unit: str = ELEMENT
    pure_epsilon: float | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.event, dp_accounting.DpEvent):
            raise fail("event", "be a dp_accounting DpEvent", self.event)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURING_RELATIONS)
        if self.window is not None:
            check_int("window", self.window, low=1)
        if self.horizon is not None:
            check_int("horizon", self.horizon, low=0)
        if self.pure_epsilon is not None:
            check_real("pure_epsilon", self.pure_epsilon, low=0.0, allow_inf=True)
        if (isinstance(self.event, dp_accounting.UnsupportedDpEvent)
                and self.pure_epsilon is None):
            raise fail("pure_epsilon", "be given for an UnsupportedDpEvent (dp-accounting "
                       "cannot account it)", None)

    @property
    def is_full_dp(self) -> bool:
        """False for window DP with a window shorter than the mechanism's releases."""
        return self.window is None or (self.horizon is not None
                                       and self.window >= self.horizon)


def _leaves(event: dp_accounting.DpEvent, count: int = 1):
    """(event, count) of the elementary events inside compositions."""
    if isinstance(event, dp_accounting.ComposedDpEvent):
        for inner in event.events:
            yield from _leaves(inner, count)
    elif isinstance(event, dp_accounting.SelfComposedDpEvent):
        if event.count:
            yield from _leaves(event.event, count * event.count)
    else:
        yield event, count


def compose_dp_event(events: Iterable[MechanismEvent]) -> dp_accounting.DpEvent:
    """The dp-accounting event of all the mechanisms (their composition).

    Examples
    --------
    >>> import dp_accounting
    >>> compose_dp_event([]) == dp_accounting.NoOpDpEvent()
    True
    """
    inner = [e.event for e in events
             if not isinstance(e.event, dp_accounting.NoOpDpEvent)]
    if not inner:
        return dp_accounting.NoOpDpEvent()
    return inner[0] if len(inner) == 1 else dp_accounting.ComposedDpEvent(inner)


def gaussian_mu(events: Iterable[MechanismEvent]) -> float | None:
    """mu of the events' composition when every one is Gaussian, sqrt(sum 1 / z_i^2) (a
    GDP claim, Dong, Roth, Su 2019, Corollary 3.3; inf for a zero multiplier or a
    non-private event), else None.

    >>> import dp_accounting
    >>> gaussian_mu([MechanismEvent(dp_accounting.SelfComposedDpEvent(
    ...     dp_accounting.GaussianDpEvent(2.0), 4))])
    1.0
    >>> gaussian_mu([MechanismEvent(dp_accounting.LaplaceDpEvent(1.0))]) is None
    True
    """
    mu2 = 0.0
    for mech in events:
        if mech.pure_epsilon is not None:
            return None
        for event, count in _leaves(mech.event):
            if isinstance(event, dp_accounting.NoOpDpEvent):
                continue
            if isinstance(event, dp_accounting.NonPrivateDpEvent):
                return math.inf
            if not isinstance(event, dp_accounting.GaussianDpEvent):
                return None
            z = event.noise_multiplier
            if z == 0.0:
                return math.inf
            mu2 += count * (1.0 / z) ** 2
    return math.sqrt(mu2)


def _common(events: Sequence[MechanismEvent], attribute: str) -> str:
    values = {getattr(e, attribute) for e in events}
    if len(values) > 1:
        raise fail("events", f"share one {attribute} (a guarantee protects one relation "
                   "and one unit)", sorted(values))
    return values.pop()


def _window(events: Sequence[MechanismEvent]) -> int | None:
    windows = [e.window for e in events if not e.is_full_dp]
    return min(windows) if windows else None


def _epsilon(events: Sequence[MechanismEvent], delta: float,
             neighbouring: str = "add_remove") -> tuple[float, float]:
    """(epsilon, delta) of the composition; delta is 0 when every event is pure."""
    mu2 = rho = xi = pure = 0.0
    other: list[dp_accounting.DpEvent] = []
    for mech in events:
        if mech.pure_epsilon is not None:  # a pure-DP mechanism: its exact epsilon
            pure += mech.pure_epsilon
            continue
        for event, count in _leaves(mech.event):
            if isinstance(event, dp_accounting.NoOpDpEvent):
                continue
            if isinstance(event, dp_accounting.NonPrivateDpEvent):
                return math.inf, 0.0
            if isinstance(event, dp_accounting.GaussianDpEvent):
                z = event.noise_multiplier
                if z == 0.0:
                    return math.inf, 0.0
                mu2 += count * (1.0 / z) ** 2  # z**2 overflows for z > 1e154
            elif isinstance(event, dp_accounting.LaplaceDpEvent):
                b = event.noise_multiplier
                if b == 0.0:
                    return math.inf, 0.0
                pure += count / b
            elif isinstance(event, dp_accounting.ZCDpEvent):
                rho += count * event.rho
                xi += count * event.xi
            else:
                other.append(dp_accounting.SelfComposedDpEvent(event, count))
    if not math.isfinite(pure):
        return math.inf, 0.0
    if not (mu2 or rho or xi or other):
        return pure, 0.0
    if delta <= 0.0:  # Gaussian-type noise certifies nothing at delta = 0
        return math.inf, 0.0
    if other:
        eps = _accountant_epsilon(mu2, rho, xi, other, delta, neighbouring)
    elif rho or xi:
        eps = zcdp_epsilon(rho + mu2 / 2.0, delta, xi=xi)
    else:
        eps = gaussian_epsilon(1.0 / math.sqrt(mu2), delta)
    return eps + pure, delta


def _accountant_epsilon(mu2: float, rho: float, xi: float,
                        other: list[dp_accounting.DpEvent], delta: float,
                        neighbouring: str = "add_remove") -> float:
    parts = list(other)
    if mu2:
        parts.append(dp_accounting.GaussianDpEvent(1.0 / math.sqrt(mu2)))
    if rho or xi:
        parts.append(dp_accounting.ZCDpEvent(rho, xi))
    event = dp_accounting.ComposedDpEvent(parts)
    accountants = [dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4),
                   dp_accounting.rdp.RdpAccountant()]
    if neighbouring == "replace_one":  # sampling without replacement (e.g. BST14's SGD)
        # is accounted under replace-one only (Wang, Balle, Kasiviswanathan 2019)
        accountants.append(dp_accounting.rdp.RdpAccountant(
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE))
    for accountant in accountants:
        if accountant.supports(event):
            accountant.compose(event)
            return float(accountant.get_epsilon(delta))
    raise fail("events", "be accountable by dp-accounting's PLD or RDP accountant", event)


def compose_guarantee(events: Iterable[MechanismEvent], delta: float, *,
                      target: float | None = None, seeded: bool = False) -> PrivacyGuarantee:
    """The guarantee of the composition of ``events``: the one place a claim is made.

    Parameters
    ----------
    events : iterable of MechanismEvent
        Every mechanism that ran (no events: nothing data-dependent was released, (0, 0)).
    delta : float
        The delta at which to state epsilon (unused when every event is pure).
    target : float, optional
        The epsilon the noise was calibrated for: a derived epsilon within
        ``TARGET_TOLERANCE`` below it (or ``FLOAT_ROUNDING`` above) is stated as the target
        (a valid, weaker claim); any other is stated as derived.
    seeded : bool
        Whether any of the mechanisms drew its noise from a seed the caller gave
        (:attr:`PrivacyGuarantee.seeded`: then private only while the seed stays secret).

    Returns
    -------
    PrivacyGuarantee
        With the events' common neighbouring relation and unit (mixing either is a
        ``ValueError``) and the smallest window among them (None when all are full DP).

    Examples
    --------
    >>> import dp_accounting
    >>> from dpol.accounting import gaussian_noise_multiplier
    >>> z = gaussian_noise_multiplier(1.0, 1e-5)
    >>> g = compose_guarantee([MechanismEvent(dp_accounting.GaussianDpEvent(z))], 1e-5,
    ...                       target=1.0)
    >>> g.epsilon, compose_guarantee([], 1e-5).epsilon
    (1.0, 0.0)
    """
    events = tuple(events)
    for e in events:
        if not isinstance(e, MechanismEvent):
            raise fail("events", "contain MechanismEvent objects", e)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if not events:
        return PrivacyGuarantee(0.0, 0.0)  # no noise, so none that a seed could replay
    neighbouring = _common(events, "neighbouring")
    unit = _common(events, "unit")
    eps, used_delta = _epsilon(events, delta, neighbouring)
    if not math.isfinite(eps):
        used_delta = 0.0
    elif (target is not None
          and target * (1.0 - TARGET_TOLERANCE) <= eps <= target * (1.0 + FLOAT_ROUNDING)):
        eps = float(target)
    return PrivacyGuarantee(eps, used_delta, neighbouring, window=_window(events), unit=unit,
                            seeded=seeded)


def derived_guarantee(owner: object, delta: float, target: float | None) -> PrivacyGuarantee:
    """``compose_guarantee(owner.privacy_events(), delta, target=target)``, cached on
    ``owner`` for as long as its events stay the same (how learners state ``privacy``);
    seeded when ``owner.seed`` is not None (a seed the caller gave: the noise can be
    replayed by whoever knows it).

    Examples
    --------
    >>> import dp_accounting
    >>> class Noisy:
    ...     def privacy_events(self):
    ...         return (MechanismEvent(dp_accounting.LaplaceDpEvent(4.0)),)
    >>> str(derived_guarantee(Noisy(), 1e-5, 0.25))
    '(0.25, 0)-DP, replace_one, unit: one stream element'
    """
    events = tuple(owner.privacy_events())
    seeded = getattr(owner, "seed", None) is not None
    key = (events, delta, target, seeded)
    cached = getattr(owner, "_derived_privacy", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    guarantee = compose_guarantee(events, delta, target=target, seeded=seeded)
    try:
        owner._derived_privacy = (key, guarantee)
    except AttributeError:  # objects without a __dict__ are not cached
        pass
    return guarantee
