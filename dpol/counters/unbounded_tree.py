"""The unbounded tree counter: private prefix sums of a stream with no horizon."""

from __future__ import annotations

import numpy as np  # noqa: F401 (doctests)

from dpol._validation import fail
from dpol.counters._base import Counter
from dpol.counters.strategies.unbounded_tree_strategy import UnboundedTreeStrategy

__all__ = ["UnboundedTreeCounter"]


class UnboundedTreeCounter(Counter):
    """Private prefix sums of an endless stream: binary trees over doubling blocks.

    Steps [2^k, 2^(k+1)) form block k, a binary tree of horizon 2^k whose k + 1 levels
    share one unit of sensitivity (node std sqrt(k + 1) sigma); the release at t sums the
    finished blocks' roots and the dyadic nodes of t's offset in its block
    (:class:`~dpol.counters.strategies.UnboundedTreeStrategy`). sigma is fixed by epsilon
    alone; the variance at t is at most about 1.5 log2(t)^2 sigma^2. State O(d log t).

    Parameters
    ----------
    horizon : None
        Must be None (kept for the common signature); for a known horizon
        :class:`~dpol.counters.BinaryTreeCounter` is tighter.
    dim, bound, noise_multiplier, epsilon, delta, neighbouring, seed, element_sensitivity
        See :class:`dpol.counters.Counter`. Gaussian noise only; ``calibration="tight"``.

    Privacy
    -------
    Replace-one (Delta = 2 bound; add/remove: bound), for every finite prefix at once.
    Sensitivity: an element of block k lies in at most k + 1 nodes of weight
    1 / sqrt(k + 1), so the node vector moves by at most Delta for every k. Calibration:
    one Gaussian mechanism of std z Delta, z = 1/mu*(epsilon, delta), adaptive inputs
    included (each node is noised once). Chan, Shi and Song's hybrid mechanism (2011,
    ACM TISSEC 14(3)) with block k's budget split over its levels. Laplace and secure
    noise are refused (unbounded l1 columns; float64 cannot hold the grid values of
    endless sums). Derivation: docs/derivations/matrix_counters.md.

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
