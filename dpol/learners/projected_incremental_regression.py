"""PrivIncReg2: private incremental regression after a random projection (KNJ Alg. 3, Thm 5.7)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import linprog

from dpol._seeding import resolve_rng, spawn_seeds
from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.mechanism import Mechanism
from dpol.errors import NumericalWarning
from dpol.learners.private_incremental_regression import PrivateIncrementalRegression
from dpol.sets import ConvexHull, L1Ball, L2Ball, Simplex

__all__ = ["LIFTS", "ProjectedIncrementalRegression", "gaussian_width", "projection_dimension"]

#: the ``lift=`` choices of :class:`ProjectedIncrementalRegression`
LIFTS = ("gauge", "preimage")


def _support(domain: object, G: np.ndarray) -> np.ndarray:
    """sup_{a in C} <a, g> for every row g."""
    if isinstance(domain, L1Ball):
        return domain.radius * np.abs(G).max(axis=1)
    if isinstance(domain, Simplex):
        return G.max(axis=1)
    if isinstance(domain, L2Ball):
        return domain.radius * np.linalg.norm(G, axis=1)
    if isinstance(domain, ConvexHull):
        return (G @ domain.vertices.T).max(axis=1)
    return np.array([float(g @ domain.linear_oracle(-g)) for g in G])


def gaussian_width(domain: object, draws: int = 4000) -> float:
    """w(C) = E sup_{a in C} <a, g>, g ~ N(0, I): Monte Carlo over a fixed public seed.

    A property of the declared set, never of data (KNJ Section 5).

    >>> round(gaussian_width(L1Ball(1000)), 1)  # E max_i |g_i|, below sqrt(2 ln 2000) = 3.9
    3.4
    """
    G = np.random.default_rng(20170).standard_normal((check_int("draws", draws, low=1),
                                                       domain.dim))
    return float(_support(domain, G).mean())


def projection_dimension(width: float, horizon: int, beta: float = 0.05,
                         constant: float = 1.0) -> int:
    """KNJ Alg. 3 line 1 in closed form (docs/errata.md, KNJ-4): gamma = (W/T)^(1/3),
    ``m = ceil(c_G gamma^-2 max(W^2, ln(T/beta)))`` (about T^(2/3) W^(4/3)).

    Examples
    --------
    >>> projection_dimension(2.0, 1000)
    624
    """
    width = check_real("width", width, low=0.0, low_open=True)
    horizon = check_int("horizon", horizon, low=1)
    gamma = (width / horizon) ** (1.0 / 3.0)
    if gamma >= 1.0:
        raise fail("horizon", f"exceed the Gaussian width W = {width:.4g} (gamma = (W/T)^(1/3) "
                   "must be < 1)", horizon)
    return math.ceil(constant * max(width**2, math.log(horizon / beta)) / gamma**2)


class ProjectedIncrementalRegression(PrivateIncrementalRegression):
    """KNJ PrivIncReg2: PrivIncReg1 on m-dimensional random projections, lifted back to C.

    A data-independent Gaussian Phi (m x d, i.i.d. N(0, 1/m), its own seed stream) maps
    x to ``u = ||x|| Phi x / ||Phi x||`` (u = 0 when Phi x = 0: docs/errata.md, KNJ-4).
    Two counters release the sums of u u^T and y u; NoisyProjGrad runs over Phi C with
    the released gradient ``2 (Q_t v - q_t)``, and the result is lifted to C (Alg. 3).

    Parameters
    ----------
    dim, domain, horizon, max_iter, x_bound, y_bound, mechanism, **privacy
        See :class:`PrivateIncrementalRegression`. ``domain``: L1Ball, Simplex, L2Ball or
        ConvexHull (their sup over Phi C is exact).
    projection_dim : int, optional
        m; default :func:`projection_dimension` of W = sqrt(d) + w(C) (for k-sparse rows
        pass ``projection_dimension(sqrt(2 k ln(d/k)) + gaussian_width(C), T)``; a width
        is never estimated from data). m >= d warns and is capped at d.
    solver : {"npg", "surrogate"}
        ``"npg"``: NoisyProjGrad over Phi C, projecting by constrained least squares
        ``Phi argmin_{theta in C} ||Phi theta - v||^2`` (an oracle Section 5.1 leaves
        unstated: KNJ-4) with ``inner_iter`` accelerated steps. ``"surrogate"`` (KNJ-4,
        not in the paper): ``max_iter`` accelerated steps on the PSD-clipped projected
        quadratic in theta.
    max_iter, inner_iter : int
        NoisyProjGrad iterations per step and projection steps per iteration, or the
        surrogate solver's steps.
    lift : str
        One of :data:`LIFTS`: ``"gauge"``, Alg. 3's ``argmin ||theta||_C s.t. Phi theta =
        vartheta_t`` (where C does not contain 0, the averaged preimage: Section 5's
        lifting assumes 0 in C: KNJ-4), or ``"preimage"``, the averaged preimage (no
        linear program per step on the L1 ball).
    projection_seed : optional
        Seed of Phi (default: an independent stream of ``seed``).

    Privacy
    -------
    As :class:`PrivateIncrementalRegression`, on p = m dimensions: ``||u|| = ||x|| <= X``,
    so ``||u y - u' y'|| <= 2 X Y`` and ``||u u^T - u' u'^T||_F <= sqrt(2) X^2``
    (docs/errata.md, KNJ-2); the two trees are calibrated jointly (tight) or by KNJ's
    TreeMech sigma (paper, KNJ-1). Phi is data-independent and public; the projection,
    NoisyProjGrad and the lift read only released sums: post-processing. The noise grows
    with sqrt(m), not sqrt(d). ``privacy`` is the two counters' events.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.zeros((200, 50)); X[:, 0] = 0.7; X[np.arange(200), rng.integers(1, 50, 200)] = 0.7
    >>> y = X @ np.r_[0.9, np.zeros(49)]
    >>> m = ProjectedIncrementalRegression(50, domain=L1Ball(50), horizon=200, epsilon=2.0,
    ...                                    delta=1e-5, projection_dim=8, seed=0)
    >>> theta = m.run(X, y).final_weights
    >>> m.projection.shape, bool(np.abs(theta).sum() <= 1 + 1e-9)
    ((8, 50), True)
    """

    def __init__(self, dim: int, *, domain: object, horizon: int,
                 projection_dim: int | None = None, projection_seed: object = None,
                 lift: str = "gauge", solver: str = "npg", max_iter: int = 30,
                 inner_iter: int = 20, x_bound: float = 1.0, y_bound: float = 1.0,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        if not isinstance(domain, (L1Ball, Simplex, L2Ball, ConvexHull)):
            raise fail("domain", "be an L1Ball, Simplex, L2Ball or ConvexHull", domain)
        self.lift = check_choice("lift", lift, LIFTS)
        self.inner_iter = check_int("inner_iter", inner_iter, low=1)
        self.projection_dim = projection_dim
        self.projection_seed = projection_seed
        super().__init__(dim, domain=domain, horizon=horizon, solver=solver,
                         max_iter=max_iter, x_bound=x_bound, y_bound=y_bound, **privacy)
        self._pre = self._theta.copy()

    # ------------------------------------------------------------------ hooks
    def _setup_features(self) -> None:
        d, T = self.dim, self.horizon
        if self.projection_dim is None:  # the unit ball's width sqrt(d), plus C's
            self.width = math.sqrt(d) + gaussian_width(self.domain)
            m = projection_dimension(self.width, T, self.beta)
        else:
            m = check_int("projection_dim", self.projection_dim, low=1)
        if m >= d:
            warnings.warn(f"projection dimension m = {m} >= d = {d}: random projection cannot "
                          "reduce the noise; use PrivateIncrementalRegression (m capped at d)",
                          NumericalWarning, stacklevel=4)
            m = d
        self.feature_dim = m
        seed = self.projection_seed if self.projection_seed is not None \
            else spawn_seeds(self.seed, 3)[2]
        phi = resolve_rng(seed).standard_normal((m, d)) / math.sqrt(m)
        phi.setflags(write=False)
        self.projection = phi
        self._pinv = np.linalg.pinv(phi)
        self._phi_lip = 2.0 * float(np.linalg.norm(phi, 2)) ** 2  # smoothness of ||Phi th - v||^2

    def _features(self, X: np.ndarray) -> np.ndarray:
        PX = X @ self.projection.T
        norms_p = np.linalg.norm(PX, axis=1)
        scale = np.divide(np.linalg.norm(X, axis=1), norms_p, out=np.zeros(len(X)),
                          where=norms_p > 0.0)
        return PX * scale[:, None]

    def _feasible_radius(self) -> float:
        """||Phi C|| = sup_{theta in C} ||Phi theta||, exactly."""
        col = np.linalg.norm(self.projection, axis=0)
        if isinstance(self.domain, L1Ball):
            return self.domain.radius * float(col.max())
        if isinstance(self.domain, Simplex):
            return float(col.max())
        if isinstance(self.domain, L2Ball):
            return self.domain.radius * float(np.linalg.norm(self.projection, 2))
        return float(np.linalg.norm(self.domain.vertices @ self.projection.T, axis=1).max())

    # ------------------------------------------------------------------ solver
    def _preimage_projection(self, v: np.ndarray, start: np.ndarray) -> np.ndarray:
        """theta in C approximately minimising ||Phi theta - v||^2 (inner_iter FISTA steps)."""
        phi, project = self.projection, self.domain._project
        x, z, s = start, start, 1.0
        for _ in range(self.inner_iter):
            x_new = project(z - 2.0 * (phi.T @ (phi @ z - v)) / self._phi_lip)
            s_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * s * s))
            z = x_new + ((s - 1.0) / s_new) * (x_new - x)
            x, s = x_new, s_new
        return x

    def _solve_one(self, A: np.ndarray, b: np.ndarray, t: int) -> np.ndarray:
        phi = self.projection
        if self.solver == "npg":
            # NoisyProjGrad over Phi C on preimages: vartheta_k = Phi theta_k, theta_k in C
            def grad(theta: np.ndarray) -> np.ndarray:
                return 2.0 * (A @ (phi @ theta) - b)

            eta = self._npg_schedule(t)
            total, theta = np.zeros(self.dim), self._pre
            for _ in range(self.iterations_):
                total += theta
                theta = self._preimage_projection(phi @ theta - eta * grad(theta), theta)
            pre = total / self.iterations_
        else:
            A = self._psd(A)
            pre = self._fista(phi.T @ A @ phi, phi.T @ b, self._pre, self.domain._project)
        self._pre = pre
        return self._lift(phi @ pre, pre)

    def _lift(self, vartheta: np.ndarray, pre: np.ndarray) -> np.ndarray:
        """A point of C with Phi theta = vartheta (Alg. 3 line 9)."""
        if self.lift == "preimage" or isinstance(self.domain, (Simplex, ConvexHull)):
            return pre
        if isinstance(self.domain, L2Ball):
            theta = self._pinv @ vartheta
        else:
            d = self.dim
            res = linprog(np.ones(2 * d), A_eq=np.hstack([self.projection, -self.projection]),
                          b_eq=vartheta, bounds=(0, None), method="highs")
            if res.status != 0:  # cannot happen (Phi has full row rank); keep the preimage
                return pre
            theta = res.x[:d] - res.x[d:]
        return theta / max(1.0, float(self.domain._gauge(theta)))

    def _solve_block(self, Q_hat: np.ndarray, q_hat: np.ndarray, steps: np.ndarray
                     ) -> np.ndarray:
        out = np.empty((len(steps), self.dim))
        for i, t in enumerate(steps):
            self._theta = out[i] = self._solve_one(Q_hat[i], q_hat[i], int(t))
        return out
