"""Counters by name, for the learners' ``counter=`` argument and ``--counter``.

A counter's name is its module's: :class:`BinaryTreeCounter` is ``"binary_tree"``, in
``dpol.counters.binary_tree``. The names before that rule stay accepted as
:data:`COUNTER_ALIASES` (docs/architecture.md, Names).
"""

from __future__ import annotations

import inspect

from dpol._validation import check_name, fail
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

__all__ = ["COUNTER_ALIASES", "COUNTER_NAMES", "ENDLESS", "counter_keywords", "counter_name",
           "make_counter", "resolve_counter"]

_BY_NAME: dict[str, type[Counter]] = {
    "binary_tree": BinaryTreeCounter,
    "honaker_tree": HonakerTreeCounter,
    "window_tree": WindowTreeCounter,
    "toeplitz": ToeplitzCounter,
    "blt": BltCounter,
    "banded_toeplitz": BandedToeplitzCounter,
    "dense_mean": DenseMeanCounter,
    "banded_matrix": BandedMatrixCounter,
    "unbounded_tree": UnboundedTreeCounter,
}
#: the counter names :func:`make_counter` and the ``counter=`` argument of learners accept,
#: each its counter's module name
COUNTER_NAMES = tuple(_BY_NAME)
#: old counter names, still accepted: each is read as the name it maps to (outputs,
#: reports and sweep stores carry that canonical name)
COUNTER_ALIASES = {"tree": "binary_tree", "honaker": "honaker_tree", "window": "window_tree",
                   "banded": "banded_toeplitz"}
#: counters that take no horizon (``horizon=None`` only): :func:`make_counter` builds them
#: without the caller's horizon, which then only bounds how many elements the caller adds
ENDLESS: tuple[type[Counter], ...] = (UnboundedTreeCounter,)


def counter_name(name: object) -> str:
    """The canonical name of a counter name of :data:`COUNTER_NAMES` or
    :data:`COUNTER_ALIASES`; anything else is refused with both lists.

    Examples
    --------
    >>> counter_name("window"), counter_name("window_tree")
    ('window_tree', 'window_tree')
    """
    return check_name("counter", name, COUNTER_NAMES, COUNTER_ALIASES)


def resolve_counter(counter: str | type[Counter]) -> type[Counter]:
    """The counter class for a name (:func:`counter_name`) or a Counter subclass.

    Examples
    --------
    >>> resolve_counter("binary_tree").__name__, resolve_counter(BltCounter) is BltCounter
    ('BinaryTreeCounter', True)
    >>> resolve_counter("tree") is BinaryTreeCounter  # an old name
    True
    """
    if isinstance(counter, type) and issubclass(counter, Counter):
        return counter
    if not isinstance(counter, str):
        raise fail("counter", "be a counter name or a Counter subclass", counter)
    return _BY_NAME[counter_name(counter)]


def make_counter(counter: str | type[Counter], horizon: int, dim: int, **kwargs) -> Counter:
    """Build a counter by name or class; keywords go to its constructor.

    A keyword the constructor does not take is refused naming ``counter_options``. A
    counter of :data:`ENDLESS` is built with ``horizon=None`` (its guarantee holds for
    every prefix).

    Examples
    --------
    >>> make_counter("honaker_tree", 8, 2, noise_multiplier=1.0).dim
    2
    >>> make_counter("unbounded_tree", 8, 2, noise_multiplier=1.0).horizon is None
    True
    >>> make_counter("binary_tree", 8, 2, window=4)  # doctest: +NORMALIZE_WHITESPACE
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

