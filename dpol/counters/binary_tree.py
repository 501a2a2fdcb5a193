"""The binary tree mechanism: PrivateSum (JKT Alg. 5), TreeMech (KNJ Alg. 4), TreeBasedAgg (ENV)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import fail
from dpol.counters._base import Counter
from dpol.counters._bits import lowbit, max_popcount, popcount, trailing_zero_count

__all__ = ["BinaryTreeCounter", "prefix_noise"]


def prefix_noise(node_noise: np.ndarray, start: int = 0,
                 level_prefix: np.ndarray | None = None) -> np.ndarray:
    """Release noise of steps start+1..start+n from the noise of the node each step closes.

    The prefix [1, t] splits into one dyadic node per set bit of t; the node of the
    lowest bit ends at t, the others are exactly those of p = t - lowbit(t). Hence
    ``noise_t = noise_p + node_t``: one addition per step, and the left-to-right order
    of the node sum that a streaming loop uses from the highest bit down, so both give
    identical floats.

    Works **in place** (row i of ``node_noise`` becomes the release noise of step
    start+1+i) and returns ``node_noise``. Steps closing a level-k node (t = 2^k mod
    2^(k+1)) form a strided slice whose parents t - 2^k close higher levels, so levels
    are processed from the top down, one strided add each: no fancy indexing and no
    temporary (profiled: 0.04 s instead of 0.2-0.5 s with index arrays at n = 2^20, d = 10).

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
    for k in range(end.bit_length() - 1, -1, -1):
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


class BinaryTreeCounter(Counter):
    """Private prefix sums by the binary tree (binary counter) mechanism.

    Node (t - 2^k, t], k = trailing zeros of t, is noised once, when it closes at step t,
    and reused ever after; the release at t sums the nodes of the set bits of t, so it
    carries popcount(t) node noises. Only the nodes any release uses are noised: one per
    step, O(d log T) state (JKT Algorithm 5; KNJ Algorithm 4; ENV Theorem 2.3 and
    Algorithms 3-5; in the streaming form of the binary counter).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.
    padded : bool
        ENV's TreeBasedAgg (Alg. 4): every release carries the same number of noise draws,
        ceil(log2 T) (1 at T = 1), by adding fresh padding draws (post-processing, free).

    Privacy
    -------
    Neighbouring relation: replace-one (default; ``add_remove`` halves Δ). One element
    lies in at most m = floor(log2 T) + 1 noised nodes (one per level; the first element
    attains it) and moves each by at most Δ = 2*bound in l2, so the node vector has l2
    sensitivity Δ sqrt(m) (docs/errata.md, JKT-4: 2R not R, m levels not log T).
    Gaussian, tight: one Gaussian mechanism on the node vector, std z Δ sqrt(m) with
    z = 1/mu*(epsilon, delta) from dp-accounting; exact, and valid for adaptively chosen
    elements by Gaussian-DP composition (JKT-4's tight calibration).
    Laplace: per-coordinate scale m sqrt(d) Δ / epsilon (l1 sensitivity, basic composition,
    ENV Thm 2.3 with the level count corrected). Gamma: theta = m Δ / epsilon (WDP Lemma 1).
    ``calibration="paper"``: JKT Alg. 5 / Lemma 6 σ for Gaussian, ENV Thm 2.3 λ for Laplace,
    verbatim; a ``PaperCalibrationWarning`` states the real epsilon when it falls short.

    Examples
    --------
    >>> c = BinaryTreeCounter(8, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run(np.ones(8)).shape
    (8, 1)
    >>> [int(k) for k in c.variance(np.arange(1, 9)) / c.variance(1)]
    [1, 1, 2, 1, 2, 2, 3, 1]
    >>> c.loss()
    12.0
    """

    _paper_noises = ("gaussian", "laplace")  # JKT Alg. 5, ENV Thm 2.3
    # releases add node noises with integer weights (secure noise is exact)
    tags = frozenset({"bit_identical_run", "secure_exact", "continues_vectorized"})
    _strategy = "tree"

    def __init__(self, horizon: int, dim: int = 1, *, padded: bool = False, **kwargs) -> None:
        if not isinstance(padded, bool):
            raise fail("padded", "be a bool", padded)
        self.padded = padded
        super().__init__(horizon, dim, **kwargs)

    def _setup_structure(self) -> None:
        self._depth = self.horizon.bit_length()  # levels 0..floor(log2 T)
        # ENV Alg. 3-4: every release carries d = ceil(log2 T) draws (T = 100 gives 7);
        # at T = 1 the single node already exceeds d = 0
        self._pad_to = max((self.horizon - 1).bit_length(), max_popcount(self.horizon))

    @property
    def _levels(self) -> int:
        return self._depth

    def _reset_structure(self) -> None:
        # row k: release noise of the latest step with k trailing zeros (see prefix_noise);
        # the parent t - lowbit(t) of the next steps is always such a latest step
        self._level_prefix = np.zeros((self._depth, self.dim))

    def _node_counts(self, t: np.ndarray) -> np.ndarray:
        counts = popcount(t).astype(np.float64)
        return np.full_like(counts, self._pad_to) if self.padded else counts

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        from dpol.accounting import presets

        if self.noise_kind.approximate:  # gaussian (paper noises: gaussian, laplace)
            sigma = presets.jkt_private_sum_sigma(eps, self.delta, self.horizon, self.bound)
            return sigma, "JKT Alg. 5 / Lemma 6 sigma"
        scale = presets.env_tree_laplace_scale(eps, self.horizon, math.sqrt(self.dim) * self.bound)
        return scale, "ENV Theorem 2.3 Laplace scale"

    def _step_noise(self) -> np.ndarray:
        # noise_t = noise_p + node_t with p = t - lowbit(t): one addition per step, the
        # same one prefix_noise makes (summing the popcount(t) nodes anew cost ~5 us)
        t = self.t
        node = self._source.draw(1)[0]
        parent = t & (t - 1)
        acc = node if parent == 0 else self._level_prefix[trailing_zero_count(parent)] + node
        self._level_prefix[trailing_zero_count(t)] = acc
        if self.padded:
            acc = acc + self._padding(self._pad_to - int(popcount(t)))
        return acc

    def _padding(self, n: int) -> np.ndarray:
        pad = np.zeros(self.dim)
        for row in self._source.draw(n):
            pad = pad + row
        return pad

    def _fresh_run_noise(self, n: int) -> np.ndarray:
        start = self.t
        if not self.padded:
            noise = prefix_noise(self._source.draw(n), start, self._level_prefix)
        else:
            # per step: the node draw, then pad_to - popcount(t) padding draws
            steps = np.arange(start + 1, start + n + 1, dtype=np.int64)
            n_pad = self._pad_to - popcount(steps)
            first = np.concatenate([[0], np.cumsum(1 + n_pad)[:-1]])
            rows = self._source.draw(int(n + n_pad.sum()))
            nodes = rows[first]
            pad = np.zeros((n, self.dim))
            for k in range(int(n_pad.max(initial=0))):
                has = np.flatnonzero(n_pad > k)
                pad[has] = pad[has] + rows[first[has] + 1 + k]
            noise = prefix_noise(nodes, start, self._level_prefix)
        # leave the state the add loop would: per level, the release noise (before
        # padding) of the latest step with k trailing zeros, if this block has one
        end = start + n
        for k in range(self._depth):
            # the largest t <= end with t = 2^k mod 2^(k+1)
            last = ((end - (1 << k)) >> (k + 1) << (k + 1)) + (1 << k)
            if start < last <= end:
                self._level_prefix[k] = noise[last - start - 1]
        if self.padded:
            noise += pad
        return noise

    def node_values(self, values: np.ndarray) -> np.ndarray:
        """Clean value of the node closed at each step t: the sum over (t - lowbit(t), t]."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        steps = np.arange(1, len(values) + 1)
        return sums[steps] - sums[steps - lowbit(steps)]

    def _state_arrays(self) -> dict:
        return {"level_prefix": self._level_prefix}

    def _set_state_arrays(self, state: dict) -> None:
        self._level_prefix = np.array(state["level_prefix"], dtype=np.float64)

    def _params(self) -> dict:
        return {**super()._params(), "padded": self.padded}
