"""The shared mechanism arguments of a private learner, as one object.

Every learner is sized by the same few choices: the target (epsilon, delta), the
neighbouring relation, the calibration, the noise kind and, where it runs counters, the
counter and its options, and the seed. :class:`Mechanism` holds them; a learner takes it
as ``mechanism=`` or the same fields as keywords (the short form, ``epsilon=1.0``), and
which of them it accepts is its ``accepts`` (:class:`dpol.learners.Accepts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType

from dpol._validation import check_choice, check_real, fail
from dpol.accounting.closed_forms import CALIBRATIONS
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS

__all__ = ["MECHANISM_FIELDS", "Mechanism", "merge_mechanism"]


@dataclass(frozen=True, eq=False)  # its own __eq__; unhashable (below)
class Mechanism:
    """The privacy target and the noise choices a learner is built with.

    A field left None takes the learner's own default (``delta``:
    :func:`~dpol.accounting.default_delta`; ``counter``: its ``accepts.counter``). Fields
    are checked here for what every learner shares, by each learner for its choices.

    Parameters
    ----------
    epsilon : float
        The target epsilon (``inf``: no noise, a ``NonPrivateWarning``).
    delta : float, optional
    neighbouring : str, optional
        One of :data:`~dpol.accounting.NEIGHBOURING_RELATIONS`.
    calibration : str, optional
        One of :data:`~dpol.accounting.CALIBRATIONS`.
    noise : str, optional
        A noise kind of :data:`dpol.noise.KINDS` (a learner's ``accepts`` lists its own).
    counter : str or Counter subclass, optional
    counter_options : mapping, optional
        Keywords for the learner's counters (stored read-only).
    seed : int, Generator or None, optional

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> spec = Mechanism(epsilon=1.0, delta=1e-6, noise="secure")
    >>> m = PrivateQuadraticFTL(3, horizon=64, mechanism=spec)
    >>> m.epsilon, m.delta, m.noise, m.mechanism == Mechanism(
    ...     1.0, 1e-6, "replace_one", "tight", "secure", "binary_tree", {}, None)
    (1.0, 1e-06, 'secure', True)
    """

    epsilon: float
    delta: float | None = None
    neighbouring: str | None = None
    calibration: str | None = None
    noise: str | None = None
    counter: object = None
    counter_options: Mapping | None = None
    seed: object = None

    def __post_init__(self) -> None:
        check_real("epsilon", self.epsilon, low=0.0, low_open=True, allow_inf=True)
        if self.delta is not None:
            check_real("delta", self.delta, low=0.0, high=1.0, high_open=True)
        if self.neighbouring is not None:
            check_choice("neighbouring", self.neighbouring, NEIGHBOURING_RELATIONS)
        if self.calibration is not None:
            check_choice("calibration", self.calibration, CALIBRATIONS)
        if self.counter_options is not None:
            if not isinstance(self.counter_options, Mapping):
                raise fail("counter_options", "be a mapping of counter keywords",
                           self.counter_options)
            object.__setattr__(self, "counter_options",
                               MappingProxyType(dict(self.counter_options)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mechanism):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name))
                   for f in fields(self))

    __hash__ = None  # type: ignore[assignment]  # counter options and seeds may not hash

    def keywords(self) -> dict:
        """The fields that are set (not None), as constructor keywords.

        Examples
        --------
        >>> Mechanism(1.0, noise="secure").keywords()
        {'epsilon': 1.0, 'noise': 'secure'}
        """
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = dict(value) if f.name == "counter_options" else value
        return out


#: the field names, in order: the short keywords every learner's ``**privacy`` may hold
MECHANISM_FIELDS = tuple(f.name for f in fields(Mechanism))


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return dict(a) == dict(b)
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):  # arrays and the like: only the same object is the same
        return False


def merge_mechanism(mechanism: object, given: dict, accepted: set[str] | None,
                    owner: str) -> dict:
    """``given`` keywords with ``mechanism``'s fields added; a field set both ways must agree.

    ``accepted``: the mechanism fields the owner's constructor takes (None: any); a set
    field it does not take is refused.

    Examples
    --------
    >>> merge_mechanism(Mechanism(1.0, delta=1e-6), {"delta": 1e-6, "alpha": 2.0}, None, "M")
    {'delta': 1e-06, 'alpha': 2.0, 'epsilon': 1.0}
    """
    if not isinstance(mechanism, Mechanism):
        raise fail("mechanism", "be a dpol.accounting.Mechanism", mechanism)
    out = dict(given)
    for name, value in mechanism.keywords().items():
        if accepted is not None and name not in accepted:
            raise fail("mechanism", f"not set {name}: {owner} takes no {name}", value)
        if name in out and out[name] is not None and not _same(out[name], value):
            raise fail(name, f"be given once: mechanism says {value!r}, the keyword "
                       f"{out[name]!r}", out[name])
        if name not in out or out[name] is None:
            out[name] = value
    return out
