"""Honaker's variance-reduced online tree (as tensorflow/privacy's EfficientTreeAggregator)."""

from __future__ import annotations

import numpy as np

from dpol.counters.strategies._bits import set_bits_high_to_low, trailing_zeros
from dpol.counters.strategies._participation import Participation, tree_sensitivity_sq
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.tree_strategy import prefix_noise

__all__ = ["HonakerStrategy", "honaker_level_variances"]


def honaker_level_variances(depth: int) -> np.ndarray:
    """Variance of the level-k node estimate, in units of one node's noise variance.

    v_0 = 1 (a leaf is its own noisy value); a level-k node combines its own noisy value
    (variance 1) with the sum of its two children's estimates (variance 2 v_{k-1}) by
    inverse-variance weights, so v_k = 1 / (1 + 1 / (2 v_{k-1})) = 2^k / (2^(k+1) - 1):
    1, 2/3, 4/7, 8/15, ...

    Examples
    --------
    >>> honaker_level_variances(4).round(4)
    array([1.    , 0.6667, 0.5714, 0.5333])
    """
    v = np.ones(depth)
    for k in range(1, depth):
        v[k] = 1.0 / (1.0 + 1.0 / (2.0 * v[k - 1]))
    return v


class _PrefixFromEstimates:
    """``level_prefix`` of :func:`prefix_noise` read from Honaker's state: the release
    noise of the latest step p <= start with k trailing zeros is the sum of the current
    estimates of the levels of p's set bits, high to low (the ``add`` loop's order); no
    later node of those levels has closed when p is the parent of a step after start."""

    def __init__(self, estimate: np.ndarray, start: int) -> None:
        self.estimate, self.start = estimate, start

    def __getitem__(self, k: int) -> np.ndarray:
        p = ((self.start - (1 << k)) >> (k + 1) << (k + 1)) + (1 << k)
        acc = np.zeros(self.estimate.shape[1])
        for j in set_bits_high_to_low(p):
            acc = acc + self.estimate[j]
        return acc


class HonakerStrategy(Strategy):
    """Every complete dyadic node noised when it closes, re-estimated online (Honaker 2015).

    A closing node's estimate is the inverse-variance mean of its noisy value and its
    children's estimates; the release at t sums those of the set bits of t (variance <
    popcount(t)). One element lies in at most floor(log2 T) + 1 nodes. O(d log T) state;
    ``correlate`` takes node noises or, in secure mode, noisy node values alike.

    Examples
    --------
    >>> s = HonakerStrategy(8)
    >>> [round(float(x), 4) for x in s.variance(np.array([4, 8]))]  # 4/7 and 8/15
    [0.5714, 0.5333]
    """

    name = "honaker"
    continues_vectorized = True

    def __init__(self, horizon: int) -> None:
        super().__init__(horizon)
        self.depth = horizon.bit_length()
        self.level_variances = honaker_level_variances(self.depth)
        v = self.level_variances
        self._w_own = v.copy()  # weight of the node's own noisy value: v_k / 1
        self._w_children = np.zeros(self.depth)
        self._w_children[1:] = v[1:] / (2.0 * v[:-1])

    @property
    def levels(self) -> int:
        return self.depth

    def _participation_norm_sq(self, participation: Participation) -> float:
        # every complete dyadic node: the level bound, exact when b is a power of two
        return tree_sensitivity_sq(self.horizon, participation, complete=True)

    def variance(self, t: np.ndarray) -> np.ndarray:
        flat = np.atleast_1d(t)
        out = np.zeros(flat.shape, dtype=np.float64)
        for k in range(self.depth):
            out += ((flat >> k) & 1) * self.level_variances[k]
        return out.reshape(np.shape(t))

    def init_state(self, dim: int) -> dict:
        return {"estimate": np.zeros((self.depth, dim))}

    def draws(self, start: int, n: int) -> int:
        return int((trailing_zeros(np.arange(start + 1, start + n + 1)) + 1).sum())

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        estimate = state["estimate"]
        end = start + n
        steps = np.arange(start + 1, end + 1, dtype=np.int64)
        tz = trailing_zeros(steps)
        offset = np.concatenate([[0], np.cumsum(tz + 1)[:-1]])  # each step's leaf row
        # per level k: (first end, estimates of the level-k nodes ending in (start, end]);
        # a leaf is its own estimate, a level-k node mixes its own noisy value with its
        # children's estimates, the left child ending before the block only for the first
        levels = [(start + 1, rows[offset])]
        for k in range(1, self.depth):
            size, half = 1 << k, 1 << (k - 1)
            first = (start // size + 1) * size
            if first > end:
                break
            ends = np.arange(first, end + 1, size)
            below_first, below = levels[-1]
            right = below[(ends - below_first) // half]
            left_at = (ends - half - below_first) // half
            left = below[np.maximum(left_at, 0)]
            if left_at[0] < 0:  # the left child closed before this block: in the state
                left[0] = estimate[k - 1]
            own = rows[offset[ends - start - 1] + k]
            levels.append((first, self._w_own[k] * own + self._w_children[k] * (left + right)))
        node = np.empty((n, rows.shape[1]))
        for k, (first, est) in enumerate(levels):
            closing = np.flatnonzero(tz == k)
            node[closing] = est[(steps[closing] - first) >> k]
        noise = prefix_noise(node, start, _PrefixFromEstimates(estimate, start))
        for k, (_, est) in enumerate(levels):  # the latest node of each level, as add leaves
            estimate[k] = est[-1]
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Clean values of every complete node, level by level (leaves first)."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        blocks = []
        for k in range(self.depth):
            ends = np.arange(1, len(values) // 2**k + 1) * 2**k
            blocks.append(sums[ends] - sums[ends - 2**k])
        return np.vstack(blocks)
