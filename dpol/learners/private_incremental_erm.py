"""PrivIncERM: a private batch ERM solver re-run every tau steps (KNJ Mechanism 1, Thm 3.1)."""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._seeding import resolve_rng, spawn_seeds
from dpol._validation import check_choice, check_int, fail
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import knj_mechanism1_split
from dpol.errors import PaperCalibrationWarning
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.learners._linear import pointwise_loss, split_loss
from dpol.learners.private_frank_wolfe import PrivateFrankWolfe
from dpol.learners.private_projected_sgd import PrivateProjectedSGD
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["SOLVERS", "PrivateIncrementalERM", "default_tau"]

#: the named solvers of :class:`PrivateIncrementalERM` (its ``solver`` argument)
SOLVERS = ("sgd", "bst", "frank-wolfe")


def default_tau(horizon: int, dim: int, epsilon: float) -> int:
    """KNJ Theorem 3.1(1) (convex, BST14 solver): ``tau = ceil((T d)^(1/3) / eps^(2/3))``,
    at most T (T not divisible by tau is allowed: docs/errata.md, KNJ-4).

    Examples
    --------
    >>> default_tau(1000, 10, 1.0), default_tau(1000, 10, float("inf"))
    (22, 1)
    """
    if math.isinf(epsilon):
        return 1
    return max(1, min(horizon, math.ceil((horizon * dim) ** (1 / 3) / epsilon ** (2 / 3))))


class PrivateIncrementalERM(OnlineLearner):
    """KNJ Mechanism 1: every tau steps, solve the ERM on the whole prefix privately.

    At t = j tau the model ``theta_t = A(z_1..z_t)`` of a private batch solver A is
    released; between calls it stays fixed. Before the first call it is the
    data-independent ``P_C(0)`` (Mechanism 1's theta_0 = 0 may lie outside C:
    docs/errata.md, KNJ-4).

    Parameters
    ----------
    dim : int
    loss : LinearLoss or Regularized(LinearLoss, alpha)
        The per-example loss of the ERM (its bounds enforced by clipping).
    domain : ConvexSet
        C.
    horizon : int
    tau : int, optional
        Period; default :func:`default_tau` (Theorem 3.1(1)); 1 re-solves every step.
    solver : str or solver object
        One of :data:`SOLVERS`: ``"sgd"`` (:class:`PrivateProjectedSGD`, full batch),
        ``"bst"`` (one sampled example per step, BST14 Alg. 1), ``"frank-wolfe"``
        (:class:`PrivateFrankWolfe`, polytopes; Theorem 3.1(3)); or an object with
        ``fit``, ``calibrate``, ``privacy_events(sizes, scales, delta)`` and, for a
        published calibration, ``has_paper`` / ``paper_sigma``.
    solver_options : dict, optional
        Keywords for the named solver (``steps``, ``iterations``, ``noise``, ...).
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md): replace-one only (the solvers' relation);
        ``noise="secure"`` with ``solver="sgd"`` and tight calibration.

    Privacy
    -------
    Replace-one (KNJ Definition 4; n = t public at every call), one stream element, which
    enters at most l = floor(T/tau) calls; releases between calls are copies.
    Sensitivity: the solver's per step (``"sgd"``: 2L, plus the rounding g sqrt(p) for
    secure noise; ``"bst"``: 2nL on the sampled example; Frank-Wolfe: its scores').
    ``calibration="tight"``: one noise scale for all calls, the smallest whose every step
    the solver's accountant certifies at (epsilon, delta) (Gaussian DP; subsampled-Gaussian
    RDP, Wang-Balle-Kasiviswanathan 2019; zCDP). Paper: KNJ's split eps' = eps / (2
    sqrt((2T/tau) ln(2/delta))), delta' = delta tau / (2T) per call (advanced composition,
    Theorem A.4, :func:`~dpol.accounting.presets.knj_mechanism1_split`), with a
    ``PaperCalibrationWarning`` when the calls exceed epsilon. ``privacy`` composes the
    calls' events adaptively. Derivation: docs/derivations/incremental_erm.md.

    Examples
    --------
    >>> from dpol.losses import SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)) / 2; y = np.clip(X @ [0.5, -0.5, 0.1], -1, 1)
    >>> m = PrivateIncrementalERM(3, loss=SquaredLoss(), domain=L2Ball(3), horizon=200,
    ...                           epsilon=1.0, delta=1e-5, tau=50, seed=0)
    >>> w = m.run(X, y).weights
    >>> len(np.unique(w, axis=0)), m.n_calls_, m.privacy.epsilon
    (4, 4, 1.0)
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    #: replace-one only: the solvers' sensitivities are derived for KNJ's replace-one
    #: neighbours, n public
    accepts = Accepts(noises=("gaussian", "secure"), neighbourings=("replace_one",))

    def __init__(self, dim: int, *, loss: object, domain: object, horizon: int,
                 tau: int | None = None, solver: object = "sgd",
                 solver_options: dict | None = None, mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        data, _ = split_loss(loss, need_alpha=False)
        super().__init__(dim, horizon=horizon, x_bound=data.x_bound, y_bound=data.y_bound,
                         **privacy)
        if domain is None or not hasattr(domain, "project") or domain.dim != dim:
            raise fail("domain", f"be a convex set of dim {dim} with a projection", domain)
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0", self.delta)
        self.noise_kind.check_calibration(self.calibration)
        self.loss, self.domain = loss, domain
        self.tau = default_tau(self.horizon, dim, self.epsilon) if tau is None else \
            check_int("tau", tau, low=1)
        if self.tau > self.horizon:
            raise fail("tau", f"be <= horizon = {self.horizon}", self.tau)
        self.solver = self._make_solver(solver, dict(solver_options or {}))
        self.sizes = [j * self.tau for j in range(1, self.horizon // self.tau + 1)]
        self._scales = self._calibrate()
        self._events = self._solver_events()
        self._warn_paper()
        self._rng = resolve_rng(spawn_seeds(self.seed, 1)[0])
        self._X = np.empty((self.horizon, dim))
        self._y = np.empty(self.horizon)
        self._theta = domain.project(np.zeros(dim))
        self.n_calls_ = 0

    def _make_solver(self, solver: object, options: dict) -> object:
        if isinstance(solver, str):
            name = check_choice("solver", solver, SOLVERS)
            if self.noise_kind.secure and name != "sgd":
                raise fail("noise", f"be 'gaussian' with solver={name!r} (secure noise: "
                           "solver='sgd'; see Privacy)", self.noise)
            if name == "frank-wolfe":
                return PrivateFrankWolfe(self.loss, self.domain, **options)
            if "noise" in options:
                raise fail("solver_options", "not hold 'noise' for this solver (use the "
                           "noise keyword)", options["noise"])
            return PrivateProjectedSGD(self.loss, self.domain, noise=self.noise,
                                       sampling="one" if name == "bst" else "full", **options)
        if not all(hasattr(solver, a) for a in ("fit", "calibrate", "privacy_events")):
            raise fail("solver", "be 'sgd', 'bst', 'frank-wolfe' or an object with fit, "
                       "calibrate and privacy_events", solver)
        if self.noise_kind.secure and getattr(solver, "noise", None) != self.noise:
            raise fail("solver", f"have noise={self.noise!r} when the learner's noise is "
                       f"{self.noise!r}", solver)
        return solver

    def split(self) -> tuple[float, float]:
        """KNJ's per-call budget (eps', delta') (:func:`knj_mechanism1_split`)."""
        return knj_mechanism1_split(self.epsilon, self.delta, self.horizon, self.tau)

    def _calibrate(self) -> list[float]:
        """The noise scale of each call (class Privacy)."""
        if not self.is_private:
            return [0.0] * len(self.sizes)
        if self.calibration == "tight":
            return [self.solver.calibrate(self.sizes, self.epsilon, self.delta)] * len(
                self.sizes)
        eps_c, delta_c = self.split()
        paper = self.solver.paper_sigma if getattr(self.solver, "has_paper", False) else None
        return [paper(n, eps_c, delta_c) if paper is not None else
                self.solver.calibrate([n], eps_c, delta_c) for n in self.sizes]

    def _solver_events(self) -> tuple[MechanismEvent, ...]:
        if not self.is_private:
            return (MechanismEvent(dp_accounting.NonPrivateDpEvent(), self.neighbouring,
                                   horizon=self.horizon, name="solver without noise"),)
        return tuple(self.solver.privacy_events(self.sizes, self._scales, self.delta))

    def _warn_paper(self) -> None:
        """A published per-call calibration is stated, never trusted: warn if the calls
        it noises certify less than epsilon together."""
        eps = compose_guarantee(self._events, self.delta).epsilon
        if eps > self.epsilon * (1 + 1e-9):
            warnings.warn(f"the {self.calibration} calibration of the {len(self.sizes)} "
                          f"solver calls gives only ({eps:.4g}, {self.delta:g})-DP, not "
                          f"epsilon={self.epsilon:g}", PaperCalibrationWarning, stacklevel=3)

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The solver's mechanisms in every call (class Privacy), one event per call."""
        return self._events

    @property
    def weights(self) -> np.ndarray:
        return self._theta.copy()

    def _learn(self, x: np.ndarray, y: float) -> None:
        t = self.t_
        self._X[t - 1], self._y[t - 1] = x, y
        if t % self.tau == 0:
            j = t // self.tau - 1
            self._theta = np.asarray(self.solver.fit(self._X[:t], self._y[:t], self._scales[j],
                                                     self._rng, self._theta), dtype=float)
            self.n_calls_ += 1

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        data, alpha = split_loss(self.loss, need_alpha=False)
        return pointwise_loss(data, alpha, np.broadcast_to(w, X.shape), X, y)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        data, alpha = split_loss(self.loss, need_alpha=False)
        return pointwise_loss(data, alpha, W, X, y)
