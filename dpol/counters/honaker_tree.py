"""Honaker's variance-reduced online tree (as tensorflow/privacy's EfficientTreeAggregator)."""

from __future__ import annotations

import numpy as np

from dpol.counters._base import Counter
from dpol.counters._bits import set_bits_high_to_low, trailing_zeros
from dpol.counters._secure_release import SecureReleaseMixin
from dpol.counters.binary_tree import prefix_noise

__all__ = ["HonakerTreeCounter", "honaker_level_variances"]


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


class HonakerTreeCounter(SecureReleaseMixin, Counter):
    """Binary tree counter whose node values are re-estimated online (Honaker 2015).

    Every node of the complete tree is noised when it closes, right children included.
    A closing node's estimate is the inverse-variance weighted mean of its own noisy
    value and the sum of its children's estimates; the estimator is unbiased and the
    release at t sums the estimates of the set bits of t, so its variance is
    sum_{bits k of t} v_k < popcount(t). Only estimates of the latest node per level
    are kept: O(d log T) state, tz(t)+1 draws at step t.

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.

    Privacy
    -------
    The noised encoder is the vector of all complete nodes; one element lies in at most
    m = floor(log2 T) + 1 of them (its leaf and its ancestors), each moving by at most
    Δ = 2*bound (replace-one), so its l2 sensitivity is Δ sqrt(m), as for
    :class:`BinaryTreeCounter`; the same calibration (Gaussian: z = 1/mu*(epsilon, delta),
    dp-accounting analytic Gaussian; Laplace and Gamma: basic composition over m nodes)
    applies. The re-estimation is post-processing of the noisy nodes. Sources: the tree
    mechanism's node structure (Dwork, Naor, Pitassi, Rothblum 2010; Chan, Shi, Song 2011,
    the binary mechanism; JKT Alg. 5 here), Honaker 2015 ("Efficient use of differentially
    private binary trees") for the estimator, the analytic Gaussian mechanism (Balle and
    Wang 2018) for z. None of our five papers publishes a calibration for it, so
    ``calibration="paper"`` is refused.

    Secure noise (``noise="secure"`` or ``"secure_laplace"``, see :class:`Counter`):
    elements are rounded to the grid g Z^d, so every node value is an exact grid sum
    S_t - S_{t - 2^k} and the noisy node (value + discrete noise on g Z) is an exact grid
    value in float64 (magnitudes below 2^52 g, checked at construction). The state then
    holds the estimates of the noisy node *values*, and the release at t is the Honaker
    estimate computed from those noisy values only, never S_t + weighted noise: with
    real weights, S_t + sum w_i n_i differs from sum w_i (node_i + n_i) by float
    rounding that depends on the data beyond the noisy nodes. Privacy is therefore
    exactly that of the noisy nodes: the binary tree's sensitivity with the rounding
    inflation, Delta' sqrt(m), Delta' = Delta + g sqrt(d) (replace-one) or Delta +
    g sqrt(d)/2 (add/remove), calibrated by zCDP as in :class:`Counter` (CKS 2020
    Theorem 14). ``run`` is then the ``add`` loop (the exact sampler dominates).

    Examples
    --------
    >>> c = HonakerTreeCounter(8, noise_multiplier=1.0, seed=0)
    >>> v = c.variance(np.array([4, 8])) / c.noise_scale**2
    >>> [round(float(x), 4) for x in v]  # 4/7 and 8/15
    [0.5714, 0.5333]
    """

    # secure mode: releases post-process the noisy nodes (Privacy)
    tags = frozenset({"bit_identical_run", "secure_exact"})
    _strategy = "honaker"

    def _setup_structure(self) -> None:
        self._depth = self.horizon.bit_length()
        self._v = honaker_level_variances(self._depth)
        self._w_own = self._v.copy()  # weight of the node's own noisy value: v_k / 1
        self._w_children = np.zeros(self._depth)
        self._w_children[1:] = self._v[1:] / (2.0 * self._v[:-1])

    @property
    def _levels(self) -> int:
        return self._depth

    def _reset_structure(self) -> None:
        # float noise: estimates of the node noises; secure noise: of the noisy node values
        self._estimate = np.zeros((self._depth, self.dim))
        # secure only: S at the last multiple of 2^k (the start of the next level-k node)
        self._mark = None if self.grid is None else np.zeros((self._depth, self.dim))

    def _node_counts(self, t: np.ndarray) -> np.ndarray:
        flat = np.atleast_1d(t)
        out = np.zeros(flat.shape, dtype=np.float64)
        for k in range(self._depth):
            out += ((flat >> k) & 1) * self._v[k]
        return out.reshape(np.shape(t))

    def _step_noise(self) -> np.ndarray:
        t = self.t
        top = int(trailing_zeros(t))
        rows = self._source.draw(top + 1)
        if self.grid is not None:  # noisy node (t - 2^k, t] = (S_t - S_{t - 2^k}) + noise
            rows += self._sum - self._mark[: top + 1]  # exact: grid values below 2^52 g
            self._mark[: top + 1] = self._sum
        right = rows[0]
        for k in range(1, top + 1):
            left = self._estimate[k - 1].copy()  # a view would be overwritten next line
            self._estimate[k - 1] = right
            right = self._w_own[k] * rows[k] + self._w_children[k] * (left + right)
        self._estimate[top] = right
        acc = np.zeros(self.dim)
        for j in set_bits_high_to_low(t):
            acc = acc + self._estimate[j]
        self._release = acc  # secure: the release itself (SecureReleaseMixin.add)
        return acc

    def _fresh_run_noise(self, n: int) -> np.ndarray:
        steps = np.arange(1, n + 1, dtype=np.int64)
        tz = trailing_zeros(steps)
        offset = np.concatenate([[0], np.cumsum(tz + 1)[:-1]])
        rows = self._source.draw(int((tz + 1).sum()))
        # estimate of the level-k node ending at step e = k' 2^k, vectorized per level
        levels = [rows[offset]]
        for k in range(1, int(tz.max()) + 1):
            ends = np.arange(1, n // 2**k + 1, dtype=np.int64) * 2**k
            children = levels[k - 1]
            own = rows[offset[ends - 1] + k]
            levels.append(self._w_own[k] * own
                          + self._w_children[k] * (children[0::2][: len(ends)]
                                                   + children[1::2][: len(ends)]))
        node = np.empty((n, self.dim))
        for k, est in enumerate(levels):
            closing = np.flatnonzero(tz == k)  # step closes the level-k node number e >> k
            node[closing] = est[(steps[closing] >> k) - 1]
            if est.shape[0]:
                self._estimate[k] = est[-1]
        return prefix_noise(node)

    def node_values(self, values: np.ndarray) -> np.ndarray:
        """Clean values of every complete node, level by level (leaves first)."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        sums = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0)])
        blocks = []
        for k in range(self._depth):
            ends = np.arange(1, len(values) // 2**k + 1) * 2**k
            blocks.append(sums[ends] - sums[ends - 2**k])
        return np.vstack(blocks)

    def _state_arrays(self) -> dict:
        return {"estimate": self._estimate, "mark": self._mark}

    def _set_state_arrays(self, state: dict) -> None:
        self._estimate = np.array(state["estimate"], dtype=np.float64)
        if self.grid is not None:
            self._mark = np.array(state["mark"], dtype=np.float64)
