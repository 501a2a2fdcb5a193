"""Strategies: factorisations A = B C of the prefix-sum workload, one per file (layer L2).

A strategy knows its structure (the encoder C, the levels one element enters), its
column norms (the sensitivity per participation pattern), ``variance(t)`` and ``loss()``,
and its streaming noise correlation (``draws`` and ``correlate``: one step or a block,
from any state the counter keeps). A :class:`~dpol.counters.Counter` is a strategy plus
a noise kind (:mod:`dpol.noise.kinds`), a calibration, clipping and state.
"""

from dpol.counters.strategies._participation import SINGLE, Participation
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.banded_matrix_strategy import BandedMatrixStrategy
from dpol.counters.strategies.banded_toeplitz_strategy import BandedToeplitzStrategy
from dpol.counters.strategies.blt_strategy import BltStrategy
from dpol.counters.strategies.dense_mean_strategy import DenseMeanStrategy
from dpol.counters.strategies.honaker_strategy import HonakerStrategy
from dpol.counters.strategies.padded_tree_strategy import PaddedTreeStrategy
from dpol.counters.strategies.toeplitz_strategy import ToeplitzStrategy
from dpol.counters.strategies.tree_strategy import TreeStrategy
from dpol.counters.strategies.unbounded_tree_strategy import UnboundedTreeStrategy
from dpol.counters.strategies.window_tree_strategy import WindowTreeStrategy

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
