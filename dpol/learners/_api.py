"""What every learner shares beyond its algorithm: ``mechanism=``, ``tags``, ``t``.

Every learner constructor takes the fields of :class:`dpol.accounting.Mechanism`
(epsilon, delta, neighbouring, calibration, noise, counter, counter_options, seed) as
keywords, the short form. :class:`LearnerAPI` lets it take them as one ``mechanism=``
object too: the object's fields become those keywords (a field also given as a keyword
must agree), and ``learner.mechanism`` gives them back. Learned state ends in ``_``
(scikit-learn's rule: ``t_``, ``n_clipped_``); ``t`` stays as a read-only alias.
``tags`` names a learner's capabilities (river's estimator tags), read by code and tests
instead of private flags.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import fields

from dpol.accounting.mechanism import Mechanism, merge_mechanism
from dpol.noise.kinds import KINDS, NoiseKind

__all__ = ["TAGS", "LearnerAPI"]

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

_FIELDS = tuple(f.name for f in fields(Mechanism))


def _accepted(init) -> tuple[set[str] | None, inspect.Signature]:
    """Mechanism fields ``init`` takes (None: it passes ``**kwargs`` on, so any)."""
    sig = inspect.signature(init)
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None, sig
    return {n for n in _FIELDS if n in sig.parameters}, sig


class LearnerAPI:
    """Mixin of every learner: ``mechanism=`` on each subclass's ``__init__``,
    ``mechanism``, ``tags`` and ``t`` (module docstring).

    Examples
    --------
    >>> from dpol.accounting import Mechanism
    >>> from dpol.learners import PrivateIGD
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> m = PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2), horizon=8,
    ...                mechanism=Mechanism(1.0, delta=1e-6, seed=3))
    >>> m.epsilon, m.delta, m.seed, m.mechanism.noise
    (1.0, 1e-06, 3, 'gaussian')
    >>> PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2), horizon=8,
    ...            mechanism=Mechanism(1.0, counter="tree"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: mechanism must not set counter: PrivateIGD takes no
    counter; got 'tree'
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_takes_mechanism", False):
            return
        accepted, sig = _accepted(init)

        @functools.wraps(init)
        def __init__(self, *args, mechanism: Mechanism | None = None, **given) -> None:
            if mechanism is not None:
                # a learner that passes **kwargs on: which fields its chain takes is
                # its class's (the outermost constructor's) business
                take = accepted if accepted is not None else _chain_accepted(type(self))
                given = merge_mechanism(mechanism, given, take, type(self).__name__)
            init(self, *args, **given)

        params = list(sig.parameters.values())
        extra = inspect.Parameter("mechanism", inspect.Parameter.KEYWORD_ONLY, default=None)
        where = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD),
                     len(params))
        if "mechanism" not in sig.parameters:
            params.insert(where, extra)
        __init__.__signature__ = sig.replace(parameters=params)
        __init__._takes_mechanism = True
        cls.__init__ = __init__

    #: capability tags of the class (see :data:`TAGS`); subclasses extend them
    _tags: frozenset[str] = frozenset()

    @property
    def tags(self) -> frozenset[str]:
        """What this learner can do, from :data:`TAGS` (read-only)."""
        return frozenset(self._tags)

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
        take = _chain_accepted(type(self))
        if "epsilon" not in take:
            return None
        values = {}
        for name in _FIELDS:
            if take is None or name in take:
                value = getattr(self, name, None)
                values[name] = dict(value) if name == "counter_options" else value
        return Mechanism(**values)


@functools.cache
def _chain_accepted(cls: type) -> set[str] | None:
    """Mechanism fields any constructor along ``cls``'s MRO takes by name."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        accepted, _ = _accepted(getattr(init, "__wrapped__", init))
        names |= accepted if accepted is not None else set()
    return names
