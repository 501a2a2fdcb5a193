"""Non-private projection-free bandit convex optimisation (ENV Algorithm 1 without noise)."""

from __future__ import annotations

from dpol.counters import BinaryTreeCounter, Counter
from dpol.learners._api import Accepts
from dpol.learners._bandit import BanditFrankWolfeBase

__all__ = ["BanditFrankWolfe"]


class BanditFrankWolfe(BanditFrankWolfeBase):
    """ENV's PrivateBandit with exact batch sums: the non-private baseline (ask/tell).

    Draw for draw ``PrivateBanditFrankWolfe(..., epsilon=inf)`` with the same seed, without
    its ``NonPrivateWarning``; regret O(T^(3/4) n^(1/2) L D) (ENV Lemma 3.1).

    Parameters
    ----------
    domain, horizon, lipschitz, loss_bound, mode, inner_ball, center, batch_size, zeta, eta
        As :class:`~dpol.learners.private_bandit_frank_wolfe.PrivateBanditFrankWolfe`.
    neighbouring, seed
        Its only privacy keywords (:attr:`accepts`: no target, no noise), as there.

    Privacy
    -------
    None: exact batch sums (``privacy.epsilon`` is inf); (0, 0) when T <= 2 leaves a
    single batch and nothing data-dependent is played.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.sets import Simplex
    >>> learner = BanditFrankWolfe(Simplex(3), horizon=100, seed=0)
    >>> x = learner.ask(); learner.tell(float(x @ [0.2, 0.5, 0.9]))
    >>> learner.t, learner.batch_size, learner.n_batches
    (1, 10, 10)
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    _tags = frozenset({"bandit"})
    #: no privacy target: only ``neighbouring`` and ``seed`` (:class:`~dpol.learners.Accepts`)
    accepts = Accepts(noises=())

    def _build_counter(self) -> Counter | None:
        if self.n_releases == 0:
            return None
        return self._make_counter(BinaryTreeCounter, noise_multiplier=0.0)
