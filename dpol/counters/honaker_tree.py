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
    value and the sum of its children's estimates; the release at t sums the estimates of
    the set bits of t (unbiased, variance < popcount(t)). O(d log T) state.

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.

    Privacy
    -------
    Replace-one (Δ = 2*bound; add/remove halves it). Sensitivity: an element lies in at
    most m = floor(log2 T) + 1 nodes, so the node vector's is Δ sqrt(m), as for
    :class:`BinaryTreeCounter`, with its tight calibration (Gaussian: z = 1/mu*(epsilon,
    delta); Laplace, Gamma: basic composition over m nodes); ``calibration="paper"`` is
    refused (none published). The re-estimation is post-processing. Secure noise releases
    estimates computed from the exact grid values of the noisy nodes only, sensitivity
    inflated by the rounding (zCDP, CKS 2020, Theorem 14). Derivation:
    docs/derivations/tree_counters.md.

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
