"""The window tree of WDP (Section III): aligned block trees, window-sized noise."""

from __future__ import annotations

import numpy as np

from dpol._validation import fail
from dpol.counters.strategies._bits import lowbit, popcount, set_bits_high_to_low, trailing_zeros
from dpol.counters.strategies._strategy import Strategy

__all__ = ["WindowTreeStrategy"]


class WindowTreeStrategy(Strategy):
    """Blocks of W' = 2^ceil(log2 W) steps, each a complete binary tree (WDP Section III).

    The release noise at t is the noisy dyadic decomposition of the window (t - W', t]
    (at most log2 W' + 1 draws; docs/errata.md, WDP-8; derivation:
    docs/derivations/tree_counters.md); with W' >= T it is
    :class:`~dpol.counters.strategies.TreeStrategy`'s. ``correlate`` continues from any
    state.

    Examples
    --------
    >>> s = WindowTreeStrategy(16, 4)
    >>> s.levels, s.variance(np.arange(1, 9)).tolist()  # block 2: suffix + prefix nodes
    (3, [1.0, 1.0, 2.0, 1.0, 3.0, 2.0, 3.0, 1.0])
    """

    name = "window_tree"
    continues_vectorized = True

    def __init__(self, horizon: int, window: int) -> None:
        super().__init__(horizon)
        self.window = window
        self.height = (window - 1).bit_length()  # W' = 2^h >= W
        self.block = 1 << self.height

    @property
    def levels(self) -> int:
        return min(self.height, self.horizon.bit_length() - 1) + 1

    def _participation_norm_sq(self, participation: object) -> float:
        raise fail("participation", "be 'single' for the window tree: its window-DP "
                   "guarantee protects one element within W steps", participation)

    def variance(self, t: np.ndarray) -> np.ndarray:
        j = (t - 1) % self.block + 1
        suffix = np.where(t > self.block, popcount(self.block - j), 0)
        return (popcount(j) + suffix).astype(np.float64)

    def init_state(self, dim: int) -> dict:
        return {"level_noise": np.zeros((self.height + 1, dim)),  # prefix nodes, this block
                "prev_suffix": None}  # (W'+1, d) suffix noise of the previous block

    def draws(self, start: int, n: int) -> int:
        # a step opening block b >= 1 first draws the W' - 1 suffix nodes of block b - 1
        openings = (start + n - 1) // self.block - max(start - 1, 0) // self.block
        return n + openings * (self.block - 1)

    def _suffix_noise(self, nodes: np.ndarray) -> np.ndarray:
        """Suffix sums over a block's right-child nodes; ``nodes[a-1]`` covers [a, a + lowbit(a)).

        snoise[a] = node(a) + snoise[a + lowbit(a)], snoise[W'] = 0, for a = W'-1 .. 1; the
        same right-to-left order of additions in the streaming and the vectorized path.
        Works on a leading batch axis: ``nodes`` of shape (..., W'-1, d).
        """
        size = self.block
        out = np.zeros((*nodes.shape[:-2], size + 1, nodes.shape[-1]))
        offsets = np.arange(1, size, dtype=np.int64)
        steps_left = popcount(size - offsets)  # nodes in the decomposition of [a, W')
        for k in range(1, int(steps_left.max(initial=0)) + 1):
            a = offsets[steps_left == k]
            out[..., a, :] = nodes[..., a - 1, :] + out[..., a + lowbit(a), :]
        return out

    def _prefix_before(self, level_noise: np.ndarray, step: int) -> np.ndarray:
        """Prefix noise of a step before the block, from the state: its in-block nodes'
        noises, high bit to low (the ``add`` loop's sum; still current, see TreeStrategy)."""
        acc = np.zeros(level_noise.shape[1])
        for b in set_bits_high_to_low((step - 1) % self.block + 1):
            acc = acc + level_noise[b]
        return acc

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        size, level_noise = self.block, state["level_noise"]
        steps = np.arange(start + 1, start + n + 1, dtype=np.int64)
        block, off = np.divmod(steps - 1, size)
        j = off + 1
        # draw layout: a step opening block b >= 1 draws the W'-1 suffix rows of block b-1,
        # then its prefix node; every other step its prefix node only (the add loop's order)
        opens = np.flatnonzero((off == 0) & (block >= 1))
        row_of_step = np.arange(n) + np.searchsorted(opens, np.arange(n), side="right") \
            * (size - 1)
        prefix_nodes = rows[row_of_step]
        # prefix noise restarts every block: noise(t) = noise(t - lowbit(j)) + node(t)
        noise = np.empty((n, rows.shape[1]))
        counts = popcount(j)
        single = counts == 1
        noise[single] = prefix_nodes[single]
        for k in np.unique(counts[~single]):  # parents have fewer bits: done before
            idx = np.flatnonzero(counts == k)
            parent = idx - lowbit(j[idx])
            before = parent < 0  # the parent step was taken before this call: the state
            for i, p in zip(idx[before], parent[before], strict=True):
                noise[i] = self._prefix_before(level_noise, start + 1 + p) + prefix_nodes[i]
            idx, parent = idx[~before], parent[~before]
            noise[idx] = noise[parent] + prefix_nodes[idx]
        opened = block[opens[0]] if opens.size else block[-1] + 1  # first block opened here
        old = np.flatnonzero((block >= 1) & (block < opened))  # in the state's block
        if old.size:
            noise[old] = state["prev_suffix"][j[old]] + noise[old]
        if opens.size:  # suffix nodes of every block closed in this call, batched
            first = row_of_step[opens] - (size - 1)
            suffix = self._suffix_noise(rows[first[:, None] + np.arange(size - 1)[None, :]])
            new = np.flatnonzero(block >= opened)
            noise[new] = suffix[block[new] - opened, j[new]] + noise[new]
            state["prev_suffix"] = suffix[-1].copy()
        # the add loop's state: prefix nodes of the last block (zero where none closed yet
        # if the block opened here)
        last = np.flatnonzero(block == block[-1])
        if off[last[0]] == 0:
            level_noise[:] = 0.0
        levels, latest = np.unique(trailing_zeros(j[last])[::-1], return_index=True)
        level_noise[levels] = prefix_nodes[last[::-1][latest]]  # per level, its last node
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Clean values of every noised node: each step's prefix node, then the right-child
        nodes of every block that has a successor within the stream."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        n, size = len(values), self.block
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        steps = np.arange(1, n + 1)
        j = (steps - 1) % size + 1
        prefix = sums[steps] - sums[steps - lowbit(j)]
        a = np.arange(1, size)
        starts = np.arange(0, n - size, size)  # blocks followed by another block
        lo = (starts[:, None] + a[None, :]).ravel()
        suffix = sums[lo + np.tile(lowbit(a), len(starts))] - sums[lo]
        return np.vstack([prefix, suffix])
