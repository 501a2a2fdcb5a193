"""POL: private offline learning through averaged IGD (JKT Section 5, Alg. 6, Thm 5-6)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._seeding import resolve_rng
from dpol._validation import check_real
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import jkt_pol_beta
from dpol.errors import PaperCalibrationWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.learners._linear import (
    SENSITIVITY_SLACK,
    implicit_step,
    pointwise_loss,
    split_loss,
)
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.kinds import KINDS

__all__ = ["PrivateOfflineLearner"]


class PrivateOfflineLearner(OnlineLearner):
    """Run IGD on f(w) = loss(w) + alpha/2 ||w||^2 over the stream, release one noisy average.

    alpha = excess / ||x*||^2 (Alg. 6). Nothing data-dependent is released before the
    horizon: ``weights`` is the data-independent start (0) until the last element, then
    the private output Proj_C(mean(w_2..w_{T+1}) + N(0, beta^2 I)).

    Parameters
    ----------
    dim : int
    loss : LinearLoss
        Convex, L-Lipschitz on C (no regulariser: POL adds its own).
    x_star_norm : float
        A bound on the norm of the comparator; C is the ball of that radius.
    excess : float
        epsilon_g, the target excess risk; fixes alpha.
    horizon : int
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md); ``noise="secure"`` with tight calibration.

    Privacy
    -------
    Replace-one (add/remove: L). Sensitivity: by JKT Lemma 4 (tight form)
    ||w_{t+1} - w'_{t+1}|| <= min(2r, 2L / (alpha (t + 1))), so the average has Delta =
    (1/T) sum_{s=2}^{T+1} min(2r, 2L/(alpha s)), L the data loss's Lipschitz constant.
    Erratum (docs/errata.md, JKT-6): eq. (37) drops the 1/alpha (real epsilon about 79 at
    a claimed 1 for alpha = 0.01). Calibration: one Gaussian of noise multiplier beta /
    Delta; tight: beta = Delta / mu*(eps, delta); paper: eq. (37) verbatim, with a
    ``PaperCalibrationWarning`` and its real epsilon. Secure noise: the average is
    rounded to a grid g Z^d and discrete Gaussian noise added, Delta' = Delta + g sqrt(d),
    rho = Delta'^2 / (2 beta^2) (CKS 2020, Theorem 14). ``privacy`` is that event
    (:meth:`privacy_events`).

    Examples
    --------
    >>> from dpol.losses import LogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)) / 2; y = np.sign(X[:, 0])
    >>> m = PrivateOfflineLearner(2, loss=LogisticLoss(), x_star_norm=2.0, excess=0.1,
    ...                           horizon=300, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.run(X, y).final_weights.shape, str(m.privacy).split(";")[0]
    ((2,), '(1, 1e-05)-DP, replace_one, unit: one stream element')
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    accepts = Accepts(noises=("gaussian", "secure"))

    def __init__(self, dim: int, *, loss: object, x_star_norm: float, excess: float,
                 horizon: int, mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        KINDS[privacy["noise"]].check_calibration(privacy["calibration"])
        data, _ = split_loss(loss, need_alpha=False)
        super().__init__(dim, horizon=horizon, x_bound=data.x_bound, y_bound=data.y_bound,
                         **privacy)
        from dpol.sets import L2Ball

        self.loss = loss
        self.x_star_norm = check_real("x_star_norm", x_star_norm, low=0.0, low_open=True)
        self.excess = check_real("excess", excess, low=0.0, low_open=True)
        self._data = data
        self.alpha = self.excess / self.x_star_norm**2
        self.domain = L2Ball(dim, self.x_star_norm)
        self.lipschitz = data.lipschitz(self.domain)
        self.sensitivity = self._sensitivity() + SENSITIVITY_SLACK / horizon
        self.grid = 0.0  # of secure noise (0: float noise)
        self.beta = self._calibrate()
        self._warn_paper()
        self._rng = resolve_rng(self.seed)
        self._w = np.zeros(dim)
        self._sum = np.zeros(dim)
        self._released = np.zeros(dim)

    def _sensitivity(self) -> float:
        s = np.arange(2, self.horizon + 2, dtype=float)
        per = self.replace_factor * self.lipschitz / (self.alpha * s)
        return float(np.minimum(2.0 * self.x_star_norm, per).sum() / self.horizon)

    def _calibrate(self) -> float:
        """beta, the std of the output noise (class Privacy)."""
        if not self.is_private:
            return 0.0
        if self.calibration == "paper":
            return jkt_pol_beta(self.epsilon, self.delta, self.horizon, self.lipschitz,
                                self.alpha, self.x_star_norm)
        kind = self.noise_kind  # the one noisy average: Gaussian, or its zCDP twin
        z = calibrate(noise_events(kind, self.neighbouring), self.epsilon, self.delta)
        if kind.secure:  # on the kind's grid, whose rounding adds g sqrt(d) to Delta
            self.grid = kind.grid(z * self.sensitivity, self.sensitivity, self.dim)
            return z * (self.sensitivity + self.grid * math.sqrt(self.dim))
        return self.sensitivity / (1.0 / z)  # Delta / mu*

    def _warn_paper(self) -> None:
        """Eq. (37) is stated, never trusted: warn if its noise certifies less."""
        real = compose_guarantee(self.privacy_events(), self.delta).epsilon
        if real > self.epsilon * (1 + 1e-9):
            warnings.warn(f"JKT eq. (37) misses 1/alpha: it gives only ({real:.4g}, "
                          f"{self.delta:g})-DP here, not epsilon={self.epsilon:g}",
                          PaperCalibrationWarning, stacklevel=3)

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The one noisy average (class Privacy): a Gaussian of noise multiplier
        beta / Delta, or (secure) a ``ZCDpEvent`` with the grid-inflated sensitivity."""
        if not self.is_private:
            event = dp_accounting.NonPrivateDpEvent()
        else:  # Delta on the grid (none for float noise: g = 0)
            event = self.noise_kind.event(self.sensitivity + self.grid * math.sqrt(self.dim),
                                          self.beta)
        return (MechanismEvent(event, self.neighbouring, horizon=self.horizon,
                               name="PrivateOfflineLearner noisy average"),)

    @property
    def weights(self) -> np.ndarray:
        return self._released.copy()

    def _release_weights(self, steps: np.ndarray) -> np.ndarray:
        """Only the release at the horizon depends on the data: the model's average is
        that release alone (:mod:`dpol.learners.postprocess`)."""
        return np.where(np.asarray(steps) == self.horizon, 1.0, 0.0)

    def _release_noise_variance(self, steps: np.ndarray) -> np.ndarray:
        """beta^2 per coordinate at the horizon, capped by (2 r)^2 / d (the projection
        onto the ball of radius r, which holds the clean average, moves it by <= 2 r)."""
        var = min(self.beta**2, (2.0 * self.x_star_norm) ** 2 / self.dim)
        return np.where(np.asarray(steps) == self.horizon, var, 0.0)

    def _learn(self, x: np.ndarray, y: float) -> None:
        eta = 1.0 / (self.alpha * self.t_)
        self._w = implicit_step(self._data, self.alpha, self._w, x, y, eta,
                                self.x_star_norm)
        self._sum += self._w
        if self.t_ == self.horizon:
            noisy = self._sum / self.horizon
            if self.beta > 0.0:
                noisy = self.noise_kind.noisy(noisy, self.beta, self._rng, self.grid)
            self._released = self.domain.project(noisy)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, 0.0, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return pointwise_loss(self._data, 0.0, W, X, y)
