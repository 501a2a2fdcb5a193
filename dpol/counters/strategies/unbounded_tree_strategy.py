"""The unbounded binary tree: doubling blocks, each a binary tree, for streams of no horizon."""

from __future__ import annotations

import math

import numpy as np

from dpol.counters.strategies._bits import popcount
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.tree_strategy import keep_level_prefix, prefix_noise

__all__ = ["UnboundedTreeStrategy", "block_of"]

#: the l2 weights of the encoder hold for float Gaussian noise only: the l1 column norm of
#: a block-k element is sqrt(k + 1), unbounded over the stream (Laplace); secure noise
#: needs exact grid values, which float64 holds only below 2^52 grid steps, a bound an
#: endless stream passes, and the releases weigh node noises by sqrt(k + 1), no integer
UNBOUNDED_REFUSAL = ("an unbounded tree (Laplace: its l1 column norm grows like "
                     "sqrt(log t); secure: float64 holds grid sums exactly only below 2^52 "
                     "grid steps, which an endless stream passes, and its releases weigh "
                     "node noises by sqrt(k + 1), no integer)")


def block_of(t: int) -> tuple[int, int]:
    """(k, j): step t >= 1 lies in block k = floor(log2 t), [2^k, 2^(k+1)), at offset
    j = t - 2^k + 1 in 1..2^k.

    Examples
    --------
    >>> [block_of(t) for t in (1, 2, 3, 4, 7, 8)]
    [(0, 1), (1, 1), (1, 2), (2, 1), (2, 4), (3, 1)]
    """
    k = t.bit_length() - 1
    return k, t - (1 << k) + 1


class UnboundedTreeStrategy(Strategy):
    """Doubling blocks [2^k, 2^(k+1)), each covered by a binary tree of horizon 2^k.

    Block k's k + 1 levels enter the encoder with weight 1 / sqrt(k + 1), so every column
    has squared norm at most 1 (``column_norm_sq``, no horizon needed). The release at t
    sums the earlier blocks' roots and the dyadic nodes of t's offset j:
    ``variance(t)`` = sum_{k' < k} (k' + 1) + (k + 1) popcount(j) ~ 1.5 log2(t)^2 at most
    (Chan, Shi and Song 2011's hybrid mechanism; docs/derivations/matrix_counters.md).
    O(d log t) state; ``correlate`` continues vectorized from any state.

    Examples
    --------
    >>> s = UnboundedTreeStrategy()
    >>> s.variance(np.arange(1, 9)).tolist()  # 1; 1+2, 1+2; 3+3, 3+3, 3+6, 3+3; 6+4
    [1.0, 3.0, 3.0, 6.0, 6.0, 9.0, 6.0, 10.0]
    >>> s.column_norm_sq(), s.horizon
    (1.0, None)
    """

    name = "unbounded_tree"
    refusal = UNBOUNDED_REFUSAL
    continues_vectorized = True
    unbounded = True

    def __init__(self, horizon: None = None) -> None:
        super().__init__(None)

    @property
    def levels(self) -> int | None:
        return None  # a block-k element lies in k + 1 nodes: no bound over the stream

    def _single_norm_sq(self) -> float:
        return 1.0

    def variance(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        k = np.floor(np.log2(np.maximum(t, 1))).astype(np.int64)
        high = np.right_shift(t, k)  # 1 unless log2 rounded across a power of two
        k += (high >= 2).astype(np.int64) - (high == 0)
        j = t - np.left_shift(1, k) + 1
        return (k * (k + 1) / 2 + (k + 1) * popcount(j)).astype(np.float64)

    def loss(self, reduction: str = "max", participation: object = "single") -> float:
        raise NotImplementedError("an unbounded stream has no horizon to take the max or "
                                  "mean over: use variance(t)")

    def init_state(self, dim: int) -> dict:
        # the finished blocks' roots summed; the current block's level prefixes (the
        # tree's state, rows for levels 0..k of the block opened last)
        return {"base": np.zeros(dim), "level_prefix": np.zeros((1, dim))}

    def restore_state(self, state: dict, dim: int) -> dict:
        return {"base": np.array(state["base"], dtype=np.float64).reshape(dim),
                "level_prefix": np.array(state["level_prefix"],
                                         dtype=np.float64).reshape(-1, dim)}

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        noise = np.empty_like(rows)
        done = 0
        while done < n:
            t = start + done + 1
            k, j = block_of(t)
            size = min(n - done, (1 << k) - j + 1)  # steps left in this block
            seg = rows[done:done + size]
            seg *= math.sqrt(k + 1)  # decode weight of the block's nodes (draws: ours)
            if j == 1:  # a new block: its tree starts empty
                state["level_prefix"] = np.zeros((k + 1, rows.shape[1]))
            tree = prefix_noise(seg, j - 1, state["level_prefix"])
            keep_level_prefix(state["level_prefix"], tree, j - 1)
            noise[done:done + size] = tree + state["base"]
            if j - 1 + size == 1 << k:  # the block's root closed: it joins the base
                state["base"] = state["base"] + tree[-1]
            done += size
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Clean encoder: every node of every block started, weight 1 / sqrt(k + 1), in
        order of closing (the draws' order)."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        steps = np.arange(1, len(values) + 1)
        k = np.array([block_of(int(t))[0] for t in steps])
        j = steps - (1 << k) + 1
        low = j & -j
        return (sums[steps] - sums[steps - low]) / np.sqrt(k + 1)[:, None]
