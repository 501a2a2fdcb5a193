"""The window tree of WDP (Section III): aligned block trees, window-sized noise."""

from __future__ import annotations

import numpy as np

from dpol.counters._bits import lowbit, popcount, set_bits_high_to_low, trailing_zeros
from dpol.counters.strategies._strategy import Strategy

__all__ = ["WindowTreeStrategy"]


class WindowTreeStrategy(Strategy):
    """Blocks of W' = 2^ceil(log2 W) steps, each a complete binary tree (WDP Section III).

    With t = (k-1)W' + j, the release noise is that of the suffix nodes of block k-1
    covering offsets [j, W') plus that of the prefix nodes of block k covering [0, j):
    the noisy dyadic decomposition of the window (t - W', t], at most log2 W' + 1 draws;
    the rest of the prefix sum is exact. Prefix nodes are drawn when they close, the
    W' - 1 suffix nodes of a block when the next block starts (docs/errata.md, WDP-8).
    One element lies in m = min(log2 W', floor(log2 T)) + 1 noised nodes. With W' >= T
    the draws and the noise are those of :class:`~dpol.counters.strategies.TreeStrategy`.
    ``correlate`` on a block of n > 1 steps needs a fresh state.

    Examples
    --------
    >>> s = WindowTreeStrategy(16, 4)
    >>> s.levels, s.variance(np.arange(1, 9)).tolist()  # block 2: suffix + prefix nodes
    (3, [1.0, 1.0, 2.0, 1.0, 3.0, 2.0, 3.0, 1.0])
    """

    name = "window_tree"

    def __init__(self, horizon: int, window: int) -> None:
        super().__init__(horizon)
        self.window = window
        self.height = (window - 1).bit_length()  # W' = 2^h >= W
        self.block = 1 << self.height

    @property
    def levels(self) -> int:
        return min(self.height, self.horizon.bit_length() - 1) + 1

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

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        level_noise = state["level_noise"]
        if n == 1:
            block, off = divmod(start, self.block)
            if off == 0 and block >= 1:
                state["prev_suffix"] = self._suffix_noise(rows[:-1])
                level_noise[:] = 0.0
            j = off + 1
            level_noise[int(trailing_zeros(j))] = rows[-1]
            acc = np.zeros(rows.shape[1])
            for b in set_bits_high_to_low(j):
                acc = acc + level_noise[b]
            return (acc if block == 0 else state["prev_suffix"][j] + acc)[None, :]
        size = self.block
        n_blocks = -(-n // size)
        # draw layout: block 0's prefix rows; then per block b >= 1 the W'-1 suffix rows of
        # block b-1 followed by block b's prefix rows, exactly the add loop's order
        steps = np.arange(1, n + 1, dtype=np.int64)
        block, off = np.divmod(steps - 1, size)
        row_of_step = np.where(block == 0, off, size + (block - 1) * (2 * size - 1)
                               + (size - 1) + off)
        prefix_nodes = rows[row_of_step]
        # prefix noise restarts every block: run the recurrence on the in-block index j
        j = off + 1
        noise = np.empty((n, rows.shape[1]))
        counts = popcount(j)
        single = counts == 1
        noise[single] = prefix_nodes[single]
        for k in range(2, int(counts.max()) + 1):
            idx = np.flatnonzero(counts == k)
            noise[idx] = noise[idx - lowbit(j[idx])] + prefix_nodes[idx]
        if n_blocks > 1:
            first = size + np.arange(n_blocks - 1) * (2 * size - 1)  # suffix rows per block
            suffix_rows = rows[first[:, None] + np.arange(size - 1)[None, :]]
            suffix = self._suffix_noise(suffix_rows)  # (n_blocks-1, W'+1, d)
            later = block >= 1
            noise[later] = suffix[block[later] - 1, j[later]] + noise[later]
            state["prev_suffix"] = suffix[-1].copy()
        # the add loop's state: prefix nodes of the current (last) block
        last = block == block[-1]
        tz_last = trailing_zeros(j[last])
        for k in range(self.height + 1):
            closed = np.flatnonzero(tz_last == k)
            level_noise[k] = prefix_nodes[last][closed[-1]] if closed.size else 0.0
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
