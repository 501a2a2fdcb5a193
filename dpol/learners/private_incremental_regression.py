"""PrivIncReg1: incremental regression from a private gradient function (KNJ Alg. 2, Thm 4.2)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import knj_tree_mech_sigma
from dpol.counters import BinaryTreeCounter, resolve_counter
from dpol.learners._api import Accepts
from dpol.learners._base import OnlineLearner
from dpol.learners._joint_counters import (
    joint_counters,
    joint_events,
    outer_product_sensitivity,
)
from dpol.learners.noisy_proj_grad import (
    noisy_proj_grad,
    npg_bound,
    npg_iterations,
    npg_step_size,
)
from dpol.sets import ConvexSet, L2Ball

__all__ = ["PrivateIncrementalRegression", "l2_ball_quadratic_min"]

#: floats in one block of stacked p x p matrices (about 32 MB)
_BLOCK_FLOATS = 1 << 22


def l2_ball_quadratic_min(A: np.ndarray, b: np.ndarray, radius: float) -> np.ndarray:
    """``argmin_{||theta|| <= R} theta^T A theta - 2 b.theta`` for A PSD, batched and exact.

    A (n, p, p) symmetric (negative eigenvalues clipped to 0), b (n, p). The minimiser is
    ``theta(lam) = V c/(e + lam)`` (A = V diag(e) V^T, c = V^T b), lam = 0 when inside the
    ball, else the root of ``||theta(lam)|| = R`` by bisection; null directions get 0 (the
    minimum-norm minimiser), up to a rounding tolerance.

    >>> l2_ball_quadratic_min(np.eye(2)[None], np.array([[3.0, 4.0]]), 1.0)
    array([[0.6, 0.8]])
    """
    evals, evecs = np.linalg.eigh(A)
    p = A.shape[-1]
    # eigenvalues within rounding of 0 are 0, and so are the components of b along them
    # that are within rounding of 0 (b in the range of A, up to rounding: the exact case)
    evals = np.where(evals > p * 4e-16 * np.abs(evals).max(axis=1, keepdims=True), evals, 0.0)
    c = np.einsum("nji,nj->ni", evecs, b)
    tiny = (evals == 0.0) & (np.abs(c) <= 1e-12 * np.linalg.norm(b, axis=1, keepdims=True))
    c = np.where(tiny, 0.0, c)

    def coef(lam: np.ndarray) -> np.ndarray:
        den = evals + lam[:, None]
        return np.divide(c, den, out=np.where(c == 0.0, 0.0, np.inf), where=den > 0.0)

    def norm(lam: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            return np.sqrt(np.sum(coef(lam) ** 2, axis=1))

    lo = np.zeros(len(b))
    hi = np.linalg.norm(b, axis=1) / radius
    outside = ~(norm(lo) <= radius)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        big = norm(mid) > radius
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    theta = np.einsum("nij,nj->ni", evecs, coef(np.where(outside, hi, 0.0)))
    norms = np.linalg.norm(theta, axis=1)
    over = norms > radius  # rounding only
    theta[over] *= (radius / norms[over])[:, None]
    return theta


class PrivateIncrementalRegression(OnlineLearner):
    """KNJ PrivIncReg1: tree-released sums of x y and x x^T, then projected gradient.

    After each element the released gradient function is ``g_t(theta) = 2 (Q_t theta -
    q_t)``, Q_t and q_t the private prefix sums of x x^T and y x, and the released model
    ``theta_t = NoisyProjGrad(C, g_t, r_t)`` (Appendix B) estimates ``argmin_C sum_{i<=t}
    (y_i - <x_i, theta>)^2``.

    Parameters
    ----------
    dim : int
    domain : ConvexSet
        C (with a projection): L2Ball (ridge), L1Ball (Lasso), Simplex, ...
    horizon : int
    solver : {"npg", "surrogate"}
        ``"npg"``: NoisyProjGrad warm-started at theta_{t-1}, with Proposition B.1's step
        corrected (docs/errata.md, KNJ-3) and r_t of Corollary B.2 in closed form capped
        at ``max_iter`` (KNJ-4); ``bound_`` reports the achieved guarantee.
        ``"surrogate"`` (KNJ-4, not in the paper): minimise the symmetrised, PSD-clipped
        quadratic exactly (L2 ball) or by ``max_iter`` accelerated steps.
    max_iter : int
        Iteration cap per step.
    beta : float
        Failure probability in alpha'_t (utility only).
    x_bound, y_bound : float
        ||x|| and |y| bounds (KNJ: 1); larger inputs are clipped and counted.
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md). Counter of both sums: KNJ's TreeMech,
        ``binary_tree``, by default.

    Privacy
    -------
    Replace-one (KNJ's event-level neighbours; add/remove halves the sensitivities), one
    stream element. Sensitivity of the stacked element (x x^T, x y): sqrt(2 X^4 + 2 X^2
    Y^2 + Y^4 / 2) under replace-one (2 X Y if Y^2 > 2 X^2; ``outer_product_sensitivity``,
    docs/errata.md, KNJ-2), sqrt(X^4 + X^2 Y^2) under add/remove, in K = floor(log2 T) + 1
    tree nodes (KNJ-1). Tight: one Gaussian mechanism of std s sqrt(K) / mu*(epsilon,
    delta) on both counters (Gaussian DP, adaptive); secure noise adds the grids' rounding
    to s (zCDP). Paper (tree only): KNJ's TreeMech sigma (Alg. 4) per tree, with a
    ``PaperCalibrationWarning`` when the exact epsilon exceeds epsilon. The solvers are
    post-processing; ``privacy`` is the counters' joint events (a window W < horizon
    gives window DP). Derivation: docs/derivations/incremental_regression.md.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)) / 2; y = np.clip(X @ [0.5, -0.5, 0.2], -1, 1)
    >>> m = PrivateIncrementalRegression(3, domain=L2Ball(3), horizon=300, epsilon=1.0,
    ...                                  delta=1e-5, seed=0)
    >>> trace = m.run(X, y)
    >>> trace.final_weights.shape, m.privacy.epsilon, bool(m.bound_ > 0)
    ((3,), 1.0, True)
    """

    #: capabilities (:data:`dpol.learners._api.TAGS`)
    _tags = frozenset({"least_squares"})
    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`)
    accepts = Accepts(noises=("gaussian", "secure"), counter="binary_tree", window=True)

    SOLVERS = ("npg", "surrogate")

    #: a least-squares learner: its post-processed predictions are clipped to y_bound
    #: (:func:`dpol.learners.postprocess.label_bound`)
    least_squares = True

    @property
    def element_bounds(self) -> tuple[float, float]:
        """(X, Y): the bounds on ||x|| (the features') and |y| its counters' elements
        x x^T, y x are calibrated for."""
        return self.x_bound, self.y_bound

    def __init__(self, dim: int, *, domain: ConvexSet, horizon: int, solver: str = "npg",
                 max_iter: int = 100, beta: float = 0.05, x_bound: float = 1.0,
                 y_bound: float = 1.0, mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        super().__init__(dim, horizon=horizon, x_bound=x_bound, y_bound=y_bound, **privacy)
        if not isinstance(domain, ConvexSet) or domain.dim != dim:
            raise fail("domain", f"be a dpol.sets.ConvexSet of dim {dim}", domain)
        self.domain = domain
        self.solver = check_choice("solver", solver, self.SOLVERS)
        self.max_iter = check_int("max_iter", max_iter, low=1)
        self.beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True, high_open=True)
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian tree noise)", self.delta)
        self._setup_features()
        self.radius = self._feasible_radius()
        # _stacked: the stacked-element bound the tight calibration used (joint_events)
        self._counters, self._stacked = self._build_counters(resolve_counter(self.counter))
        self._theta = domain.project(np.zeros(dim))
        self.iterations_, self.bound_ = 0, 0.0
        p = self.feature_dim
        self._released = (np.zeros((p, p)), np.zeros(p))

    # ------------------------------------------------------------------ hooks (M3)
    def _setup_features(self) -> None:
        self.feature_dim = self.dim

    def _features(self, X: np.ndarray) -> np.ndarray:
        return X

    def _feasible_radius(self) -> float:
        """R: the largest norm over the set the optimisation runs on (C for M2)."""
        return float(self.domain.radius)

    # ------------------------------------------------------------------ privacy
    def _build_counters(self, cls: type) -> tuple[tuple, float | None]:
        p, xb, yb = self.feature_dim, self.x_bound, self.y_bound
        replace = self.neighbouring == "replace_one"
        specs = [(p * p, {"bound": xb * xb,
                          "element_sensitivity": (math.sqrt(2.0) if replace else 1.0) * xb * xb}),
                 (p, {"bound": xb * yb})]

        paper = None
        if self.calibration == "paper" and self.is_private and cls is BinaryTreeCounter:
            # KNJ Alg. 2 line 1 / Alg. 4: Delta_2 = 2 for both trees (in units of the bounds)
            paper = ([knj_tree_mech_sigma(self.epsilon / 2, self.delta / 2, self.horizon,
                                          2.0 * b) for b in (xb * xb, xb * yb)],
                     "KNJ's TreeMech noise (docs/errata.md, KNJ-1)")
        return joint_counters(cls, self.horizon, specs, epsilon=self.epsilon,
                              delta=self.delta, neighbouring=self.neighbouring,
                              calibration=self.calibration, options=self.counter_options,
                              seed=self.seed, paper=paper, noise=self.noise,
                              element_sensitivity=outer_product_sensitivity(xb, yb,
                                                                            self.neighbouring))

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The Q and q counters' release (Privacy): their events, or one event of the
        stacked release when the joint bound is smaller (``joint_events``)."""
        return joint_events(self._counters, self._stacked)

    @property
    def weights(self) -> np.ndarray:
        return self._theta.copy()

    @property
    def counters(self) -> tuple:
        """The two continual-release counters (x x^T flattened, then y x)."""
        return self._counters

    def released_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """(Q_t, q_t): the private sums released at the last step (copies; zeros before).

        They define the released gradient function ``g_t(theta) = 2 (Q_t theta - q_t)``.
        """
        return self._released[0].copy(), self._released[1].copy()

    def gradient_error(self, t: int) -> float:
        """alpha'_t (docs/errata.md, KNJ-4): with prob. >= 1 - beta/(2T),
        ``sup_{theta in C} ||g_t(theta) - grad L(theta)|| <= alpha'_t``.

        The error is ``2 (E theta - e)``, E a p x p and e a p-vector of i.i.d.
        N(0, s^2) entries (s^2 = each counter's ``variance(t)``); ``E||E||_op <= 2 sqrt(p) s``,
        ``E||e|| <= sqrt(p) s``, and both norms are s-Lipschitz in the Gaussian vector:
        ``alpha' = 2 [s_Q R (2 sqrt(p) + u) + s_q (sqrt(p) + u)]``, u = sqrt(2 ln(2/beta_t)),
        beta_t = beta/(2T) (no union bound over iterations: KNJ-4). Secure noise adds
        the rounding of t elements to the grids g_Q, g_q (each entry by g/2 at most):
        ``2 t (g_Q p R + g_q sqrt(p)) / 2`` (Frobenius bounds the operator norm).
        """
        if not self.is_private:
            return 0.0
        s_q, s_y = (math.sqrt(c.variance(t)) for c in self._counters)
        p = self.feature_dim
        u = math.sqrt(2.0 * math.log(4.0 * self.horizon / self.beta))
        g_q, g_y = (c.grid or 0.0 for c in self._counters)  # float noise: no grid
        rounding = t * (g_q * p * self.radius + g_y * math.sqrt(p))
        return 2.0 * (s_q * self.radius * (2.0 * math.sqrt(p) + u) + s_y * (math.sqrt(p) + u)) \
            + rounding

    def lipschitz(self, t: int) -> float:
        """L_t = 2 t X (X R + Y) bounds ||grad L(theta; Gamma_t)|| on the set (KNJ-4)."""
        return 2.0 * t * self.x_bound * (self.x_bound * self.radius + self.y_bound)

    # ------------------------------------------------------------------ solvers
    def _npg_schedule(self, t: int) -> float:
        """Set r_t (``iterations_``) and ``bound_`` for step t; return the step size."""
        alpha, L = self.gradient_error(t), self.lipschitz(t)
        r = int(min(npg_iterations(L, alpha), self.max_iter))
        self.iterations_, self.bound_ = r, npg_bound(self.radius, r, L, alpha)
        return npg_step_size(self.radius, r, L, alpha)

    def _npg(self, A: np.ndarray, b: np.ndarray, t: int, start: np.ndarray,
             project) -> np.ndarray:
        step = self._npg_schedule(t)

        def grad(theta: np.ndarray) -> np.ndarray:
            return 2.0 * (A @ theta - b)

        return noisy_proj_grad(grad, project, start, self.iterations_, step)[0]

    def _fista(self, A: np.ndarray, b: np.ndarray, start: np.ndarray, project) -> np.ndarray:
        """max_iter accelerated projected gradient steps on theta^T A theta - 2 b.theta."""
        # a (near-)zero quadratic is linear: a long step then lands on the minimising face
        lip = 2.0 * max(float(np.linalg.eigvalsh(A)[-1]), 1e-12 * (1.0 + float(np.abs(b).max())))
        x, z, s = start.copy(), start.copy(), 1.0
        for _ in range(self.max_iter):
            x_new = project(z - 2.0 * (A @ z - b) / lip)
            s_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * s * s))
            z = x_new + ((s - 1.0) / s_new) * (x_new - x)
            x, s = x_new, s_new
        return x

    @staticmethod
    def _psd(A: np.ndarray) -> np.ndarray:
        """Symmetrise and clip negative eigenvalues (KNJ-4's surrogate; post-processing)."""
        evals, evecs = np.linalg.eigh(0.5 * (A + np.swapaxes(A, -1, -2)))
        return np.einsum("...ij,...j,...kj->...ik", evecs, np.maximum(evals, 0.0), evecs)

    def _solve_block(self, Q_hat: np.ndarray, q_hat: np.ndarray, steps: np.ndarray
                     ) -> np.ndarray:
        """Released models for a block of steps (Q_hat (n, p, p), q_hat (n, p))."""
        if self.solver == "surrogate" and type(self.domain) is L2Ball:
            self.iterations_ = 0
            # eigenvalues are clipped at 0 inside: the PSD projection of the symmetric part
            sym = 0.5 * (Q_hat + np.swapaxes(Q_hat, 1, 2))
            out = l2_ball_quadratic_min(sym, q_hat, self.domain.radius)
            self._theta = out[-1].copy()
            return out
        out = np.empty((len(steps), self.dim))
        for i, t in enumerate(steps):
            if self.solver == "npg":
                theta = self._npg(Q_hat[i], q_hat[i], int(t), self._theta, self.domain._project)
            else:
                theta = self._fista(self._psd(Q_hat[i]), q_hat[i], self._theta,
                                    self.domain._project)
            self._theta = out[i] = theta
        return out

    # ------------------------------------------------------------------ steps
    def _learn(self, x: np.ndarray, y: float) -> None:
        self._run(x[None, :], np.array([y]), advance=False)

    def _run(self, X: np.ndarray, y: np.ndarray, advance: bool = True) -> np.ndarray:
        n, p = X.shape[0], self.feature_dim
        start = self.t_ - (0 if advance else 1)
        before = np.empty((n, self.dim))
        block = max(1, _BLOCK_FLOATS // (p * p))
        for lo in range(0, n, block):
            U, yb = self._features(X[lo:lo + block]), y[lo:lo + block]
            Q_hat = self._counters[0].run(np.einsum("ni,nj->nij", U, U).reshape(len(U), -1))
            q_hat = self._counters[1].run(yb[:, None] * U)
            steps = np.arange(start + lo + 1, start + lo + len(U) + 1)
            before[lo] = self._theta
            Q_hat = Q_hat.reshape(-1, p, p)
            self._released = (Q_hat[-1].copy(), q_hat[-1].copy())
            after = self._solve_block(Q_hat, q_hat, steps)
            before[lo + 1:lo + len(U)] = after[:-1]
        if advance:
            self.t_ += n
        return before

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (y - X @ w) ** 2

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (y - np.einsum("ij,ij->i", W, X)) ** 2
