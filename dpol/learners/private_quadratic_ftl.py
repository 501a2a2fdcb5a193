"""PQFTL: private follow-the-leader for quadratic losses (JKT Section 4, Alg. 4, Thm 3)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.linalg.lapack import dposv, dpotrf, dsyevd
from threadpoolctl import ThreadpoolController

from dpol._validation import check_choice, check_real, fail
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.accounting.presets import jkt_private_sum_sigma
from dpol.counters import resolve_counter
from dpol.errors import NumericalWarning
from dpol.learners._base import OnlineLearner
from dpol.learners._joint_counters import joint_counters, outer_product_sensitivity

__all__ = ["PrivateQuadraticFTL"]

#: rows per vectorized block: bounds the (block, d, d) arrays to about 32 MB
_BLOCK_FLOATS = 1 << 22
_THREADPOOLS: list[ThreadpoolController] = []  # built on first use (inspecting costs ~1 ms)


def _blas_controller() -> ThreadpoolController:
    if not _THREADPOOLS:
        _THREADPOOLS.append(ThreadpoolController())
    return _THREADPOOLS[0]


def _projected_solve(sym: np.ndarray, u: np.ndarray, ridge: float) -> np.ndarray:
    """(P(S) + ridge I)^-1 u for one symmetric S (d, d); P clips negative eigenvalues to 0.

    Where Cholesky of S succeeds, S is positive definite, so P(S) = S exactly and one
    Cholesky solve of S + ridge I gives the same w as the eigenbasis formula up to
    rounding: at d = 90 (one thread) 41 + 47 us against 607 us for the eigendecomposition,
    which remains the path where S has negative eigenvalues. (Only those eigenpairs would
    do, but LAPACK's dsyevr spends ~26 us per eigenvector: cheaper below ~15 of them,
    and the early, noise-dominated steps that need the projection have more.)
    """
    if dpotrf(sym)[1] == 0:
        _, w, info = dposv(sym + ridge * np.eye(sym.shape[0]), u)
        if info == 0:  # else a ridge below the round-off of S: the eigenbasis below
            return w
    evals, evecs, info = dsyevd(sym)
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACK dsyevd did not converge (info={info})")
    return evecs @ ((u @ evecs) / (np.maximum(evals, 0.0) + ridge))


class PrivateQuadraticFTL(OnlineLearner):
    """Follow the leader on f_t(w) = 1/2 (y_t - <x_t, w>)^2 + alpha/2 ||w||^2 over R^d.

    w_{t+1} = (t alpha I + V_t)^(-1) u_t with V_t = sum x x^T and u_t = sum y x, both
    released by private counters; the solve is post-processing.

    Parameters
    ----------
    dim : int
    alpha : float
        Regularisation (alpha > 0); JKT's experiments use 1.
    bound : float
        R: ||x_t|| <= R and |y_t| <= R (larger values are clipped and counted).
    horizon, epsilon, delta, neighbouring, calibration, seed
        See :class:`~dpol.learners._base.OnlineLearner`.
    counter : {"tree", "honaker", "window", ...} or Counter subclass
        The continual-release mechanism of both sums (JKT: the binary tree).
    counter_options : dict, optional
        Extra keywords for the counters (e.g. ``{"window": 64}``).
    fixes : bool
        JKT spec 5.5, free post-processing: symmetrise the noisy V, project it on the PSD
        cone, and clip w to the ball of radius min(R/sqrt(alpha), R^2/alpha), which holds
        every exact FTL iterate. Without them the solve can be indefinite
        (``NumericalWarning``) and the regret explodes.
    noise_ridge : bool
        Beyond the papers (default False: JKT's algorithm; needs fixes). Adds lambda_t =
        s_t (2 sqrt(d) + 2 sqrt(ln(1/beta))), beta = 0.05, to the ridge at step t, s_t the
        std of the off-diagonal entries of the symmetrised noise of V_t: a high-probability
        bound on the noise's operator norm (Gaussian orthogonal ensemble: mean <= 2 s sqrt(d),
        and lambda_max is sqrt(2) s-Lipschitz in the entries), so the noisy system dominates
        the exact one. It is AdaSSP's idea (Wang 2018) with the public noise level in place
        of a private eigenvalue estimate: post-processing, data-independent, no privacy cost.
        It shrinks the iterates toward 0 while the noise swamps the signal; in
        ``benchmarks/excess_regret.py`` it cuts PQFTL's excess regret 3-5x at every epsilon.
    noise : {"gaussian", "secure"}
        ``"secure"``: exact discrete Gaussian noise on OS randomness in both counters
        (binary or window tree, tight calibration; not reproducible from ``seed``).

    Privacy
    -------
    Replace-one. Elements vec(x x^T) and y x change by at most sqrt(2) R^2 (Frobenius:
    ||v v^T - w w^T||_F^2 = ||v||^4 + ||w||^4 - 2 <v, w>^2 <= 2 R^4) and 2 R^2, each in at
    most m tree nodes (JKT erratum 5.4: 2R-type sensitivities, R^2 for the u tree, m =
    floor(log2 T) + 1 levels); add/remove: R^2 and R^2. Tight (default, JKT spec 5.4
    recommendation): the two node vectors form one Gaussian mechanism with the same std
    sigma = s sqrt(m) / mu*(eps, delta) on both, exact by Gaussian DP, where s bounds the
    change of the stacked element (vec(x x^T), y x): s = 3 R^2 / sqrt(2) under replace-one,
    attained at <x, x'> = R^2/2, y = -y' = R (``outer_product_sensitivity``; adding the two
    parts' bounds in quadrature would give sqrt(6) R^2, 15% more noise).
    Full-matrix noise, symmetrised (review item 4: not the upper triangle). Paper: each
    tree gets JKT's PrivateSum sigma at (eps/2, delta/2) with bound R^2 and R as printed;
    ``privacy`` reports their exact composition, and a ``PaperCalibrationWarning`` says
    when it exceeds epsilon. Secure noise: both counters round their parts to their grids
    g_V, g_u, so s grows to s + sqrt(g_V^2 d^2 + g_u^2 d) (replace-one; half of the
    rounding term under add/remove), and sigma is calibrated through zCDP on that
    sensitivity with dp-accounting's RDP accountant
    (``dpol.learners._joint_counters.joint_zcdp``; 4-11% more std).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) / 2; y = X @ [0.3, -0.2, 0.1]
    >>> m = PrivateQuadraticFTL(3, horizon=500, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.run(X, y).weights.shape
    (500, 3)
    >>> m.privacy.epsilon
    1.0
    """

    def __init__(self, dim: int, *, horizon: int, epsilon: float, delta: float = 1e-6,
                 alpha: float = 1.0, bound: float = 1.0, counter: object = "tree",
                 counter_options: dict | None = None, fixes: bool = True,
                 noise_ridge: bool = False,
                 neighbouring: str = "replace_one", calibration: str = "tight",
                 noise: str = "gaussian", seed: object = None) -> None:
        bound = check_real("bound", bound, low=0.0, low_open=True)
        super().__init__(dim, horizon=horizon, epsilon=epsilon, delta=delta,
                         neighbouring=neighbouring, calibration=calibration, x_bound=bound,
                         y_bound=bound, seed=seed)
        self.alpha = check_real("alpha", alpha, low=0.0, low_open=True)
        self.bound = bound
        self.fixes = bool(fixes)
        self.noise_ridge = bool(noise_ridge)
        self.counter = counter
        self.counter_options = dict(counter_options or {})
        self.noise = check_choice("noise", noise, ("gaussian", "secure"))
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian tree noise)", self.delta)
        self.radius = min(bound / math.sqrt(self.alpha), bound**2 / self.alpha)
        self._counters, self._privacy = self._build_counters(resolve_counter(counter))
        self._w = np.zeros(dim)

    def _build_counters(self, cls: type) -> tuple[tuple, PrivacyGuarantee]:
        d, r2 = self.dim, self.bound**2
        sens_v = math.sqrt(2.0) * r2 if self.neighbouring == "replace_one" else r2
        specs = [(d * d, {"bound": r2, "element_sensitivity": sens_v}), (d, {"bound": r2})]

        def paper() -> tuple[list[float], str]:
            # JKT Alg. 4: each tree at (eps/2, delta/2); it passes R for the u tree
            return [jkt_private_sum_sigma(self.epsilon / 2, self.delta / 2, self.horizon, b)
                    for b in (r2, self.bound)], "JKT's PQFTL noise (PrivateSum)"

        return joint_counters(cls, self.horizon, specs, epsilon=self.epsilon,
                              delta=self.delta, neighbouring=self.neighbouring,
                              calibration=self.calibration, options=self.counter_options,
                              seed=self.seed, paper=paper, noise=self.noise,
                              element_sensitivity=outer_product_sensitivity(
                                  self.bound, self.bound, self.neighbouring))

    @property
    def privacy(self) -> PrivacyGuarantee:
        return self._privacy

    @property
    def weights(self) -> np.ndarray:
        return self._w.copy()

    #: failure probability of the operator-norm bound behind ``noise_ridge``
    _RIDGE_BETA = 0.05

    def _ridge(self, steps: np.ndarray) -> np.ndarray | float:
        """lambda_t of ``noise_ridge`` (0 without it or without noise)."""
        if not self.noise_ridge:
            return 0.0
        # symmetrising halves the off-diagonal variance of the released V_t's entries
        s = np.sqrt(0.5 * self._counters[0].variance(steps.astype(np.int64)))
        return s * (2.0 * math.sqrt(self.dim) + 2.0 * math.sqrt(math.log(1.0 / self._RIDGE_BETA)))

    def _solve(self, v_hat: np.ndarray, u_hat: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """w for a block: v_hat (n, d, d), u_hat (n, d), steps (n,) = t of each release.

        Small matrices: multi-threaded BLAS only adds contention (measured on the 2-core
        machine: eigh of one 90x90 matrix 25.9 ms with 2 threads, 0.9 ms with one; at
        d = 10 no difference), so blocks run single-threaded; the limit costs ~9 us.
        """
        if len(steps) == 1 and self.dim < 16:
            return self._solve_block(v_hat, u_hat, steps)
        with _blas_controller().limit(limits=1, user_api="blas"):
            return self._solve_block(v_hat, u_hat, steps)

    def _solve_block(self, v_hat: np.ndarray, u_hat: np.ndarray, steps: np.ndarray
                     ) -> np.ndarray:
        d = self.dim
        if self.fixes:
            sym = v_hat + np.swapaxes(v_hat, 1, 2)
            sym *= 0.5
            ridge = steps * self.alpha + self._ridge(steps)
            w = np.empty_like(u_hat)
            for i in range(len(steps)):  # LAPACK per matrix: see _projected_solve
                wi = _projected_solve(sym[i], u_hat[i], float(ridge[i]))
                norm = math.sqrt(float(wi @ wi))  # clip to the ball holding every FTL iterate
                w[i] = wi if norm <= self.radius else wi * (self.radius / norm)
            return w
        system = v_hat + (steps * self.alpha)[:, None, None] * np.eye(d)
        lam_min = np.linalg.eigvalsh(0.5 * (system + np.swapaxes(system, 1, 2)))[:, 0]
        if np.any(lam_min <= 0.0):
            warnings.warn(f"{int(np.sum(lam_min <= 0))} of {len(steps)} PQFTL systems t*alpha*I"
                          " + V_hat are indefinite; use fixes=True (JKT spec 5.5)",
                          NumericalWarning, stacklevel=4)
        return np.linalg.solve(system, u_hat[:, :, None])[:, :, 0]

    def _learn(self, x: np.ndarray, y: float) -> None:
        # the counters' add, not a one-row run (whose setup cost ~250 us per step); the
        # elements are the same products as _run's, so the releases are the same
        d = self.dim
        v_hat = self._counters[0].add(np.outer(x, x).ravel())
        u_hat = self._counters[1].add(y * x)
        self._w = self._solve(v_hat.reshape(1, d, d), u_hat[None, :],
                              np.array([float(self.t)]))[0]

    def _run(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Blockwise vectorized replay: the released weights before each step."""
        n, d = X.shape
        start = self.t
        before = np.empty((n, d))
        block = max(1, _BLOCK_FLOATS // (d * d))
        for lo in range(0, n, block):
            Xb, yb = X[lo:lo + block], y[lo:lo + block]
            v_hat = self._counters[0].run(np.einsum("ni,nj->nij", Xb, Xb).reshape(len(Xb), -1))
            u_hat = self._counters[1].run(yb[:, None] * Xb)
            steps = np.arange(start + lo + 1, start + lo + len(Xb) + 1, dtype=float)
            after = self._solve(v_hat.reshape(-1, d, d), u_hat, steps)
            before[lo] = self._w
            before[lo + 1:lo + len(Xb)] = after[:-1]
            self._w = after[-1].copy()
        self.t += n
        return before

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (y - X @ w) ** 2 + 0.5 * self.alpha * float(w @ w)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (y - np.einsum("ij,ij->i", W, X)) ** 2 \
            + 0.5 * self.alpha * np.einsum("ij,ij->i", W, W)
