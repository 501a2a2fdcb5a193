"""PGIGA: private projected online gradient descent (JKT Alg. 3, Lemma 5 with its erratum)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import fail
from dpol.accounting.mechanism import Mechanism
from dpol.learners._linear import SENSITIVITY_SLACK, pointwise_loss, split_loss
from dpol.learners.output_perturbation import OutputPerturbation

__all__ = ["PrivateGIGA"]


class PrivateGIGA(OutputPerturbation):
    """Projected online gradient descent with step 2/(alpha t) and output perturbation.

    Warm-up: the first t_q - 1 iterates are data-independent (the starting point);
    from t_q = ceil(2 L_G^2 / alpha^2) + 1 on, w_{t+1} = Proj_C(w_t - 2/(alpha t) grad f_t(w_t))
    (docs/errata.md, JKT-7: t_q must be an integer, and w_{t_q} = w_{t_q - 1}).

    Parameters
    ----------
    dim : int
    loss : Regularized(LinearLoss, alpha)
    domain : ConvexSet
        Bounded C with a ``project`` (JKT needs a finite diameter).
    horizon, schedule, mechanism, **privacy
        See :class:`OutputPerturbation`.

    Privacy
    -------
    Replace-one (add/remove: lam / 2). Sensitivity (erratum of JKT Lemma 5, docs/errata.md,
    JKT-3): the changed step moves the iterate by at most (2/(alpha tau)) 2L and later
    steps contract, so lam = 4L/alpha, L the data loss's Lipschitz constant on C
    (attained), not the printed 2G/alpha. Calibration: only the n = T - t_q + 1 releases
    from t_q on depend on the data; tight: s_t = z lam / t, z = sqrt(n) / mu*(epsilon,
    delta) (as :class:`OutputPerturbation`); paper: JKT Alg. 3's beta (Theorem 9) with the
    corrected lam, its real epsilon derived. ``privacy`` is those n releases' events
    (none when the warm-up covers the horizon).

    Examples
    --------
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> m = PrivateGIGA(2, loss=Regularized(SquaredLoss(), 1.0), domain=L2Ball(2, 1.0),
    ...                 horizon=100, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.warmup, round(m.lam, 6)
    (9, 8.0)
    """

    def __init__(self, dim: int, *, loss: object, domain: object, horizon: int,
                 schedule: str = "fixed", mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        if domain is None or not hasattr(domain, "project"):
            raise fail("domain", "be a bounded convex set with a projection", domain)
        self.loss = loss
        self.domain = domain
        self._data, self._alpha = split_loss(loss)
        lipschitz = self._data.lipschitz(domain)
        smooth = self._data.smoothness + self._alpha
        #: first step whose update uses the data (t_q of JKT Alg. 3)
        self.warmup = math.ceil(2.0 * smooth**2 / self._alpha**2) + 1
        factor = 2.0 if privacy["neighbouring"] == "replace_one" else 1.0
        lam = 2.0 * factor * lipschitz / self._alpha + SENSITIVITY_SLACK
        super().__init__(dim, lam=lam, horizon=horizon, project=domain.project,
                         schedule=schedule, x_bound=self._data.x_bound,
                         y_bound=self._data.y_bound, **privacy)

    def _noised_steps(self) -> np.ndarray:
        return np.arange(min(self.warmup, self.horizon + 1), self.horizon + 1)

    def _clean_step(self, x: np.ndarray, y: float) -> None:
        if self.t_ < self.warmup:
            return  # data-independent warm-up iterate (JKT Alg. 3, line 1)
        margin = float(x @ self._w)
        grad = float(self._data._dphi(np.array([margin]), np.array([y]))[0]) * x \
            + self._alpha * self._w
        self._w = self.domain.project(self._w - (2.0 / (self._alpha * self.t_)) * grad)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, W, X, y)
