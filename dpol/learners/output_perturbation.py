"""POCP: private online convex programming by output perturbation (JKT Alg. 1 and Alg. 7)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from dpol._seeding import resolve_rng
from dpol._validation import check_choice, check_real, fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import jkt_doubling_beta, jkt_pocp_beta
from dpol.errors import PaperCalibrationWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["SCHEDULES", "OutputPerturbation"]

#: the noise schedules of :class:`OutputPerturbation` (its ``schedule`` argument)
SCHEDULES = ("fixed", "doubling", "anytime")


def _identity(w: np.ndarray) -> np.ndarray:
    """Projection onto R^d (a module function, so learners pickle)."""
    return w


class OutputPerturbation(OnlineLearner):
    """Privatize any online algorithm whose clean iterates have sensitivity <= lam / t.

    The clean algorithm runs untouched (its iterates never see the noise); every release
    is ``w_hat_{t+1} = Proj_C(w_{t+1} + b_{t+1})`` with fresh b_{t+1} ~ N(0, s_t^2 I).

    Parameters
    ----------
    dim : int
    step : callable ``step(w, t, x, y) -> w_next``, optional
        The clean update after the t-th element (1-based); or define ``_clean_step``.
    lam : float
        lambda_A: sup over neighbouring streams of t ||w_{t+1} - w'_{t+1}||, so release
        t has l2 sensitivity lam / t (a subclass may state less in :meth:`sensitivity`).
    project : callable, optional
        Euclidean projection onto C applied to releases (identity when None).
    loss : callable ``loss(w, X, y) -> array``
        The loss suffered, for traces.
    horizon : int
    schedule : str
        One of :data:`SCHEDULES`: ``fixed`` (Alg. 1, s_t = beta / t), ``doubling``
        (Alg. 7, beta_t constant on epochs 2^k <= t < 2^(k+1), each at (epsilon, delta) /
        log2 T, JKT Section 6.2) or ``anytime`` (not in the
        paper, private for every stream length; docs/errata.md, JKT-2).
    w0 : array, optional
        The data-independent first iterate (default: the projection of 0).
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md); ``noise="secure"`` needs tight calibration.

    Privacy
    -------
    Replace-one (``add_remove`` halves lam where the subclass says so), one stream
    element. Sensitivity: the clean iterates never see the noise, so release t is a
    Gaussian mechanism of sensitivity Delta_t = lam / t (or the subclass's). Tight: s_t =
    z Delta_t, z = sqrt(n) / mu*(epsilon, delta) over the n releases (Gaussian DP
    composition, adaptive too); anytime: s_t = Delta_t / (mu* sqrt(w_t)), w_t = 1 / (2 t
    (1 + ln t)^2). Paper: JKT Alg. 1's beta (Theorem 1) or Alg. 7's beta_t (Theorem 13),
    with a ``PaperCalibrationWarning`` when above epsilon. Secure noise adds the grid's
    rounding g_t sqrt(d) to Delta_t (zCDP, CKS 2020, Theorem 14). ``privacy`` is derived
    from :meth:`privacy_events`. Derivation: docs/derivations/output_perturbation.md.

    Examples
    --------
    Projected gradient descent, step 1/t, on the ridge loss over the unit ball (lam = 4):

    >>> def step(w, t, x, y):
    ...     w = w - ((x @ w - y) * x + w) / t
    ...     return w / max(1.0, float(np.linalg.norm(w)))
    >>> m = OutputPerturbation(2, lam=4.0, horizon=100, epsilon=1.0, delta=1e-5, step=step,
    ...                        loss=lambda w, X, y: 0.5 * (y - X @ w) ** 2, seed=0)
    >>> X = np.random.default_rng(0).normal(size=(100, 2)) / 2
    >>> m.run(X, X @ [0.5, -0.5]).weights.shape, round(m.noise_std(100), 4)
    ((100, 2), 1.4923)
    >>> event = m.dp_event()  # 100 releases, each of noise multiplier t s_t / lam = 37.3
    >>> event.count, round(event.event.noise_multiplier, 1), str(m.privacy).split(";")[0]
    (100, 37.3, '(1, 1e-05)-DP, replace_one, unit: one stream element')
    """

    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`)
    accepts = Accepts(noises=("gaussian", "secure"))

    def __init__(self, dim: int, *, lam: float, horizon: int, step: Callable | None = None,
                 project: Callable | None = None, loss: Callable | None = None,
                 schedule: str = "fixed", w0: object = None, x_bound: float = 1.0,
                 y_bound: float = 1.0, mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        super().__init__(dim, horizon=horizon, x_bound=x_bound, y_bound=y_bound, **privacy)
        self.lam = check_real("lam", lam, low=0.0, low_open=True)
        self.schedule = check_choice("schedule", schedule, SCHEDULES)
        if self.schedule == "anytime" and self.calibration == "paper":
            raise fail("calibration", "be 'tight' with schedule='anytime' (no published "
                       "formula)", "paper")
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian output perturbation)", self.delta)
        self.noise_kind.check_calibration(self.calibration)
        self._step_fn = step
        self._project = project if project is not None else _identity
        self._loss_fn = loss
        self._w = self._project(np.zeros(dim) if w0 is None else np.asarray(w0, float)).copy()
        self._released = self._w.copy()
        self._rng = resolve_rng(self.seed)
        self._grids = np.zeros(self.horizon)  # g_t of secure noise (0: float noise)
        self._stds = self._noise_stds()
        self._events = self._release_events()
        self._warn_paper()

    # ------------------------------------------------------------------ calibration
    def _noised_steps(self) -> np.ndarray:
        """The steps t (1-based) after which a data-dependent iterate is released."""
        return np.arange(1, self.horizon + 1)

    def _noise_stds(self) -> np.ndarray:
        """s_t for every step t = 1..horizon (0 where nothing data-dependent is released).

        Tight: one noise multiplier z from :func:`dpol.accounting.calibrate` on the
        releases' events at z (:func:`dpol.accounting.noise_events` of the noise kind:
        each noised release is one Gaussian, secure: 1/(2 z^2)-zCDP, mechanism of
        multiplier z relative to its sensitivity; anytime: the multiplier of release t is
        z / sqrt(w_t) with sum_t w_t <= 1 over every length, so one mechanism of
        multiplier z bounds every prefix), then s_t = z Delta_t a_t with
        Delta_t = :meth:`sensitivity` (secure: plus the grid rounding) and the schedule's
        a_t (1, or 1 / sqrt(w_t) anytime). Paper: the published betas
        (:meth:`_paper_stds`).
        """
        stds = np.zeros(self.horizon)
        steps = self._noised_steps()
        if not self.is_private or steps.size == 0:
            return stds
        lam, div = self.lam, self._divisors(steps)  # Delta_t = lam / div_t
        if self.calibration == "paper":
            stds[steps - 1] = self._paper_stds(steps)
            return stds
        count = 1 if self.schedule == "anytime" else steps.size
        z = calibrate(noise_events(self.noise_kind, self.neighbouring, count=count),
                      self.epsilon, self.delta)
        anytime = (1.0 / (2.0 * steps * (1.0 + np.log(steps)) ** 2)
                   if self.schedule == "anytime" else None)  # w_t, sum_t w_t <= 1
        if self.noise_kind.secure:  # on the kind's grid, whose rounding adds g_t sqrt(d)
            zs = z / np.sqrt(anytime) if anytime is not None else np.full(steps.size, z)
            sens = lam / div
            grids = self.noise_kind.grids(zs * sens, sens, self.dim)
            self._grids[steps - 1] = grids
            stds[steps - 1] = zs * (sens + grids * math.sqrt(self.dim))
        elif anytime is not None:  # s_t = lam / (div_t mu sqrt(w_t)), mu = 1/z
            stds[steps - 1] = lam / (div * (1.0 / z) * np.sqrt(anytime))
        else:
            # the doubling schedule only matters for unknown T; with a horizon, tight
            # calibration of the fixed schedule is the smallest valid noise
            stds[steps - 1] = z * lam / div
        return stds

    def sensitivity(self, t: int) -> float:
        """Delta_t: the most a changed element moves the clean iterate released after
        step t (class Privacy); lam / t here, a subclass's own where it is smaller."""
        return float(self.lam / self._divisors(np.array([t]))[0])

    def _divisors(self, steps: np.ndarray) -> np.ndarray:
        """div_t with Delta_t = lam / div_t for an array of steps t (1-based): t."""
        return steps

    def _paper_stds(self, steps: np.ndarray) -> np.ndarray:
        """s_t of the published betas: JKT Alg. 1 (fixed) or Alg. 7 (doubling)."""
        eps, delta, lam = self.epsilon, self.delta, self.lam
        if self.schedule == "fixed":
            if self.horizon < 2:
                raise fail("horizon", "be >= 2 for calibration='paper' (JKT's c divides "
                           "by ln T)", self.horizon)
            return jkt_pocp_beta(eps, delta, self.horizon, lam) / steps
        # JKT Section 6.2: for a constant target (eps, delta), Alg. 7 runs with
        # eps / log2 T and delta / log2 T (Theorem 13 then claims (3 eps, ...))
        scale = max(1.0, math.log2(self.horizon))
        return np.array([jkt_doubling_beta(eps / scale, delta / scale, int(t), lam) / t
                         for t in steps])

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The releases' noise (class Privacy): one Gaussian (or, secure, zCDP) event per
        noised release, equal ones self-composed; none when nothing depends on the data."""
        return self._events

    def _release_events(self) -> tuple[MechanismEvent, ...]:
        steps = self._noised_steps()
        if steps.size == 0:  # e.g. GIGA's warm-up covers the horizon: nothing data-dependent
            return ()
        if not self.is_private:
            event = dp_accounting.NonPrivateDpEvent()
        elif self.noise_kind.secure:  # Delta_t on the grid: both neighbours' iterates rounded
            sens = self.lam / self._divisors(steps) + self._grids[steps - 1] * math.sqrt(self.dim)
            event = self.noise_kind.composed_event(sens, self._stds[steps - 1])
        else:  # z_t = s_t div_t / lam (this rounding: the figures the guarantees were stated by)
            event = self.noise_kind.composed_event(
                self.lam, self._stds[steps - 1] * self._divisors(steps))
        return (MechanismEvent(event, self.neighbouring, horizon=self.horizon,
                               name=f"{type(self).__name__} output noise"),)

    def _warn_paper(self) -> None:
        """The published betas are stated, never trusted: warn if they certify less."""
        eps = compose_guarantee(self._events, self.delta).epsilon
        if eps > self.epsilon * (1 + 1e-9):
            warnings.warn(f"JKT's published beta gives only ({eps:.4g}, {self.delta:g})-DP "
                          f"here, not epsilon={self.epsilon:g}", PaperCalibrationWarning,
                          stacklevel=4)

    def noise_std(self, t: int) -> float:
        """Per-coordinate noise std of the release after step t."""
        return float(self._stds[t - 1])

    def _release_noise_variance(self, steps: np.ndarray) -> np.ndarray:
        """s_t^2 per coordinate, independent across releases (class Privacy), capped by
        diam(C)^2 / d: projecting onto C (which holds the clean iterate) moves a release
        by at most diam(C). Public: used by the model's shrinkage
        (:mod:`dpol.learners.postprocess`)."""
        var = self._stds[np.asarray(steps) - 1] ** 2
        domain = getattr(self, "domain", None)
        if domain is not None and math.isfinite(domain.diameter):
            var = np.minimum(var, domain.diameter**2 / self.dim)
        return var

    # ------------------------------------------------------------------ steps
    @property
    def weights(self) -> np.ndarray:
        return self._released.copy()

    def _clean_step(self, x: np.ndarray, y: float) -> None:
        if self._step_fn is None:
            raise fail("step", "be given (or a subclass must define _clean_step)", None)
        self._w = np.asarray(self._step_fn(self._w.copy(), self.t_, x, y), dtype=float)

    def _learn(self, x: np.ndarray, y: float) -> None:
        self._clean_step(x, y)
        std = self._stds[self.t_ - 1]
        if std == 0.0:  # non-private twin, or a data-independent (warm-up) iterate
            self._released = self._w.copy()
            return
        # secure: round(w) + g Y on the grid g, exact in float64 (class Privacy)
        self._released = self._project(self.noise_kind.noisy(
            self._w, std, self._rng, self._grids[self.t_ - 1]))

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        if self._loss_fn is None:
            raise fail("loss", "be given to compute losses", None)
        return self._loss_fn(w, X, y)
