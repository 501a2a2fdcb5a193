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
from dpol.counters.window_tree import WindowTreeCounter

__all__ = ["COUNTER_NAMES", "make_counter", "resolve_counter"]

_BY_NAME: dict[str, type[Counter]] = {
    "tree": BinaryTreeCounter,
    "honaker": HonakerTreeCounter,
    "window": WindowTreeCounter,
    "toeplitz": ToeplitzCounter,
    "blt": BltCounter,
    "banded": BandedToeplitzCounter,
    "dense_mean": DenseMeanCounter,
    "banded_matrix": BandedMatrixCounter,
}
COUNTER_NAMES = tuple(_BY_NAME)


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

    Examples
    --------
    >>> make_counter("honaker", 8, 2, noise_multiplier=1.0).dim
    2
    """
    return resolve_counter(counter)(horizon, dim, **kwargs)

