"""NW: private online regularised least squares in an RKHS (Nie & Wang 2017), sound releases."""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, as_vector, check_choice, check_int, check_real, fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.events import MechanismEvent
from dpol.accounting.mechanism import Mechanism
from dpol.errors import HorizonExceededError, PaperCalibrationWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._kernel_sensitivity import (
    check_t0,
    position_weights,
    release_sensitivities,
    transcript_mu,
    transcript_rho,
)
from dpol.learners._kernels import FeatureMap, Kernel, on_ball
from dpol.learners.postprocess import ReleaseAverage
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["MODES", "PrivateKernelRegression"]

MODES = ("random_features", "query_points", "published_scalar")  #: the ``mode`` values


class PrivateKernelRegression(OnlineLearner):
    """Online kernel least squares (NW eq. 3) with a private release after every step.

    f_{t+1} = f_t - eta_t [(f_t(x_t) - y_t) K_{x_t} + lambda_t f_t], f_0 = 0, eta_t =
    (t + t0)^-theta, lambda_t = (t + t0)^-(1 - theta). The t-th element yields f_t.

    Parameters
    ----------
    dim : int
    horizon : int
    mode : {"random_features", "query_points", "published_scalar"}
        The release after step t (``weights``). ``random_features``: w~_t = w_t + N(0,
        s_t^2 I_D) on D features phi; ``predict_one(x)`` = phi(x) . M_t clipped to
        ``y_bound``, M_t the releases' inverse-variance-weighted mean (or ``postprocess``).
        ``query_points``: f_t(U) + N(0, s_t^2 I_q) at public points U, predicting the
        nearest one. ``published_scalar`` (NW Theorem 1, **not private**, reproduction
        only): f_t + b_t, b_t ~ Laplace(C_t / epsilon).
    kernel : str or Kernel
        A :class:`~dpol.learners.Kernel` or its name with default parameters; its ball
        is ``x_bound``'s.
    theta : float in (1/2, 1)
        The final noise std is of order T^(1 - 3 theta / 2): it vanishes for theta > 2/3.
    t0 : float, optional
        t0^theta >= kappa^2 + 1; default the smallest integer that does.
    n_features : int, optional
        D for Gaussian random Fourier features (even, default 256); the polynomial
        kernel uses its exact feature map (leave None).
    feature_seed : int
        **Public** seed of the random features, independent of the noise ``seed``.
    query_points : array (q, dim)
        Public, data-independent points U; required by the two other modes.
    x_bound, y_bound : float
        R and M: ||x|| <= R, |y| <= M (clipped, counted). kappa = sup sqrt(K(x, x)).
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md); ``noise="secure"`` in the two private modes.

    Privacy
    -------
    Replace-one, one stream element (``add_remove`` refused: no input is a null element).
    Sensitivity: a change at step s moves release t > s by at most Delta_t(s) (NW
    (15)-(16), Lemma 2, recomputed exactly in :mod:`dpol.learners._kernel_sensitivity`;
    docs/errata.md, NW-2); ``sensitivity(t)`` = max_{s < t} Delta_t(s), times
    sqrt(lambda_max(K(U, U))) for ``query_points``. Calibration, tight only (NW-3): the
    releases are one Gaussian mechanism over the transcript, s_t = sens_t J /
    mu*(epsilon, delta), adaptive inputs included (GDP filter, Smith & Thakurta 2022).
    Secure noise: grid rounding adds g_t sqrt(n) to each Delta_t(s), rho-zCDP (CKS 2020,
    Theorem 14; Renyi filter, Feldman & Zrnic 2021). ``published_scalar`` is not DP
    (NW-1): it warns, epsilon = inf. ``privacy`` is derived from :meth:`privacy_events`.
    Derivation: docs/derivations/kernel_regression.md.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, (400, 1)); y = 0.8 * np.sin(2 * np.pi * X[:, 0])
    >>> from dpol.learners import Kernel
    >>> m = PrivateKernelRegression(1, horizon=400, kernel=Kernel("gaussian", bandwidth=0.1),
    ...                             n_features=64, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.run(X, y).weights.shape, m.privacy.epsilon, m.kappa
    ((400, 64), 1.0, 1.0)
    """

    #: replace-one only (a kernel step has no null element); ``calibration="paper"``
    #: only with ``mode="published_scalar"`` (NW publishes no other)
    accepts = Accepts(noises=("gaussian", "secure"), neighbourings=("replace_one",))

    def __init__(self, dim: int, *, horizon: int, mode: str = "random_features",
                 kernel: str | Kernel = "gaussian", theta: float = 0.8, t0: float | None = None,
                 n_features: int | None = None, feature_seed: int = 0,
                 query_points: object = None, x_bound: float = 1.0, y_bound: float = 1.0,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        super().__init__(dim, horizon=horizon, x_bound=x_bound, y_bound=y_bound, **privacy)
        self.mode = check_choice("mode", mode, MODES)
        if self.noise_kind.secure and self.mode == "published_scalar":
            raise fail("noise", "be 'gaussian' with mode='published_scalar' (one Laplace "
                       "draw, not private anyway: docs/errata.md, NW-1)", self.noise)
        self.theta = check_real("theta", theta, low=0.5, high=1.0, low_open=True,
                                high_open=True)
        self.kernel = on_ball(kernel, self.x_bound)
        self.kappa = self.kernel.kappa
        self.t0 = check_t0(t0, self.kappa, self.theta)
        if self.calibration == "paper" and self.mode != "published_scalar":
            raise fail("calibration", f"be 'tight' with mode={self.mode!r} (NW publishes only "
                       "the scalar mechanism, mode='published_scalar', which is not "
                       "private: docs/errata.md, NW-1)", self.calibration)
        if self.mode == "random_features":
            self._phi = FeatureMap(self.kernel, dim, n_features, feature_seed)
            self.n_outputs = self._phi.n_features
            self._w = np.zeros(self.n_outputs)
            self.query_points = None
            self._average = ReleaseAverage(self.n_outputs)  # the model (``mode``)
        else:
            if query_points is None:
                raise fail("query_points", f"be given with mode={self.mode!r}", None)
            self.query_points = as_matrix("query_points", query_points, dim)
            self.n_outputs = self.query_points.shape[0]
            self._fU = np.zeros(self.n_outputs)
            self._centres = np.zeros((min(self.horizon, 1024), dim))
            self._coef = np.zeros(min(self.horizon, 1024))
            self._scale, self._n_centres = 1.0, 0
        if self.is_private and self.mode != "published_scalar" and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian noise over the whole transcript)", self.delta)
        self._rng = np.random.default_rng(spawn_seeds(self.seed, 1)[0])
        self._sens = self._sensitivities()
        self._grids = np.zeros(self.horizon)  # g_t of secure noise (0: float noise)
        self._scales = self._calibrate()
        self._released = np.zeros(self.n_outputs)  # f_0 = 0: data-independent, no noise
        self._offset = 0.0  # b_t of published_scalar

    # ------------------------------------------------------------------ calibration
    def _sensitivities(self) -> np.ndarray:
        """l2 sensitivity of release t = 1..T (sup-norm C_t for the scalar mechanism)."""
        if self.mode == "published_scalar":  # NW's own C_t: the mode reproduces the paper
            m = np.arange(self.horizon, dtype=float) + self.t0  # t - 1 + t0
            k, big_m, th = self.kappa, self.y_bound, self.theta
            if self.calibration == "paper":
                return 2.0 * (k**2 + 1.0) * k * big_m * m ** (1.0 - 2.0 * th)  # NW (12)
            return 2.0 * k**2 * big_m * (k**2 * m ** (1.0 - 2.0 * th) + m**-th)  # NW (16)
        self._m, self._h = position_weights(self.horizon, self.t0, self.theta, self.kappa,
                                            self.y_bound)
        if self.mode == "query_points":
            lam = float(np.linalg.eigvalsh(self.kernel(self.query_points, self.query_points))[-1])
            if lam <= 0.0:  # K(U, U) = 0: f_t(U) = 0 for every stream
                raise fail("query_points", "give a nonzero Gram matrix K(U, U)", lam)
            self._h = self._h * math.sqrt(lam)
        return release_sensitivities(self._m, self._h)

    def _calibrate(self) -> np.ndarray:
        """Noise scale of release t = 1..T (class Privacy); zeros without privacy."""
        if not self.is_private:
            return np.zeros(self.horizon)
        if self.mode == "published_scalar":
            slip = (f"; the printed C_t is kappa = {self.kappa:g} times smaller than the "
                    "proven bound (docs/errata.md, NW-2)" if self.calibration == "paper"
                    and self.kappa > 1.0 else "")
            warnings.warn("mode='published_scalar' adds one Laplace draw to the whole function "
                          "(NW Theorem 1): differences f(u1) - f(u2) of the release are "
                          "noise-free, so it is not differentially private (epsilon = inf, "
                          f"docs/errata.md, NW-1){slip}", PaperCalibrationWarning, stacklevel=3)
            return self._sens / self.epsilon
        kind = self.noise_kind  # the transcript: one Gaussian (or zCDP) mechanism
        z = calibrate(noise_events(kind, self.neighbouring), self.epsilon, self.delta)
        if kind.secure:  # its grids inflate the sensitivities: the zCDP of the transcript
            return self._secure_calibrate(z)
        joint = transcript_mu(self._m, self._h, self._sens)  # J of the class Privacy
        return self._sens * joint / (1.0 / z)  # Delta_t J / mu*

    def _secure_calibrate(self, z_1: float) -> np.ndarray:
        """s_t and the grids g_t of secure noise (class Privacy)."""
        z = z_1 * transcript_mu(self._m, self._h, self._sens)  # as for float noise
        self._grids = self.noise_kind.grids(z * self._sens, self._sens, self.n_outputs)
        base = self._sens + self._grids * math.sqrt(self.n_outputs)
        # rho scales as 1/z^2: rho(z base) = 1/(2 z_1^2) (any grid is sound)
        return z_1 * math.sqrt(2.0 * self._rho(base)) * base

    def _rho(self, stds: np.ndarray) -> float:  # zCDP of the secure transcript
        return transcript_rho(self._m, self._h, stds, self._grids * math.sqrt(self.n_outputs))

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The noise on all T releases, from the scales really used (``published_scalar``,
        ``epsilon=inf`` or a zero std: not private, releases without sufficient noise)."""
        if not self.is_private or self.mode == "published_scalar" or min(self._scales) <= 0:
            event = dp_accounting.NonPrivateDpEvent()  # (a zero std: a noiseless twin)
        elif self.noise_kind.secure:  # the transcript's zCDP, grids included (class Privacy)
            event = dp_accounting.ZCDpEvent(self._rho(self._scales))
        else:  # one Gaussian over the whole transcript: sensitivity mu at unit noise
            event = self.noise_kind.event(transcript_mu(self._m, self._h, self._scales), 1.0)
        return (MechanismEvent(event, self.neighbouring, horizon=self.horizon,
                               name=f"{type(self).__name__}[{self.mode}]"),)

    def _check_step(self, t: object) -> int:
        t = check_int("t", t, low=1)
        if t > self.horizon:
            raise fail("t", f"be <= horizon = {self.horizon}", t)
        return t

    def sensitivity(self, t: int) -> float:
        """l2 sensitivity of the release after step t (sup-norm C_t for the scalar one)."""
        return float(self._sens[self._check_step(t) - 1])

    def _release_noise_variance(self, steps: np.ndarray) -> np.ndarray:
        """s_t^2, the noise variance of each weight (``random_features``; else nan)."""
        var = self._scales[np.asarray(steps) - 1] ** 2
        return var if self.mode == "random_features" else np.full(var.shape, np.nan)

    def noise_std(self, t: int) -> float:
        """Gaussian std per coordinate (Laplace scale for ``published_scalar``) at step t."""
        return float(self._scales[self._check_step(t) - 1])

    # ------------------------------------------------------------------ model
    @property
    def weights(self) -> np.ndarray:
        return self._released.copy()

    def features(self, X: object) -> np.ndarray:
        """The public feature map phi of ``random_features`` mode on rows of X, shape (n, D):
        ``features(X) @ weights`` evaluates a release (post-processing)."""
        if self.mode != "random_features":
            raise fail("mode", "be 'random_features' to have a feature map", self.mode)
        return self._phi(as_matrix("X", X, self.dim))

    def _clean_value(self, x: np.ndarray) -> float:
        """f_t(x) of the exact kernel expansion (no noise)."""
        n = self._n_centres
        if n == 0:
            return 0.0
        return self._scale * float(self.kernel(x[None, :], self._centres[:n])[0]
                                   @ self._coef[:n])

    def _nearest(self, X: np.ndarray) -> np.ndarray:
        U = self.query_points
        d2 = (np.einsum("ij,ij->i", X, X)[:, None] - 2.0 * X @ U.T
              + np.einsum("ij,ij->i", U, U)[None, :])
        return np.argmin(d2, axis=1)

    def predict_one(self, x: object, *, raw: bool = False) -> float:
        """The model at x (``mode``), x clipped to x_bound as in training; raw: last release."""
        xv = as_vector("x", x, self.dim)
        xv = self._clip(xv[None, :], np.zeros(1))[0][0]
        if self.mode == "random_features":
            out = self._phi(xv[None, :])[0] @ (self._released if raw else self.model_weights)
            return float(out if raw else np.clip(out, -self.y_bound, self.y_bound))
        if self.mode == "query_points":
            return float(self._released[self._nearest(xv[None, :])[0]])
        return self._clean_value(xv) + self._offset

    # ------------------------------------------------------------------ steps
    def _exact_step(self, x: np.ndarray, y: float, t: int) -> float:
        """Step t of the kernel expansion (lazy global scale); returns f_{t-1}(x)."""
        k = self._n_centres
        if k == self._coef.size:  # grow the expansion's storage by doubling
            cap = min(2 * k, self.horizon)
            self._centres = np.vstack([self._centres, np.zeros((cap - k, self.dim))])
            self._coef = np.concatenate([self._coef, np.zeros(cap - k)])
        f_x = self._clean_value(x)
        m = t - 1 + self.t0
        step, shrink = m**-self.theta * (f_x - y), 1.0 - 1.0 / m
        self._scale *= shrink
        self._centres[k], self._coef[k] = x, -step / self._scale
        self._n_centres = k + 1
        self._fU = shrink * self._fU - step * self.kernel(x[None, :], self.query_points)[0]
        return f_x

    def _advance(self, X: np.ndarray, y: np.ndarray, start: int) -> tuple:
        """Steps start+1 .. start+n: releases before each step, predictions, the model's."""
        n = X.shape[0]
        clean = np.empty((n, self.n_outputs))
        f_x = np.empty(n)
        if self.mode == "random_features":
            F, w = self._phi(X), self._w
            for i in range(n):
                m = start + i + self.t0
                w = (1.0 - 1.0 / m) * w - m**-self.theta * (F[i] @ w - y[i]) * F[i]
                clean[i] = w
            self._w = w
        else:
            for i in range(n):
                f_x[i] = self._exact_step(X[i], float(y[i]), start + i + 1)
                clean[i] = self._fU
        scales = self._scales[start:start + n]
        offsets = np.zeros(n)
        if self.is_private and self.mode == "published_scalar":
            offsets = self._rng.laplace(0.0, 1.0, size=n) * scales
            released = clean + offsets[:, None]
        elif self.is_private:  # secure: each row on its own grid g_t (class Privacy)
            released = self.noise_kind.noisy(clean, scales[:, None], self._rng,
                                             self._grids[start:start + n])
        else:
            released = clean
        before = np.vstack([self._released[None, :], released[:-1]])
        model = None
        if self.mode == "random_features":
            preds = np.einsum("ij,ij->i", F, before)
            model = np.clip(self._average.extend(
                before, released[-1], self._sens[start:start + n] ** -2.0,
                self._release_noise_variance(np.arange(start + 1, start + n + 1)), F,
                self.postprocess), -self.y_bound, self.y_bound)
        elif self.mode == "query_points":
            preds = before[np.arange(n), self._nearest(X)]
        else:
            preds = f_x + np.concatenate([[self._offset], offsets[:-1]])
        self._released, self._offset = released[-1].copy(), float(offsets[-1])
        return before, preds, model

    def _learn(self, x: np.ndarray, y: float) -> None:
        self._advance(x[None, :], np.array([y]), self.t_ - 1)

    def run(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """Learn from a whole stream; the same releases as the ``learn_one`` loop.

        ``comparator``: an array (dim,), the linear predictor x . u (as the other learners),
        or a callable h(X) -> (n,) predictions (e.g. the regression function). Losses:
        1/2 (p - y)^2, p the last release's (``predictions``; ``model_predictions``: the model's).
        """
        X = as_matrix("X", X, self.dim)
        y = as_vector("y", y, X.shape[0])
        if comparator is not None and not callable(comparator):
            comparator = as_vector("comparator", comparator, self.dim)
        if self.t_ + X.shape[0] > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: {X.shape[0]} elements after "
                                       f"{self.t_} exceed horizon={self.horizon}")
        X, y, clipped = self._clip(X, y)
        ref = None
        if isinstance(comparator, np.ndarray):
            ref = self._loss_value(comparator, X, y)
        elif comparator is not None:
            ref = 0.5 * (as_vector("comparator(X)", comparator(X), X.shape[0]) - y) ** 2
        self.n_clipped_ += clipped
        before, preds, model = self._advance(X, y, self.t_)
        self.t_ += X.shape[0]
        losses = 0.5 * (preds - y) ** 2
        return Trace(weights=before, losses=losses, predictions=preds,
                     final_weights=self.weights, privacy=self.privacy,
                     n_clipped=self.n_clipped_, model_predictions=model,
                     regret=None if ref is None else np.cumsum(losses - ref))

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """1/2 (x . w - y)^2 of a linear comparator w (dim,)."""
        return 0.5 * (X @ w - y) ** 2
