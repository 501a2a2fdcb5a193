"""Non-private projection-free bandit convex optimisation (ENV Algorithm 1 without noise)."""

from __future__ import annotations

from dpol.counters import BinaryTreeCounter, Counter
from dpol.learners._api import Accepts
from dpol.learners._bandit import BanditFrankWolfeBase

__all__ = ["BanditFrankWolfe"]


class BanditFrankWolfe(BanditFrankWolfeBase):
    """ENV's PrivateBandit with exact batch sums: the non-private baseline (ask/tell).

    Identical, draw for draw, to ``PrivateBanditFrankWolfe(..., epsilon=inf)`` with the
    same seed (the same code with a zero-noise counter). Its regret is O(T^(3/4) n^(1/2) L D)
    (ENV Lemma 3.1 with zero noise; Garber-Kretzu's non-private rate). It is non-private by
    name, so it does not emit ``NonPrivateWarning``.

    Parameters
    ----------
    domain : object
        The decision set D: anything with ``linear_oracle(c)`` (argmin over D of <c, x>),
        ``dim`` and ``diameter`` (a :mod:`dpol.sets` set, or a
        :class:`~dpol.learners._bandit.LinearOracleDomain`). ``project`` is never called.
    horizon, lipschitz, loss_bound, mode, inner_ball, center, batch_size, zeta, eta
        As :class:`~dpol.learners.private_bandit_frank_wolfe.PrivateBanditFrankWolfe`.
    neighbouring, seed
        Its only privacy keywords (:attr:`accepts`: no target, no noise), as there.

    Privacy
    -------
    None: the batch sums are used exactly (``privacy.epsilon`` is inf). The played points
    depend on every earlier loss value. With a horizon so short that there is a single batch
    (T <= 2), nothing data-dependent is ever played and the guarantee is (0, 0).

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
