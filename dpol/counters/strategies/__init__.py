"""Strategies: factorisations A = B C of the prefix-sum workload, one per file (layer L2).

A strategy knows its structure (the encoder C, the levels one element enters), its
column norms (the sensitivity per participation pattern), ``variance(t)`` and ``loss()``,
and its streaming noise correlation (``draws`` and ``correlate``: one step or a block,
from any state the counter keeps). A :class:`~dpol.counters.Counter` is a strategy plus
a noise kind (:mod:`dpol.noise.kinds`), a calibration, clipping and state.
"""

from dpol.counters.strategies._participation import SINGLE, Participation
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.banded_matrix import BandedMatrixStrategy
from dpol.counters.strategies.banded_toeplitz import BandedToeplitzStrategy
from dpol.counters.strategies.blt import BltStrategy
from dpol.counters.strategies.dense_mean import DenseMeanStrategy
from dpol.counters.strategies.honaker import HonakerStrategy
from dpol.counters.strategies.padded_tree import PaddedTreeStrategy
from dpol.counters.strategies.toeplitz import ToeplitzStrategy
from dpol.counters.strategies.tree import TreeStrategy
from dpol.counters.strategies.unbounded_tree import UnboundedTreeStrategy
from dpol.counters.strategies.window_tree import WindowTreeStrategy

__all__ = [
    "SINGLE",
    "BandedMatrixStrategy",
    "BandedToeplitzStrategy",
    "BltStrategy",
    "DenseMeanStrategy",
    "HonakerStrategy",
    "PaddedTreeStrategy",
    "Participation",
    "Strategy",
    "ToeplitzStrategy",
    "TreeStrategy",
    "UnboundedTreeStrategy",
    "WindowTreeStrategy",
]
