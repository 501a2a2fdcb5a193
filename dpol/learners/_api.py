"""What every learner shares beyond its algorithm: ``accepts``, ``mechanism``, ``tags``, ``t``.

Every learner constructor ends in ``mechanism: Mechanism | None = None, **privacy``, the
fields of :class:`dpol.accounting.Mechanism` as short keywords. What a learner takes is
stated once in its ``accepts`` (:class:`Accepts`): :meth:`Accepts.resolve` merges both
forms (they must agree), refuses the rest and fills defaults; ``tags`` and
:func:`accepts_table` read it. Learned state ends in ``_`` (``t`` is a read-only alias).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from dpol._validation import fail
from dpol.accounting.closed_forms import CALIBRATIONS, check_epsilon, resolve_delta
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS
from dpol.accounting.mechanism import MECHANISM_FIELDS, Mechanism, merge_mechanism
from dpol.noise.kinds import KINDS, NoiseKind

__all__ = ["TAGS", "Accepts", "LearnerAPI", "accepts_table", "set_mechanism"]

#: the capability tags a learner may carry, and what each promises
TAGS = {
    "bandit": "ask/tell on scalar losses (else learn_one/run on (x, y) examples)",
    "counters": "releases through continual counters (``counter=``, ``counter_options=``)",
    "secure": "takes noise='secure': exact discrete noise on OS randomness",
    "pure": "takes a pure-DP noise (delta = 0): 'laplace', 'gamma' or 'secure_laplace'",
    "paper": "takes calibration='paper' (a published formula, stated, never trusted)",
    "window": "can give window DP (WDP, Definition 6) through a window counter",
    "least_squares": "predictions are clipped to y_bound (a least-squares model)",
}
#: the tags :class:`Accepts` gives (the others are a class's own ``_tags``)
PRIVACY_TAGS = ("counters", "secure", "pure", "paper", "window")


def _one_of(name: str, value: object, choices: tuple[str, ...], owner: str) -> str:
    if not isinstance(value, str) or value not in choices:
        rule = (repr(choices[0]) if len(choices) == 1
                else "one of " + ", ".join(map(repr, choices)))
        raise fail(name, f"be {rule} for {owner}", value)
    return value


@dataclass(frozen=True)
class Accepts:
    """What of a :class:`~dpol.accounting.Mechanism` a learner class takes, stated once.

    Its constructor's checks (:meth:`resolve`), its ``tags`` (:attr:`tags`) and the
    documentation (:func:`accepts_table`) read it.

    Attributes
    ----------
    noises : tuple of str
        The noise kinds (:data:`dpol.noise.KINDS`) it takes, its default first; empty:
        a learner without a privacy target (the non-private bandit twin), which takes
        only ``neighbouring`` and ``seed``.
    calibrations : tuple of str
        Of :data:`~dpol.accounting.CALIBRATIONS`, its default first.
    counter : str or None
        Its default counter (``counter=``, ``counter_options=``); None: it runs none.
    window : bool
        Whether a window counter can give it window DP.
    neighbourings : tuple of str
        Of :data:`~dpol.accounting.NEIGHBOURING_RELATIONS`, its default first.

    Examples
    --------
    >>> accepts = Accepts(noises=("gaussian", "secure"), counter="binary_tree")
    >>> accepts.fields  # doctest: +NORMALIZE_WHITESPACE
    ('epsilon', 'delta', 'neighbouring', 'calibration', 'noise', 'counter',
     'counter_options', 'seed')
    >>> sorted(accepts.tags)
    ['counters', 'paper', 'secure']
    >>> accepts.resolve("M", Mechanism(1.0, seed=3), {"noise": "secure"})["noise"]
    'secure'
    """

    noises: tuple[str, ...] = ("gaussian", "secure")
    calibrations: tuple[str, ...] = CALIBRATIONS
    counter: str | None = None
    window: bool = False
    neighbourings: tuple[str, ...] = NEIGHBOURING_RELATIONS

    @property
    def private(self) -> bool:
        """Whether it has a privacy target (epsilon, delta, noise, calibration)."""
        return bool(self.noises)

    @property
    def fields(self) -> tuple[str, ...]:
        """The Mechanism fields it takes, in the Mechanism's order."""
        taken = {"neighbouring", "seed"}
        if self.private:
            taken |= {"epsilon", "delta", "calibration", "noise"}
        if self.counter is not None:
            taken |= {"counter", "counter_options"}
        return tuple(name for name in MECHANISM_FIELDS if name in taken)

    @property
    def tags(self) -> frozenset[str]:
        """Its capability tags of :data:`PRIVACY_TAGS` (see :data:`TAGS`)."""
        kinds = [KINDS[name] for name in self.noises]
        found = {"counters": self.counter is not None, "window": self.window,
                 "secure": any(k.secure for k in kinds),
                 "pure": any(not k.approximate for k in kinds),
                 "paper": self.private and "paper" in self.calibrations}
        return frozenset(tag for tag, held in found.items() if held)

    def defaults(self) -> dict:
        """The value of every field it takes when neither way sets it (None: the
        learner's rule: delta's default of its horizon, fresh OS entropy for seed)."""
        values = {"neighbouring": self.neighbourings[0], "seed": None, "delta": None,
                  "epsilon": None, "counter_options": {}, "counter": self.counter,
                  "noise": self.noises[0] if self.private else None,
                  "calibration": self.calibrations[0]}
        return {name: values[name] for name in self.fields}

    def resolve(self, owner: str, mechanism: Mechanism | None, privacy: dict) -> dict:
        """Every field it takes, from ``mechanism`` and the short keywords ``privacy``.

        A field set both ways must agree; a field it does not take, or a choice outside
        its own, is refused (``InvalidInputError`` naming it); a keyword that is no
        Mechanism field is a ``TypeError``, as Python's for a constructor. The result
        is what the learner's constructor passes on (idempotent).
        """
        unknown = [name for name in privacy if name not in MECHANISM_FIELDS]
        if unknown:
            raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
        given = dict(privacy)
        if mechanism is not None:
            given = merge_mechanism(mechanism, given, set(self.fields), owner)
        for name, value in given.items():
            if name not in self.fields and value is not None:
                raise fail(name, f"be left unset: {owner} takes no {name}", value)
        out = self.defaults()
        out.update({k: v for k, v in given.items() if k in out and v is not None})
        if self.private and out["epsilon"] is None:
            raise fail("epsilon", f"be given to {owner} (mechanism= or epsilon=)", None)
        out["neighbouring"] = _one_of("neighbouring", out["neighbouring"],
                                      self.neighbourings, owner)
        if self.private:
            out["noise"] = _one_of("noise", out["noise"], self.noises, owner)
            out["calibration"] = _one_of("calibration", out["calibration"],
                                         self.calibrations, owner)
        if "counter_options" in out and not isinstance(out["counter_options"], Mapping):
            raise fail("counter_options", "be a mapping of counter keywords",
                       out["counter_options"])
        return out

    def describe(self) -> str:
        """One row of :func:`accepts_table`: noises | calibrations | counter | window DP |
        relations."""
        def names(values: tuple[str, ...]) -> str:
            return ", ".join(f"`{v}`" for v in values) or "-"
        calibrations = self.calibrations if self.private else ()
        counter = "-" if self.counter is None else f"`{self.counter}`"
        return (f"{names(self.noises)} | {names(calibrations)} | {counter} | "
                f"{'yes' if self.window else 'no'} | {names(self.neighbourings)}")


def set_mechanism(obj: object, privacy: dict, horizon: int) -> None:
    """Set ``obj.epsilon``, ``obj.delta``, ... from :meth:`Accepts.resolve`'s fields:
    epsilon checked, delta resolved against ``horizon``, the counter options a fresh dict
    (the attributes every learner has always had; checkpoints hold them)."""
    for name, value in privacy.items():
        if name == "epsilon":
            value = check_epsilon(value)
        elif name == "delta":
            value = resolve_delta(value, horizon)  # None: 1e-5, or 1/T if smaller
        elif name == "counter_options":
            value = dict(value)
        setattr(obj, name, value)


class LearnerAPI:
    """Mixin of every learner: ``accepts``, ``mechanism``, ``tags``, ``noise_kind`` and
    ``t`` (module docstring).

    Examples
    --------
    >>> from dpol.accounting import Mechanism
    >>> from dpol.learners import PrivateIGD
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> m = PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2), horizon=8,
    ...                mechanism=Mechanism(1.0, delta=1e-6, seed=3))
    >>> m.epsilon, m.delta, m.seed, m.mechanism.noise, PrivateIGD.accepts.noises
    (1.0, 1e-06, 3, 'gaussian', ('gaussian', 'secure'))
    >>> PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2), horizon=8,
    ...            mechanism=Mechanism(1.0, counter="binary_tree"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: mechanism must not set counter: PrivateIGD takes no
    counter; got 'binary_tree'
    """

    #: what of a Mechanism the class takes (:class:`Accepts`); each learner states its own
    accepts: ClassVar[Accepts] = Accepts()
    #: capability tags beyond what ``accepts`` gives (``bandit``, ``least_squares``)
    _tags: frozenset[str] = frozenset()

    @property
    def tags(self) -> frozenset[str]:
        """What this learner can do, from :data:`TAGS` (read-only)."""
        return frozenset(self._tags) | self.accepts.tags

    @property
    def noise_kind(self) -> NoiseKind:
        """The noise object of ``noise`` (:mod:`dpol.noise.kinds`): its events, grid,
        sampling and refusals are what the learner asks (looked up, so a checkpoint
        holds only the name)."""
        return KINDS[self.noise]

    @property
    def t(self) -> int:
        """Elements (rounds) seen so far: ``t_`` (read-only alias)."""
        return self.t_

    @property
    def mechanism(self) -> Mechanism | None:
        """The mechanism arguments this learner was built with (delta resolved); None for
        a learner without a privacy target (the non-private bandit twin)."""
        if not self.accepts.private:
            return None
        values = {name: getattr(self, name) for name in self.accepts.fields}
        return Mechanism(**values)


def accepts_table(classes: list[type] | None = None) -> str:
    """A Markdown table of what each learner class accepts, read from their ``accepts``
    (default: every concrete dpol learner that states one, by name).

    Examples
    --------
    >>> from dpol.learners import PrivateFTRL
    >>> print(accepts_table([PrivateFTRL]).splitlines()[-1])
    | `PrivateFTRL` | `gaussian` | `tight` | `blt` | no | `replace_one`, `add_remove` |
    """
    if classes is None:
        classes = sorted({c for c in _subclasses(LearnerAPI) if c.__module__.startswith("dpol.")
                          and not inspect.isabstract(c) and c.accepts is not LearnerAPI.accepts},
                         key=lambda c: c.__name__)
    rows = ["| learner | noise | calibration | counter | window DP | neighbouring |",
            "|---|---|---|---|---|---|"]
    rows += [f"| `{c.__name__}` | {c.accepts.describe()} |" for c in classes]
    return "\n".join(rows)


def _subclasses(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]
