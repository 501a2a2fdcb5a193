"""PIGD: private implicit gradient descent (JKT Alg. 2, Lemma 4, Theorems 7-8)."""

from __future__ import annotations

import numpy as np

from dpol.accounting.mechanism import Mechanism
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
    horizon, schedule, mechanism, **privacy
        See :class:`OutputPerturbation`.

    Privacy
    -------
    Replace-one (add/remove halves lam). Sensitivity: the prox step contracts by t/(t + 1)
    after the changed step, so release t moves by at most Delta_t = lam / (t + 1), lam =
    2L/alpha, L the data loss's Lipschitz constant on C; attained, and not JKT Lemma 4's
    lam / t (docs/errata.md, JKT-8). Calibration as :class:`OutputPerturbation` with this
    Delta_t (tight: s_t = z lam / (t + 1); paper: JKT Alg. 2's beta_t / t verbatim).
    ``privacy`` is derived from the noised releases' events. Derivation:
    docs/derivations/output_perturbation.md.

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
                 schedule: str = "fixed", mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        self.loss = loss
        self.domain = domain
        self._data, self._alpha = split_loss(loss)
        self._radius = ball_radius(domain)
        lipschitz = self._data.lipschitz(domain)
        factor = 2.0 if privacy["neighbouring"] == "replace_one" else 1.0
        lam = factor * lipschitz / self._alpha + SENSITIVITY_SLACK
        project = None if domain is None else domain.project
        super().__init__(dim, lam=lam, horizon=horizon, project=project, schedule=schedule,
                         x_bound=self._data.x_bound, y_bound=self._data.y_bound, **privacy)

    def _divisors(self, steps: np.ndarray) -> np.ndarray:
        """Delta_t = lam / (t + 1) (class Privacy: the prox's contraction at step t)."""
        return steps + 1

    def _clean_step(self, x: np.ndarray, y: float) -> None:
        eta = 1.0 / (self._alpha * self.t_)
        self._w = implicit_step(self._data, self._alpha, self._w, x, y, eta, self._radius)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, self._alpha, W, X, y)
