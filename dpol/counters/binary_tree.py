"""The binary tree mechanism: PrivateSum (JKT Alg. 5), TreeMech (KNJ Alg. 4), TreeBasedAgg (ENV)."""

from __future__ import annotations

import math

import numpy as np  # noqa: F401 (doctests)

from dpol._validation import fail
from dpol.counters._base import Counter
from dpol.counters.strategies import PaddedTreeStrategy, TreeStrategy
from dpol.counters.strategies.tree_strategy import prefix_noise

__all__ = ["BinaryTreeCounter", "prefix_noise"]


class BinaryTreeCounter(Counter):
    """Private prefix sums by the binary tree (binary counter) mechanism.

    Node (t - 2^k, t], k = trailing zeros of t, is noised once when it closes; the
    release at t sums the nodes of the set bits of t (popcount(t) noises). One draw per
    step, O(d log T) state (JKT Algorithm 5; KNJ Algorithm 4; ENV Algorithms 3-5).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.
    padded : bool
        ENV's TreeBasedAgg (Alg. 4): every release carries the same number of noise draws,
        ceil(log2 T) (1 at T = 1), by adding fresh padding draws (post-processing, free).

    Privacy
    -------
    Replace-one (``add_remove`` halves Δ). Sensitivity: an element lies in at most m =
    floor(log2 T) + 1 nodes and moves each by at most Δ = 2*bound: Δ sqrt(m) in l2
    (docs/errata.md, JKT-4: 2R not R, m levels not log T). Gaussian, tight: std z Δ
    sqrt(m), z = 1/mu*(epsilon, delta), exact and adaptive (Gaussian-DP composition).
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
    """

    _paper_noises = ("gaussian", "laplace")  # JKT Alg. 5, ENV Thm 2.3
    # releases add node noises with integer weights (secure noise is exact)
    tags = frozenset({"bit_identical_run", "secure_exact", "continues_vectorized"})
    _strategy_class = TreeStrategy  # or PaddedTreeStrategy: the same row of noises

    def __init__(self, horizon: int, dim: int = 1, *, padded: bool = False, **kwargs) -> None:
        if not isinstance(padded, bool):
            raise fail("padded", "be a bool", padded)
        self.padded = padded
        super().__init__(horizon, dim, **kwargs)

    def _make_strategy(self) -> TreeStrategy:
        return (PaddedTreeStrategy if self.padded else TreeStrategy)(self.horizon)

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        from dpol.accounting import presets

        if self.noise_kind.approximate:  # gaussian (paper noises: gaussian, laplace)
            sigma = presets.jkt_private_sum_sigma(eps, self.delta, self.horizon, self.bound)
            return sigma, "JKT Alg. 5 / Lemma 6 sigma"
        scale = presets.env_tree_laplace_scale(eps, self.horizon, math.sqrt(self.dim) * self.bound)
        return scale, "ENV Theorem 2.3 Laplace scale"

    def _params(self) -> dict:
        return {**super()._params(), "padded": self.padded}
