"""Counters by name, for the learners' ``counter=`` argument."""

from __future__ import annotations

import inspect

from dpol._validation import fail
from dpol.counters._base import Counter
from dpol.counters.banded_matrix import BandedMatrixCounter
from dpol.counters.banded_toeplitz import BandedToeplitzCounter
from dpol.counters.binary_tree import BinaryTreeCounter
from dpol.counters.blt import BltCounter
from dpol.counters.dense_mean import DenseMeanCounter
from dpol.counters.honaker_tree import HonakerTreeCounter
from dpol.counters.toeplitz import ToeplitzCounter
from dpol.counters.unbounded_tree import UnboundedTreeCounter
from dpol.counters.window_tree import WindowTreeCounter

__all__ = ["COUNTER_NAMES", "ENDLESS", "counter_keywords", "make_counter", "resolve_counter"]

_BY_NAME: dict[str, type[Counter]] = {
    "tree": BinaryTreeCounter,
    "honaker": HonakerTreeCounter,
    "window": WindowTreeCounter,
    "toeplitz": ToeplitzCounter,
    "blt": BltCounter,
    "banded": BandedToeplitzCounter,
    "dense_mean": DenseMeanCounter,
    "banded_matrix": BandedMatrixCounter,
    "unbounded_tree": UnboundedTreeCounter,
}
#: the counter names :func:`make_counter` and the ``counter=`` argument of learners accept
COUNTER_NAMES = tuple(_BY_NAME)
#: counters that take no horizon (``horizon=None`` only): :func:`make_counter` builds them
#: without the caller's horizon, which then only bounds how many elements the caller adds
ENDLESS: tuple[type[Counter], ...] = (UnboundedTreeCounter,)


def resolve_counter(counter: str | type[Counter]) -> type[Counter]:
    """The counter class for a name in COUNTER_NAMES or a Counter subclass.

    Examples
    --------
    >>> resolve_counter("tree").__name__, resolve_counter(BltCounter) is BltCounter
    ('BinaryTreeCounter', True)
    """
    if isinstance(counter, type) and issubclass(counter, Counter):
        return counter
    if isinstance(counter, str) and counter in _BY_NAME:
        return _BY_NAME[counter]
    raise fail("counter", f"be one of {', '.join(map(repr, COUNTER_NAMES))} or a Counter "
               "subclass", counter)


def make_counter(counter: str | type[Counter], horizon: int, dim: int, **kwargs) -> Counter:
    """Build a counter by name or class; keywords go to its constructor.

    A keyword the constructor does not take (:func:`counter_keywords`) is refused as an
    ``InvalidInputError`` naming ``counter_options`` (where learners take these
    keywords), before anything is built.

    A counter of :data:`ENDLESS` is built with ``horizon=None``: a learner's horizon
    changes nothing in it (its noise and guarantee hold for every prefix of the stream).

    Examples
    --------
    >>> make_counter("honaker", 8, 2, noise_multiplier=1.0).dim
    2
    >>> make_counter("unbounded_tree", 8, 2, noise_multiplier=1.0).horizon is None
    True
    >>> make_counter("tree", 8, 2, window=4)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: counter_options must hold only keywords
    BinaryTreeCounter accepts (padded, bound, noise_multiplier, epsilon, delta,
    neighbouring, calibration, noise, seed, element_sensitivity, participation);
    got ['window']
    """
    cls = resolve_counter(counter)
    takes = counter_keywords(cls)
    unknown = sorted(set(kwargs) - set(takes)) if takes is not None else []
    if unknown:  # refused here, not as the constructor's TypeError deep in a learner
        raise fail("counter_options", f"hold only keywords {cls.__name__} accepts "
                   f"({', '.join(takes)})", unknown)
    return cls(None if issubclass(cls, ENDLESS) else horizon, dim, **kwargs)


def counter_keywords(cls: type[Counter]) -> tuple[str, ...] | None:
    """The keywords a counter class's constructor accepts besides horizon and dim.

    Its own first, then those its ``**kwargs`` hand on to the next constructor in the
    method resolution order (as every dpol counter does, down to :class:`Counter`).
    ``None`` when no constructor in the chain ends the ``**kwargs`` (nothing to check).

    Examples
    --------
    >>> counter_keywords(WindowTreeCounter)[:3]
    ('window', 'bound', 'noise_multiplier')
    >>> "window" in counter_keywords(BinaryTreeCounter)
    False
    """
    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass) or klass is object:
            continue
        params = list(inspect.signature(klass.__init__).parameters.values())[1:]
        names += [p.name for p in params
                  if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.name not in ("horizon", "dim") and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return tuple(names)
    return None

