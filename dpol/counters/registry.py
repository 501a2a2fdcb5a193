"""Counters by name, for the learners' ``counter=`` argument."""

from __future__ import annotations

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

__all__ = ["COUNTER_NAMES", "ENDLESS", "make_counter", "resolve_counter"]

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

    A counter of :data:`ENDLESS` is built with ``horizon=None``: a learner's horizon
    changes nothing in it (its noise and guarantee hold for every prefix of the stream).

    Examples
    --------
    >>> make_counter("honaker", 8, 2, noise_multiplier=1.0).dim
    2
    >>> make_counter("unbounded_tree", 8, 2, noise_multiplier=1.0).horizon is None
    True
    """
    cls = resolve_counter(counter)
    return cls(None if issubclass(cls, ENDLESS) else horizon, dim, **kwargs)

