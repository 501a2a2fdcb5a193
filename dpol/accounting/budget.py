"""A privacy odometer: compose releases through dp-accounting, refuse one past the budget.

A :class:`PrivacyBudget` holds a total (epsilon, delta) and is charged release by release
(:meth:`PrivacyBudget.spend`): a ``dp_accounting.DpEvent`` (sensitivity one, in the
budget's relation), an object with ``privacy_events()`` (every counter and learner), one
with ``dp_event``, or a :class:`~dpol.accounting.PrivacyGuarantee`. A release that would
exceed the budget raises :class:`~dpol.errors.BudgetExceededError` and is not recorded.

**Composition (sound).** Events are composed by the accountant (PLD: tight up to its
pessimistic discretisation; RDP: looser); guarantees without an event by basic
composition (Dwork, Roth, Thm. 3.16, adaptive too); the two groups again by basic
composition: ``spent = eps_events(delta - sum delta_i) + sum epsilon_i``. When every event
is pure, the sum of their epsilons is used where smaller.

**Refused** (``InvalidInputError``, nothing charged): window-DP releases (expired elements
are unprotected, so window DP does not compose into a DP budget), ``add_remove`` releases
charged to a ``replace_one`` budget (the converse is sound), and anything with neither an
event nor a guarantee. The caller makes sure the releases protect the same unit.

Examples
--------
>>> import dp_accounting
>>> budget = PrivacyBudget(2.0, 1e-5)
>>> round(budget.spend(dp_accounting.GaussianDpEvent(3.0)), 4)
1.2711
>>> budget.can_spend(dp_accounting.GaussianDpEvent(1.0)), budget.n_releases
(False, 1)
"""

from __future__ import annotations

import copy
import math

from dpol._validation import check_choice, check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS, PrivacyGuarantee
from dpol.errors import BudgetExceededError
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["ACCOUNTANTS", "PLD_VALUE_DISCRETIZATION", "PrivacyBudget"]

#: accountants a budget can compose with
ACCOUNTANTS = ("pld", "rdp")
#: the PLD accountant's value discretisation (as :func:`certified_epsilon`)
PLD_VALUE_DISCRETIZATION = 1e-4


def _new_accountant(kind: str) -> dp_accounting.PrivacyAccountant:
    if kind == "pld":
        return dp_accounting.pld.PLDAccountant(
            value_discretization_interval=PLD_VALUE_DISCRETIZATION)
    return dp_accounting.rdp.RdpAccountant()


def _pure_epsilon(event: dp_accounting.DpEvent) -> float:
    """Pure-DP epsilon of an event by basic composition; inf where there is none."""
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return 1.0 / event.noise_multiplier if event.noise_multiplier > 0 else math.inf
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        one = _pure_epsilon(event.event)
        return 0.0 if event.count == 0 else one * event.count
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return math.fsum(_pure_epsilon(e) for e in event.events)
    return math.inf


def _describe(release: object) -> str:
    text = repr(release)
    return text if len(text) <= 120 else text[:117] + "..."


class PrivacyBudget:
    """An (epsilon, delta) budget charged release by release (a privacy odometer).

    Parameters
    ----------
    epsilon : float
        Total epsilon, finite and > 0.
    delta : float, default 0.0
        Total delta in [0, 1); ``spent`` is the epsilon certified at this delta.
    accountant : {"pld", "rdp"}
        dp-accounting's PLD (tight) or RDP (looser) accountant.
    neighbouring : {"replace_one", "add_remove"}
        The relation the budget protects.

    Attributes
    ----------
    n_releases : int
        Releases charged so far.
    history : tuple of (str, float)
        Each charged release and the total epsilon spent after it.

    Privacy
    -------
    No noise: it bounds the adaptive *composition* of the releases charged to it by a
    total fixed in advance.

    Examples
    --------
    >>> budget = PrivacyBudget(1.0, 1e-5)
    >>> round(budget.spend(PrivacyGuarantee(0.25, 0.0)), 3), round(budget.remaining(), 3)
    (0.25, 0.75)
    >>> budget.spend(PrivacyGuarantee(0.8, 0.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpol.errors.BudgetExceededError: PrivacyBudget(epsilon=1, delta=1e-05, ...
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, accountant: str = "pld",
                 neighbouring: str = "replace_one") -> None:
        self.epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
        self.delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        self.accountant = check_choice("accountant", accountant, ACCOUNTANTS)
        self.neighbouring = check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        self._accountant = _new_accountant(self.accountant)
        self._n_events = 0
        self._pure = 0.0  # pure epsilon of the events (inf once one is not pure)
        self._basic: list[tuple[float, float]] = []  # guarantees without an event
        self._spent = 0.0
        self._history: list[tuple[str, float]] = []

    # ------------------------------------------------------------------ reading
    @property
    def spent(self) -> float:
        """Epsilon spent so far, certified at the budget's delta (0 before any release)."""
        return self._spent

    def remaining(self) -> float:
        """Epsilon still available: ``epsilon - spent`` (never negative)."""
        return max(0.0, self.epsilon - self._spent)

    @property
    def n_releases(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple[tuple[str, float], ...]:
        return tuple(self._history)

    # ------------------------------------------------------------------ charging
    def _check_guarantee(self, g: PrivacyGuarantee, horizon: object) -> None:
        if g.window is not None and not (isinstance(horizon, int) and g.window >= horizon):
            raise fail("release", "carry an ordinary DP guarantee (window DP with a window "
                       "shorter than the horizon leaves expired elements unprotected)", g)
        self._check_relation(g.neighbouring, g)

    def _check_relation(self, neighbouring: str, release: object) -> None:
        if self.neighbouring == "replace_one" and neighbouring == "add_remove":
            raise fail("release", "be private under replace_one to be charged to a "
                       "replace_one budget", release)

    def _check_mechanism(self, mech: MechanismEvent, release: object) -> None:
        if not mech.is_full_dp:
            name = mech.name or "a mechanism"
            raise fail("release", f"carry an ordinary DP guarantee in every mechanism ({name} "
                       f"gives window DP with window W={mech.window} over {mech.horizon} "
                       "releases: expired elements are unprotected)", release)
        self._check_relation(mech.neighbouring, release)

    def _resolve(self, release: object) -> tuple[list[dp_accounting.DpEvent],
                                                 list[tuple[float, float]]]:
        """The events to compose, and the (epsilon, delta) to compose by basic composition.

        An object with ``privacy_events()`` (every counter and learner) is charged by the
        events of the mechanisms it ran, each checked for its window and relation.
        """
        if isinstance(release, dp_accounting.DpEvent):
            if not self._accountant.supports(release):
                raise fail("release", f"be a DpEvent the {self.accountant} accountant "
                           "supports", release)
            return [release], []
        if isinstance(release, PrivacyGuarantee):
            self._check_guarantee(release, None)
            return [], [(release.epsilon, release.delta)]
        mechanisms = getattr(release, "privacy_events", None)
        if callable(mechanisms):
            events, basic = [], []
            for mech in mechanisms():
                self._check_mechanism(mech, release)
                if mech.pure_epsilon is not None:  # pure DP: basic composition is exact
                    basic.append((mech.pure_epsilon, 0.0))
                elif self._accountant.supports(mech.event):
                    events.append(mech.event)
                else:
                    raise fail("release", f"run mechanisms the {self.accountant} accountant "
                               f"supports ({mech.name}: {mech.event!r})", release)
            return events, basic
        guarantee = getattr(release, "privacy", None)
        if isinstance(guarantee, PrivacyGuarantee):
            self._check_guarantee(guarantee, getattr(release, "horizon", None))
        else:
            guarantee = None
        event = getattr(release, "dp_event", None)
        if callable(event):
            event = event()
        if event is not None and not isinstance(event, dp_accounting.DpEvent):
            raise fail("release.dp_event", "be a dp_accounting DpEvent", event)
        if event is not None and self._accountant.supports(event):
            return [event], []
        if guarantee is not None:
            return [], [(guarantee.epsilon, guarantee.delta)]
        raise fail("release", "be a DpEvent, a PrivacyGuarantee, or an object with "
                   f"privacy_events(), a dp_event() the {self.accountant} accountant "
                   "supports or a privacy guarantee", release)

    def _trial(self, release: object) -> tuple[float, tuple]:
        """Total epsilon after ``release`` and the new state (nothing is changed)."""
        events, guarantees = self._resolve(release)
        accountant, n_events, pure = self._accountant, self._n_events, self._pure
        if events:
            accountant = copy.deepcopy(self._accountant)
            for event in events:
                accountant.compose(event)
                pure += _pure_epsilon(event)
            n_events += len(events)
        basic = [*self._basic, *guarantees]
        total = self._total(accountant, n_events, pure, basic)
        return total, (accountant, n_events, pure, basic)

    def _total(self, accountant: dp_accounting.PrivacyAccountant, n_events: int,
               pure: float, basic: list[tuple[float, float]]) -> float:
        delta_left = self.delta - math.fsum(d for _, d in basic)
        if delta_left < 0.0:
            return math.inf
        events = 0.0
        if n_events:
            events = min(pure, float(accountant.get_epsilon(delta_left)))
        return events + math.fsum(e for e, _ in basic)

    def epsilon_after(self, release: object) -> float:
        """The total epsilon (at the budget's delta) if ``release`` were charged now."""
        return self._trial(release)[0]

    def can_spend(self, release: object) -> bool:
        """Whether :meth:`spend` would accept ``release`` (nothing is charged)."""
        return self._trial(release)[0] <= self.epsilon

    def spend(self, release: object) -> float:
        """Charge ``release``; return the total epsilon spent.

        Raises
        ------
        BudgetExceededError
            When the composition would exceed the budget; nothing is charged.
        InvalidInputError
            When ``release`` cannot be accounted (see the module docstring).
        """
        total, state = self._trial(release)
        if not total <= self.epsilon:
            alone = PrivacyBudget(1.0, self.delta, accountant=self.accountant,
                                  neighbouring=self.neighbouring)._trial(release)[0]
            raise BudgetExceededError(
                f"{self!r} refuses {_describe(release)}: it alone costs epsilon "
                f"{alone:.6g} and would bring the spent epsilon from {self._spent:.6g} to "
                f"{total:.6g} > {self.epsilon:g} (at delta={self.delta:g}) after "
                f"{self.n_releases} release{'' if self.n_releases == 1 else 's'}; nothing "
                "was spent")
        self._accountant, self._n_events, self._pure, self._basic = state
        self._spent = total
        self._history.append((_describe(release), total))
        return total

    def __repr__(self) -> str:
        return (f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"accountant={self.accountant!r}, neighbouring={self.neighbouring!r})")
