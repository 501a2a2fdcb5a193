"""What a bandit learner played and suffered over a run (ENV Algorithm 1; layer L4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpol.accounting.guarantee import PrivacyGuarantee

__all__ = ["BanditTrace"]


@dataclass(frozen=True)
class BanditTrace:
    """What a bandit learner played and observed over a run.

    Attributes
    ----------
    points : array (k, n)
        The points played (queried), one per round.
    iterates : array (k, n)
        The batch centre x~_{R-1} of each round: a Frank-Wolfe iterate, always in D.
    losses : array (k,)
        The observed values f_t(points[t]) (before clipping).
    noisy_sums : array (r, n)
        The prefix sums s~_R the counter released during the run (r batches closed).
    privacy : PrivacyGuarantee
    n_clipped : int
    regret : array (k,) or None
        Cumulative regret against ``comparator`` when one is known.
    comparator : array (n,) or None

    Examples
    --------
    >>> from dpol.learners import PrivateBanditFrankWolfe
    >>> from dpol.sets import Box
    >>> m = PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=100, epsilon=1.0,
    ...                             delta=1e-5, seed=0)  # 10 batches of 10 rounds
    >>> trace = m.run_linear(np.tile([0.5, -0.5], (100, 1)))
    >>> trace.points.shape, trace.noisy_sums.shape, trace.comparator  # last batch unused
    ((100, 2), (9, 2), array([0., 1.]))
    """

    points: np.ndarray
    iterates: np.ndarray
    losses: np.ndarray
    noisy_sums: np.ndarray
    privacy: PrivacyGuarantee
    n_clipped: int
    regret: np.ndarray | None = None
    comparator: np.ndarray | None = None
