"""The binary tree (binary counter) strategy: dyadic nodes, each noised once, when it closes."""

from __future__ import annotations

import numpy as np

from dpol.counters.strategies._bits import lowbit, popcount, trailing_zero_count
from dpol.counters.strategies._participation import Participation, tree_sensitivity_sq
from dpol.counters.strategies._strategy import Strategy

__all__ = ["TreeStrategy", "prefix_noise"]


def prefix_noise(node_noise: np.ndarray, start: int = 0,
                 level_prefix: np.ndarray | None = None) -> np.ndarray:
    """Release noise of steps start+1..start+n from the noise of the node each step closes.

    The prefix [1, t] splits into one dyadic node per set bit of t; the node of the
    lowest bit ends at t, the others are exactly those of p = t - lowbit(t). Hence
    ``noise_t = noise_p + node_t``: one addition per step, in the left-to-right order of
    the node sum from the highest bit down, whatever the block size (n = 1 is the
    streaming step).

    Works **in place** and returns ``node_noise``: levels from the top down, one strided
    add each (steps closing a level-k node form a strided slice), with no temporary.

    Parameters
    ----------
    node_noise : array (n, d)
        Row i is the noise of the node that closes at step start+1+i (it covers
        (t - lowbit(t), t]).
    start : int
        Steps already taken before this block.
    level_prefix : array (levels, d), optional
        For ``start > 0``: row k is the release noise of the latest step <= start with k
        trailing zeros; a parent p <= start is the latest such step of its level.

    Examples
    --------
    >>> prefix_noise(np.array([[1.0], [2.0], [4.0], [8.0]])).ravel()  # 1, 2, 2+4, 8
    array([1., 2., 6., 8.])
    """
    n = node_noise.shape[0]
    end = start + n
    # a single step closes one level only: visit just that one (~10 us less per add)
    levels = (trailing_zero_count(end),) if n == 1 else range(end.bit_length() - 1, -1, -1)
    for k in levels:
        half, step = 1 << k, 1 << (k + 1)
        i = (half - start - 1) % step  # first row whose step is half mod step
        if i >= n:
            continue
        parent = start + 1 + i - half
        if parent <= start:  # only the first step of a level can have its parent before
            if parent > 0:
                node_noise[i] = level_prefix[trailing_zero_count(parent)] + node_noise[i]
            i += step
        if i < n:
            node_noise[i::step] += node_noise[i - half:n - half:step]
    return node_noise


def keep_level_prefix(level_prefix: np.ndarray, noise: np.ndarray, start: int) -> None:
    """Leave in ``level_prefix`` what :func:`prefix_noise` needs next: per level k, the
    release noise of the latest step t <= start + n with k trailing zeros, if the block
    ``noise`` (steps start+1 ..) has one."""
    end = start + noise.shape[0]
    if end - start == 1:  # the streaming step: only its own level changes
        level_prefix[trailing_zero_count(end)] = noise[0]
        return
    for k in range(level_prefix.shape[0]):
        last = ((end - (1 << k)) >> (k + 1) << (k + 1)) + (1 << k)  # largest such t <= end
        if start < last <= end:
            level_prefix[k] = noise[last - start - 1]


class TreeStrategy(Strategy):
    """Node (t - 2^k, t], k = trailing zeros of t, noised once when it closes at step t.

    The release at t sums the nodes of the set bits of t; an element lies in at most
    floor(log2 T) + 1 nodes. O(d log T) state; ``correlate`` continues vectorized from any
    state (the binary counter of :class:`~dpol.counters.BinaryTreeCounter`).

    Examples
    --------
    >>> s = TreeStrategy(8)
    >>> state = s.init_state(1)
    >>> s.correlate(state, np.array([[1.0], [2.0], [4.0]]), 0, 3).ravel()  # 1, 2, 2+4
    array([1., 2., 6.])
    """

    name = "tree"
    continues_vectorized = True

    def __init__(self, horizon: int) -> None:
        super().__init__(horizon)
        self.depth = horizon.bit_length()  # levels 0..floor(log2 T)

    @property
    def levels(self) -> int:
        return self.depth

    def _participation_norm_sq(self, participation: Participation) -> float:
        # the level-by-level bound over the binary counter's nodes (a valid bound, not
        # always attained: half the dyadic intervals are no node here)
        return tree_sensitivity_sq(self.horizon, participation, complete=False)

    def variance(self, t: np.ndarray) -> np.ndarray:
        return popcount(t).astype(np.float64)

    def init_state(self, dim: int) -> dict:
        # row k: release noise of the latest step with k trailing zeros (see prefix_noise);
        # the parent t - lowbit(t) of the next steps is always such a latest step
        return {"level_prefix": np.zeros((self.depth, dim))}

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        noise = prefix_noise(rows, start, state["level_prefix"])
        keep_level_prefix(state["level_prefix"], noise, start)
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Clean value of the node closed at each step t: the sum over (t - lowbit(t), t]."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        steps = np.arange(1, len(values) + 1)
        return sums[steps] - sums[steps - lowbit(steps)]
