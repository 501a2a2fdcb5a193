"""The unbounded tree counter: private prefix sums of a stream with no horizon."""

from __future__ import annotations

import numpy as np  # noqa: F401 (doctests)

from dpol._validation import fail
from dpol.counters._base import Counter
from dpol.counters.strategies.unbounded_tree_strategy import UnboundedTreeStrategy

__all__ = ["UnboundedTreeCounter"]


class UnboundedTreeCounter(Counter):
    """Private prefix sums of an endless stream: binary trees over doubling blocks.

    Steps [2^k, 2^(k+1)) form block k, covered by a binary tree of horizon 2^k whose
    k + 1 levels share one unit of sensitivity (node std sqrt(k + 1) sigma); the release
    at t sums the roots of the finished blocks and the dyadic nodes of t's offset in its
    block (:class:`~dpol.counters.strategies.UnboundedTreeStrategy`). No horizon: the
    noise scale sigma is fixed by epsilon alone, and the per-coordinate variance at t is
    sigma^2 (k(k+1)/2 + (k + 1) popcount(t - 2^k + 1)), k = floor(log2 t): at most
    about 1.5 log2(t)^2 sigma^2, O(log^2 t) like the bounded tree's at T = t. State
    O(d log t).

    Parameters
    ----------
    horizon : None
        Must be None (the keyword is kept for the counters' common signature); for a
        known horizon :class:`~dpol.counters.BinaryTreeCounter` is tighter.
    dim, bound, noise_multiplier, epsilon, delta, neighbouring, seed, element_sensitivity
        See :class:`dpol.counters.Counter`. Gaussian noise only; ``calibration="tight"``.

    Privacy
    -------
    Neighbouring relation: replace-one (Delta = 2 bound; add/remove: bound) on streams of any
    length, the guarantee holding for every finite prefix of the releases at once (the
    releases up to t are post-processing of the nodes closed by t). An element of block k
    lies in at most k + 1 nodes, all in block k (its first element in all k + 1), each
    entering the encoder with weight 1 / sqrt(k + 1); changing it by delta (||delta|| <=
    Delta) moves the node vector by at most ||delta|| sqrt((k + 1) / (k + 1)) <= Delta, for
    every k: l2 sensitivity Delta over the infinite stream (the strategy's
    ``column_norm_sq`` is 1; tested by brute force on prefixes). Every node gets i.i.d. N(0,
    sigma^2) in encoder units, so the whole stream is one Gaussian mechanism of sensitivity
    Delta and std sigma = z Delta: mu = 1/z Gaussian DP, valid for adaptively chosen
    elements by Gaussian-DP composition as for :class:`~dpol.counters.BinaryTreeCounter`
    (each node is noised once, when it closes), tight: z = 1/mu*(epsilon, delta) from
    dp-accounting. The construction is the hybrid mechanism of Chan, Shi and Song (2011, ACM
    TISSEC 14(3)), whose logarithmic mechanism (one noisy sum per block) is here the block's
    root, with the budget of block k split evenly over its k + 1 levels so that no horizon
    enters the noise (their epsilon/2 + epsilon/2 split becomes one unit l2 column). Laplace
    noise is refused: the l1 column norm of a block-k element is sqrt(k + 1), unbounded.
    Secure noise is refused as unsound here: an exact release path needs every noisy
    value on a grid g Z finer than the noise (g <= sigma / 2^10), and float64 holds such
    values exactly only below 2^52 g, while the node sums of an endless stream grow like
    t bound (block k's root sums 2^k elements): past t ~ 2^42 sigma / bound the rounding
    would depend on the data; the releases' real weights sqrt(k + 1) rule out the trees'
    integer-weight route as well. A known horizon gives
    :class:`~dpol.counters.BinaryTreeCounter`, which takes secure noise.

    Examples
    --------
    >>> c = UnboundedTreeCounter(epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run(np.ones(10)).shape, c.horizon, c.add(1.0).shape, c.t
    ((10, 1), None, (1,), 11)
    >>> [float(v) for v in c.variance(np.array([1, 2, 4, 6])) / c.variance(1)]
    [1.0, 3.0, 6.0, 9.0]
    """

    tags = frozenset({"bit_identical_run", "continues_vectorized"})
    _strategy_class = UnboundedTreeStrategy

    def __init__(self, horizon: None = None, dim: int = 1, **kwargs) -> None:
        if horizon is not None:
            raise fail("horizon", "be None for UnboundedTreeCounter (use BinaryTreeCounter "
                       "for a known horizon)", horizon)
        super().__init__(None, dim, **kwargs)

    def _make_strategy(self) -> UnboundedTreeStrategy:
        return UnboundedTreeStrategy()
