"""PIGD: private implicit gradient descent (JKT Alg. 2, Lemma 4, Theorems 7-8)."""

from __future__ import annotations

import numpy as np

from dpol.learners._linear import (
    SENSITIVITY_SLACK,
    ball_radius,
    implicit_step,
    pointwise_loss,
    split_loss,
)
from dpol.learners.output_perturbation import OutputPerturbation

__all__ = ["PrivateIGD"]


class PrivateIGD(OutputPerturbation):
    """Implicit (proximal) gradient descent with output perturbation.

    Clean step: w_{t+1} = argmin_{w in C} 1/2 ||w - w_t||^2 + eta_t f_t(w), eta_t = 1/(alpha t),
    solved to 1e-14 in the margin; release Proj_C(w_{t+1} + b_{t+1}).

    Parameters
    ----------
    dim : int
    loss : Regularized(LinearLoss, alpha)
        f_t(w) = phi(<w, x_t>, y_t) + alpha/2 ||w||^2 with alpha > 0.
    domain : L2Ball or None
        C; None means R^d (then the data loss must be Lipschitz on R^d, e.g. logistic).
    horizon, epsilon, delta, schedule, calibration, neighbouring, seed
        See :class:`OutputPerturbation`.

    Privacy
    -------
    Replace-one: the differing data term moves the prox solution by at most
    ||grad phi - grad phi'|| eta_t / (1 + eta_t alpha) <= 2L / (alpha (t + 1)), and later
    steps contract by t/(t+1) (JKT Lemma 4), so lam = 2L/alpha with L the Lipschitz
    constant of the *data* loss on C (the shared regulariser cancels); add/remove:
    L/alpha. Calibration as :class:`OutputPerturbation` (tight: exact Gaussian DP over
    the horizon releases; paper: JKT Alg. 2 beta, about 5x over-noised). ``privacy`` is
    derived from the events of the noised releases
    (:meth:`OutputPerturbation.privacy_events`: release t a Gaussian of noise multiplier
    t s_t / lam).

    Examples
    --------
    >>> from dpol.losses import LogisticLoss, Regularized
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)) / 2; y = np.sign(X[:, 0] + 0.1)
    >>> m = PrivateIGD(3, loss=Regularized(LogisticLoss(), 0.1), domain=L2Ball(3, 3.0),
    ...                horizon=200, epsilon=1.0, delta=1e-5, seed=0)
    >>> trace = m.run(X, y)
    >>> trace.weights.shape, m.privacy.epsilon
    ((200, 3), 1.0)
    """

    def __init__(self, dim: int, *, loss: object, domain: object = None, horizon: int,
                 epsilon: float, delta: float | None = None, **kwargs) -> None:
        self.loss = loss
        self.domain = domain
        self._data, self._alpha = split_loss(loss)
        self._radius = ball_radius(domain)
        lipschitz = self._data.lipschitz(domain)
        factor = 2.0 if kwargs.get("neighbouring", "replace_one") == "replace_one" else 1.0
        lam = factor * lipschitz / self._alpha + SENSITIVITY_SLACK
        project = None if domain is None else domain.project
        super().__init__(dim, lam=lam, horizon=horizon, epsilon=epsilon, delta=delta,
                         project=project, x_bound=self._data.x_bound,
                         y_bound=self._data.y_bound, **kwargs)

    def _clean_step(self, x: np.ndarray, y: float) -> None:
        eta = 1.0 / (self._alpha * self.t_)
        self._w = implicit_step(self._data, self._alpha, self._w, x, y, eta, self._radius)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, W, X, y)
