"""Continual release of private prefix sums (layer L2), one mechanism per file.

A counter is a strategy (:mod:`dpol.counters.strategies`: a factorisation of the
prefix-sum workload with its noise correlation), a noise kind (:mod:`dpol.noise.kinds`),
a calibration, clipping and state.
"""

from dpol.counters._base import Counter
from dpol.counters.banded_matrix import BandedMatrixCounter
from dpol.counters.banded_toeplitz import BandedToeplitzCounter
from dpol.counters.binary_tree import BinaryTreeCounter
from dpol.counters.blt import BltCounter
from dpol.counters.dense_mean import DenseMeanCounter
from dpol.counters.honaker_tree import HonakerTreeCounter
from dpol.counters.registry import (
    COUNTER_ALIASES,
    COUNTER_NAMES,
    counter_name,
    make_counter,
    resolve_counter,
)
from dpol.counters.strategies._participation import Participation, parse_participation
from dpol.counters.toeplitz import ToeplitzCounter
from dpol.counters.unbounded_tree import UnboundedTreeCounter
from dpol.counters.window_tree import WindowTreeCounter

__all__ = [
    "COUNTER_ALIASES",
    "COUNTER_NAMES",
    "BandedMatrixCounter",
    "BandedToeplitzCounter",
    "BinaryTreeCounter",
    "BltCounter",
    "Counter",
    "DenseMeanCounter",
    "HonakerTreeCounter",
    "Participation",
    "ToeplitzCounter",
    "UnboundedTreeCounter",
    "WindowTreeCounter",
    "counter_name",
    "make_counter",
    "parse_participation",
    "resolve_counter",
]
