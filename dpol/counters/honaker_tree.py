"""Honaker's variance-reduced online tree (as tensorflow/privacy's EfficientTreeAggregator)."""

from __future__ import annotations

import numpy as np

from dpol.counters._base import Counter
from dpol.counters._secure_release import SecureReleaseMixin
from dpol.counters.strategies import HonakerStrategy
from dpol.counters.strategies.honaker_strategy import honaker_level_variances

__all__ = ["HonakerTreeCounter", "honaker_level_variances"]


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
    tags = frozenset({"bit_identical_run", "secure_exact", "continues_vectorized"})
    _strategy_class = HonakerStrategy
    _secure_keys = ("mark",)

    def _make_strategy(self) -> HonakerStrategy:
        return HonakerStrategy(self.horizon)

    def _reset_secure(self) -> None:
        # secure only: S at the last multiple of 2^k (the start of the next level-k node)
        self._mark = None if self.grid is None else np.zeros((self.levels, self.dim))

    def _noisy_values(self, rows: np.ndarray) -> np.ndarray:
        """Secure mode: noisy node (t - 2^k, t] = (S_t - S_{t - 2^k}) + noise, k <= tz(t)."""
        if self.grid is None:
            return rows
        top = rows.shape[0]  # the step's leaf and the nodes it closes
        rows += self._sum - self._mark[:top]  # exact: grid values below 2^52 g
        self._mark[:top] = self._sum
        return rows
