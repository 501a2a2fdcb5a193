"""ENV's TreeBasedAgg: the binary tree with every release padded to the same draw count."""

from __future__ import annotations

import numpy as np

from dpol.counters.strategies._bits import max_popcount, popcount
from dpol.counters.strategies.tree_strategy import TreeStrategy, keep_level_prefix, prefix_noise

__all__ = ["PaddedTreeStrategy"]


class PaddedTreeStrategy(TreeStrategy):
    """:class:`TreeStrategy` whose release at t adds pad_to - popcount(t) fresh draws.

    Every release carries pad_to = max(ceil(log2 T), 1) draws (ENV Algorithms 3-4); the
    padding is post-processing (the tree's nodes and sensitivity).

    Examples
    --------
    >>> s = PaddedTreeStrategy(100)
    >>> s.pad_to, s.variance(np.array([1, 7, 64])).tolist(), s.draws(0, 3)  # 1+6, 1+6, 1+5
    (7, [7.0, 7.0, 7.0], 20)
    """

    name = "padded_tree"

    def __init__(self, horizon: int) -> None:
        super().__init__(horizon)
        self.pad_to = max((horizon - 1).bit_length(), max_popcount(horizon))

    def variance(self, t: np.ndarray) -> np.ndarray:
        return np.full(np.shape(t), float(self.pad_to))

    def _n_pad(self, start: int, n: int) -> np.ndarray:
        return self.pad_to - popcount(np.arange(start + 1, start + n + 1, dtype=np.int64))

    @property
    def draws_per_step(self) -> float:
        return 1.0 + self.pad_to / 2  # popcount(t) averages about log2(T) / 2

    def draws(self, start: int, n: int) -> int:
        if n == 1:  # the streaming step, without numpy's per-call overhead
            return 1 + self.pad_to - (start + 1).bit_count()
        return int(n + self._n_pad(start, n).sum())

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        # per step: the node draw, then pad_to - popcount(t) padding draws, summed from 0
        # in draw order (a single step: the same additions without index arrays)
        if n == 1:
            first, pad = [0], np.zeros((1, rows.shape[1]))
            for row in rows[1:]:
                pad[0] = pad[0] + row
        else:
            n_pad = self._n_pad(start, n)
            first = np.concatenate([[0], np.cumsum(1 + n_pad)[:-1]])
            pad = np.zeros((n, rows.shape[1]))
            for k in range(int(n_pad.max(initial=0))):
                has = np.flatnonzero(n_pad > k)
                pad[has] = pad[has] + rows[first[has] + 1 + k]
        noise = prefix_noise(rows[first], start, state["level_prefix"])
        keep_level_prefix(state["level_prefix"], noise, start)  # before padding
        noise += pad
        return noise
