"""PQFTL: private follow-the-leader for quadratic losses (JKT Section 4, Alg. 4, Thm 3)."""

from __future__ import annotations

import functools
import math
import mmap
import os
import select
import signal
import struct
import sys
import warnings
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import ThreadpoolController

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.accounting.presets import jkt_private_sum_sigma
from dpol.counters import resolve_counter
from dpol.errors import NumericalWarning
from dpol.learners._base import OnlineLearner
from dpol.learners._joint_counters import joint_counters, outer_product_sensitivity

__all__ = ["PrivateQuadraticFTL"]

#: rows per vectorized block without ``fixes``: bounds the (block, d, d) arrays to ~32 MB
_BLOCK_FLOATS = 1 << 22
#: rows per block with ``fixes`` (svec elements): (block, d(d+1)/2) arrays of ~4 MB, 128
#: rows at d = 90, where elements and counters took 95-110 us a row against 110-130 us
#: with blocks of 32 or 512 rows (measured)
_SVEC_BLOCK_FLOATS = 1 << 19
#: from this dimension the PSD solver's tridiagonal route beats dsyevd (measured, one
#: core, per indefinite step: 99 against 114 us at d = 24, 60 against 28 us at d = 8)
_TRIDIAGONAL_DIM = 24
#: a forked helper process solves steps too (_Helper) from this dimension and this many
#: rows (measured at d = 10: T = 40,000 in 0.53 s against 0.90 s, T = 4096 0.11 against
#: 0.17 s; at d = 90, T = 20,000 9.7 s against 18.8 s)
_HELPER_DIM = 8
_HELPER_ROWS = 4096
#: rows per helper task, and tasks in flight (the shared buffers: ~8 MB at d = 90)
_CHUNK = 64
_SLOTS = 4
_THREADPOOLS: list[ThreadpoolController] = []  # built on first use (inspecting costs ~1 ms)
_SQRT2 = math.sqrt(2.0)


def _blas_controller() -> ThreadpoolController:
    if not _THREADPOOLS:
        _THREADPOOLS.append(ThreadpoolController())
    return _THREADPOOLS[0]


class _Svec(NamedTuple):
    rows: np.ndarray  # i of entry (i, j), i <= j, in np.triu_indices order
    cols: np.ndarray
    scale: np.ndarray  # 1 on the diagonal, sqrt(2) off it


@functools.lru_cache(maxsize=16)
def _svec_layout(d: int) -> _Svec:
    """svec order: the upper triangle row by row, which is LAPACK's lower packed storage."""
    rows, cols = np.triu_indices(d)
    return _Svec(rows, cols, np.where(rows == cols, 1.0, _SQRT2))


def _svec_outer(X: np.ndarray, layout: _Svec) -> np.ndarray:
    """svec(x x^T) of every row, C-ordered: (x_i scale_ij) x_j, the same floats either way.

    C order matters: the counters clip rows by their norms, and a column-ordered block
    (what X[:, index] gives) sums them in another order than ``add``'s single row. One row
    (``learn_one``): a gather, 2.8 us at d = 10; a block: one slice product per i, 7.5 us a
    row at d = 90 and 256 rows against 28-45 us for the gather (measured).
    """
    n, d = X.shape
    if n == 1:
        x = X[0]
        out = x[layout.rows]
        out *= layout.scale
        out *= x[layout.cols]
        return out[None, :]
    out = np.empty((n, len(layout.rows)))
    scaled = X * _SQRT2  # the gather's off-diagonal scale
    pos = 0
    for i in range(d):
        np.multiply(X[:, i], X[:, i], out=out[:, pos])  # scale 1 on the diagonal
        np.multiply(scaled[:, i, None], X[:, i + 1:], out=out[:, pos + 1:pos + d - i])
        pos += d - i
    return out


class _PsdSolver:
    """w = (P(S) + ridge I)^-1 u, S symmetric given by its lower packed entries (svec order,
    unscaled), P the projection on the PSD cone (negative eigenvalues set to 0).

    Where Cholesky of S succeeds, S is positive definite, P(S) = S, and a Cholesky solve
    of S + ridge I gives w. Elsewhere S = Q T Q^T (Householder tridiagonalisation) and
    P(S) + ridge I = Q (T + ridge I + Z diag(-lam) Z^T) Q^T over the k negative
    eigenpairs (lam, Z) of T; as Z spans an invariant subspace,
        w = Q [(T + ridge I)^-1 (c - Z Z^T c) + Z Z^T c / ridge],  c = Q^T u,
    exact, with a tridiagonal solve that is well conditioned (eigenvalues >= ridge/2)
    when lam_min >= -ridge/2; below that (the first, noise-dominated steps) the
    eigendecomposition of S. Measured at d = 90 over the issue-8 stream (one core): the
    Cholesky route 55-90 us a step (two factorizations: S's tells whether P(S) = S), the
    tridiagonal one 480-620 us (dsytrd ~35%, dsterf ~30%, dstein on the ~19 negative pairs
    ~30%) where dsyevd took 700-1000 us: it forms all 90 eigenvectors. Below d = 24
    dsyevd is faster. Every step runs the same LAPACK calls on the same numbers whatever
    the block or process, so ``run`` reproduces ``learn_one`` bit for bit.
    """

    def __init__(self, d: int) -> None:
        self.d = d
        self.tridiagonal = d >= _TRIDIAGONAL_DIM
        if self.tridiagonal:
            self.lwork = int(lapack.dsytrd_lwork(d, lower=1)[0])
            self.iblock = np.ones(d, dtype=np.int32)  # T as one block for dstein
            self.isplit = np.zeros(d, dtype=np.int32)
            self.isplit[0] = d

    def _unpack(self, ap: np.ndarray) -> np.ndarray:
        return lapack.dtpttr(self.d, ap, uplo="L")[0]  # lower triangle, Fortran order

    def solve(self, ap: np.ndarray, u: np.ndarray, ridge: float) -> np.ndarray:
        """(P(S) + ridge I)^-1 u."""
        a = self._unpack(ap)
        if lapack.dpotrf(a, lower=1, clean=0)[1] == 0:  # a copy: a itself is kept
            a.reshape(-1, order="F")[:: self.d + 1] += ridge  # a view: a is Fortran-ordered
            _, w, info = lapack.dposv(a, u, lower=1, overwrite_a=1)
            if info == 0:  # else a ridge below the round-off of S: the routes below
                return w
            a = self._unpack(ap)
        if self.tridiagonal:
            w = self._tridiagonal(a, u, ridge)
            if w is not None:
                return w
            a = self._unpack(ap)
        lam, vec, info = lapack.dsyevd(a, lower=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"LAPACK dsyevd did not converge (info={info})")
        return vec @ ((u @ vec) / (np.maximum(lam, 0.0) + ridge))

    def _tridiagonal(self, a: np.ndarray, u: np.ndarray, ridge: float) -> np.ndarray | None:
        """The tridiagonal route (class docstring); None where it does not apply."""
        t, diag, off, tau, info = lapack.dsytrd(a, lower=1, lwork=self.lwork, overwrite_a=1)
        lam, info = lapack.dsterf(diag, off)  # ascending eigenvalues (copies: diag, off are kept)
        if info != 0 or lam[0] < -0.5 * ridge:
            return None
        k = int(np.searchsorted(lam, 0.0))  # eigenvalues < 0
        # Q = diag(1, Q1), Q1 the product of the reflectors below the subdiagonal; the
        # unblocked dormqr (lwork=1) suits one vector, a contiguous copy spares f2py two
        refl = np.asfortranarray(t[1:, :-1])
        c = np.empty(self.d)
        c[0] = u[0]
        c[1:] = lapack.dormqr("L", "T", refl, tau, u[1:, None], 1)[0][:, 0]
        if k:
            z, info = lapack.dstein(diag, off, lam[:k], self.iblock, self.isplit)
            if info != 0:
                return None
            p = c @ z
            c -= z @ p
        _, _, x, info = lapack.dptsv(diag + ridge, off, c[:, None])
        if info != 0:
            return None
        x = x[:, 0]
        if k:
            x += z @ (p / ridge)
        w = np.empty(self.d)
        w[0] = x[0]
        w[1:] = lapack.dormqr("L", "N", refl, tau, x[1:, None], 1)[0][:, 0]
        return w

    def solve_clipped(self, ap: np.ndarray, u: np.ndarray, ridge: float, radius: float
                      ) -> np.ndarray:
        """``solve`` clipped to the ball of radius ``radius``, which holds every FTL iterate."""
        w = self.solve(ap, u, ridge)
        norm = math.sqrt(float(w @ w))
        return w if norm <= radius else w * (radius / norm)

    def solve_rows(self, V: np.ndarray, U: np.ndarray, ridge: np.ndarray, radius: float,
                   out: np.ndarray) -> None:
        """``solve_clipped`` of every row, into ``out``."""
        for i in range(len(U)):
            out[i] = self.solve_clipped(V[i], U[i], float(ridge[i]), radius)


@functools.lru_cache(maxsize=16)
def _psd_solver(d: int) -> _PsdSolver:
    return _PsdSolver(d)


def _helper_possible() -> bool:
    """Whether a helper process can use a second core: Linux (fork), two usable cores."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return len(os.sched_getaffinity(0)) >= 2


def _read(fd: int, size: int) -> bytes | None:
    """Exactly ``size`` bytes from a pipe, or None at its end."""
    data = b""
    while len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            return None
        data += more
    return data


class _Helper:
    """A forked child process solving chunks of steps from shared memory: the second core.

    Threads cannot share the solves: a step makes ~5 LAPACK calls of 5-200 us, each
    releasing and retaking the GIL, and two threads doing so hand the GIL to and fro
    (measured at d = 90: two threads of scipy's dpotrf ran 1.3-1.7x slower than one after
    the other, and a replay with two solver threads no faster than with none). The child
    has its own interpreter; the parent keeps drawing the noise (one generator, in order)
    and solves a chunk itself whenever the child has ``_SLOTS`` queued. A step is a pure
    function of (S, u, ridge) computed by the same code in either process, so who solves
    it does not change its bits. The child only runs LAPACK and numpy on the shared
    buffers and leaves by ``os._exit``; should it die, the parent solves its chunks.
    """

    _MSG = struct.Struct("ii")  # (slot, rows)

    def __init__(self, solver: _PsdSolver, radius: float, out: np.ndarray) -> None:
        d = self.d = solver.d
        self.p = d * (d + 1) // 2
        self.solver, self.radius, self.out = solver, radius, out
        width = self.p + 2 * d + 1  # a row: S packed, u, ridge, then w
        self._mem = mmap.mmap(-1, _SLOTS * _CHUNK * width * 8)  # anonymous: shared by fork
        self.slots = np.frombuffer(self._mem, dtype=np.float64).reshape(_SLOTS, _CHUNK, width)
        task_r, self._task_w = os.pipe()
        self._done_r, done_w = os.pipe()
        with warnings.catch_warnings():
            # Python >= 3.12 warns when forking a process with other threads (here BLAS's
            # idle pools); the child only runs numpy and LAPACK on the shared buffers
            warnings.simplefilter("ignore", DeprecationWarning)
            self.pid = os.fork()
        if self.pid == 0:  # the child
            code = 1
            try:
                os.close(self._task_w)
                os.close(self._done_r)
                self._serve(task_r, done_w)
                code = 0
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(done_w)
        self.free, self.busy = list(range(_SLOTS)), {}  # busy: slot -> (first row, rows)
        self.dead = False

    def _columns(self, rows: np.ndarray) -> tuple:
        p, d = self.p, self.d
        return rows[:, :p], rows[:, p:p + d], rows[:, p + d], rows[:, p + d + 1:]

    def _serve(self, task_r: int, done_w: int) -> None:
        while (msg := _read(task_r, self._MSG.size)) is not None:
            slot, n = self._MSG.unpack(msg)
            V, U, ridge, W = self._columns(self.slots[slot, :n])
            self.solver.solve_rows(V, U, ridge, self.radius, W)
            os.write(done_w, msg)

    def submit(self, V: np.ndarray, scale: np.ndarray, U: np.ndarray, ridge: np.ndarray,
               start: int) -> bool:
        """Queue rows start.. (V still scaled) if a slot is free; False if none is."""
        self.collect(wait=False)
        if self.dead or not self.free:
            return False
        slot = self.free.pop()
        Vs, Us, ridges, _ = self._columns(self.slots[slot, :len(U)])
        np.divide(V, scale, out=Vs)  # the unscaling, straight into the shared buffer
        Us[:] = U
        ridges[:] = ridge
        try:
            os.write(self._task_w, self._MSG.pack(slot, len(U)))
        except BrokenPipeError:  # the child died: collect() solves what it had queued
            self.dead = True
            self.free.append(slot)
            return False
        self.busy[slot] = (start, len(U))
        return True

    def collect(self, wait: bool) -> None:
        """Copy finished chunks into ``out``; with ``wait``, until none is left."""
        while self.busy:
            if not wait and not select.select([self._done_r], [], [], 0)[0]:
                return
            msg = _read(self._done_r, self._MSG.size)
            if msg is None:  # the child died: its chunks' inputs are still here
                self.dead = True
                for slot in list(self.busy):
                    self._finish_slot(slot, solve=True)
                return
            self._finish_slot(self._MSG.unpack(msg)[0], solve=False)

    def _finish_slot(self, slot: int, solve: bool) -> None:
        start, n = self.busy.pop(slot)
        V, U, ridge, W = self._columns(self.slots[slot, :n])
        if solve:
            self.solver.solve_rows(V, U, ridge, self.radius, W)
        self.out[start:start + n] = W
        self.free.append(slot)

    def close(self) -> None:
        """Collect what is left, end the child, wait for it."""
        try:
            self.collect(wait=True)
        finally:
            os.close(self._task_w)  # the child sees the end of its task pipe and exits
            os.close(self._done_r)
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:  # pragma: no cover - already reaped
                pass

    def kill(self) -> None:
        """End the child at once (the parent is failing)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:  # pragma: no cover - already gone
            pass
        self.busy.clear()
        self.close()


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
        JKT spec 5.5, free post-processing: release V symmetrically (svec, see Privacy),
        project it on the PSD cone, and clip w to the ball of radius min(R/sqrt(alpha),
        R^2/alpha), which holds every exact FTL iterate. Without them (JKT as printed: noise
        on the full d x d matrix, not symmetrised) the solve can be indefinite
        (``NumericalWarning``) and the regret explodes.
    noise_ridge : bool
        Beyond the papers (default False: JKT's algorithm; needs fixes). Adds lambda_t =
        s_t (2 sqrt(d) + 2 sqrt(ln(1/beta))), beta = 0.05, to the ridge at step t, s_t the
        std of the off-diagonal entries of the noise of the released V_t: a high-probability
        bound on the noise's operator norm (Gaussian orthogonal ensemble: mean <= 2 s sqrt(d),
        and lambda_max is sqrt(2) s-Lipschitz in the entries), so the noisy system dominates
        the exact one. It is AdaSSP's idea (Wang 2018) with the public noise level in place
        of a private eigenvalue estimate: post-processing, data-independent, no privacy cost.
        It shrinks the iterates toward 0 while the noise swamps the signal; in
        ``benchmarks/excess_regret.py`` it cuts PQFTL's excess regret 3-5x at every epsilon.
    n_jobs : {1, 2}
        2: ``run`` solves part of the steps in a forked helper process on a second core
        (Linux, d >= 8, at least 4096 rows; measured 9.7 s against 18.8 s at d = 90,
        T = 20,000). The releases are bit for bit those of ``n_jobs=1``. Off by default: a
        library should not fork unasked (a parent with locks held or in a server).
    noise : {"gaussian", "secure"}
        ``"secure"``: exact discrete Gaussian noise on OS randomness in both counters
        (binary or window tree, tight calibration; not reproducible from ``seed``).

    Privacy
    -------
    Replace-one. The V counter's element is svec(x x^T) with ``fixes``: the d(d+1)/2
    entries x_i x_j, i <= j, off-diagonals times sqrt(2) (vec(x x^T), d^2 entries, without
    them). svec is an isometry from symmetric matrices with the Frobenius norm, so both
    encodings have the same norms and distances: ||svec(x x^T)|| = ||x||^2 <= R^2 (the
    counter's bound), and the elements svec(x x^T) and y x change by at most sqrt(2) R^2
    (||v v^T - w w^T||_F^2 = ||v||^4 + ||w||^4 - 2 <v, w>^2 <= 2 R^4) and 2 R^2, each in at
    most m tree nodes (JKT erratum 5.4: 2R-type sensitivities, R^2 for the u tree, m =
    floor(log2 T) + 1 levels); add/remove: R^2 and R^2. Tight (default, JKT spec 5.4
    recommendation): the two node vectors form one Gaussian mechanism with the same std
    sigma = s sqrt(m) / mu*(eps, delta) on both, exact by Gaussian DP, where s bounds the
    change of the stacked element (svec(x x^T), y x): s = 3 R^2 / sqrt(2) under replace-one,
    attained at <x, x'> = R^2/2, y = -y' = R (``outer_product_sensitivity``; adding the two
    parts' bounds in quadrature would give sqrt(6) R^2, 15% more noise). The released
    svec(V_t) + N(0, sigma_t^2 I) (sigma_t^2 = ``variance(t)`` of the V counter, e.g.
    popcount(t) sigma^2 for the tree), off-diagonals divided by sqrt(2) and mirrored, is a
    symmetric V_t plus noise of variance sigma_t^2 on the diagonal and sigma_t^2 / 2 off
    it: the law of JKT's full-matrix noise symmetrised, (A + A^T)/2, from half the draws
    (review item 4; JKT spec 5.5 step 1), not the upper triangle mirrored (sigma_t^2 off
    the diagonal at the same sensitivity). Paper: each tree gets JKT's PrivateSum sigma
    at (eps/2, delta/2) with bound R^2 and R as printed (the V tree's element norm is R^2
    in either encoding); ``privacy`` reports their exact composition, and a
    ``PaperCalibrationWarning`` says when it exceeds epsilon. Secure noise: both counters
    round their parts to their grids g_V, g_u, which moves the stacked element by at most
    sqrt(g_V^2 d_V + g_u^2 d)/2, d_V the V counter's dimension (d(d+1)/2 with ``fixes``:
    less than the d^2 of vec), so s grows to s + sqrt(g_V^2 d_V + g_u^2 d) (replace-one;
    half of the rounding term under add/remove), and sigma is calibrated through zCDP on
    that sensitivity with dp-accounting's RDP accountant
    (``dpol.learners._joint_counters.joint_zcdp``; 4-11% more std). Releases of the V
    counter are exact grid values; dividing them by sqrt(2) is post-processing.

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
                 noise: str = "gaussian", n_jobs: int = 1, seed: object = None) -> None:
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
        self.n_jobs = check_int("n_jobs", n_jobs, low=1)
        if self.n_jobs > 2:
            raise fail("n_jobs", "be 1 or 2 (one helper process at most)", n_jobs)
        if self.is_private and self.delta == 0.0:
            raise fail("delta", "be > 0 (Gaussian tree noise)", self.delta)
        self.radius = min(bound / math.sqrt(self.alpha), bound**2 / self.alpha)
        self._counters, self._privacy = self._build_counters(resolve_counter(counter))
        self._w = np.zeros(dim)

    def _build_counters(self, cls: type) -> tuple[tuple, PrivacyGuarantee]:
        d, r2 = self.dim, self.bound**2
        sens_v = math.sqrt(2.0) * r2 if self.neighbouring == "replace_one" else r2
        dim_v = d * (d + 1) // 2 if self.fixes else d * d  # svec or vec (class Privacy)
        specs = [(dim_v, {"bound": r2, "element_sensitivity": sens_v}), (d, {"bound": r2})]

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
        # the off-diagonal entries of the released V_t carry half the variance of an
        # svec coordinate (or of a symmetrised full-matrix entry)
        s = np.sqrt(0.5 * self._counters[0].variance(steps.astype(np.int64)))
        return s * (2.0 * math.sqrt(self.dim) + 2.0 * math.sqrt(math.log(1.0 / self._RIDGE_BETA)))

    def _ridges(self, steps: np.ndarray) -> np.ndarray:
        """The ridge t alpha + lambda_t of the solve at each step t (float array)."""
        return steps * self.alpha + self._ridge(steps)

    def _learn(self, x: np.ndarray, y: float) -> None:
        # the counters' add, not a one-row run (whose setup cost ~250 us per step); the
        # elements, unscaling and solve are _run's on the same numbers: the same releases
        d = self.dim
        if not self.fixes:
            v_hat = self._counters[0].add(np.outer(x, x).ravel())
            u_hat = self._counters[1].add(y * x)
            self._w = self._solve_full(v_hat.reshape(1, d, d), u_hat[None, :],
                                       np.array([float(self.t)]))[0]
            return
        layout = _svec_layout(d)
        v_hat = self._counters[0].add(_svec_outer(x[None, :], layout)[0])
        u_hat = self._counters[1].add(y * x)
        v_hat /= layout.scale  # add returns a fresh array
        # _run's ridge: t alpha + 0.0 without noise_ridge, the same float either way
        ridge = (float(self._ridges(np.array([float(self.t)]))[0]) if self.noise_ridge
                 else float(self.t) * self.alpha)
        solver = _psd_solver(d)
        if d < 16:  # see _run: the BLAS limit costs ~9 us, more than a small solve
            self._w = solver.solve_clipped(v_hat, u_hat, ridge, self.radius)
            return
        with _blas_controller().limit(limits=1, user_api="blas"):
            self._w = solver.solve_clipped(v_hat, u_hat, ridge, self.radius)

    def _run(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Blockwise replay: the released weights before each step.

        Small matrices: multi-threaded BLAS only adds contention (measured on the 2-core
        machine: eigh of one 90x90 matrix 25.9 ms with 2 threads, 0.9 ms with one), so BLAS
        runs single-threaded, and with n_jobs=2 on long streams (_HELPER_DIM, _HELPER_ROWS)
        a forked helper process solves chunks of steps on the second core (_Helper) while this one
        draws the noise and solves the chunks the helper has no room for.
        """
        if not self.fixes:
            return self._run_full(X, y)
        n, d = X.shape
        start = self.t
        layout, solver = _svec_layout(d), _psd_solver(d)
        weights = np.empty((n + 1, d))  # w_t before step t, then the final one
        weights[0] = self._w
        after = weights[1:]  # where step t's solve lands (no second (n, d) array)
        block = max(_CHUNK, _SVEC_BLOCK_FLOATS // len(layout.scale) // _CHUNK * _CHUNK)
        helper = None
        with _blas_controller().limit(limits=1, user_api="blas"):  # the child inherits it
            if self.n_jobs > 1 and d >= _HELPER_DIM and n >= _HELPER_ROWS \
                    and _helper_possible():
                try:
                    helper = _Helper(solver, self.radius, after)
                except OSError:  # no process or memory to spare: one core it is
                    helper = None
            try:
                for lo in range(0, n, block):
                    hi = min(n, lo + block)
                    Xb = X[lo:hi]
                    v_hat = self._counters[0].run(_svec_outer(Xb, layout))
                    u_hat = self._counters[1].run(y[lo:hi, None] * Xb)
                    ridge = self._ridges(np.arange(start + lo + 1, start + hi + 1,
                                                   dtype=float))
                    for c in range(0, hi - lo, _CHUNK):
                        part = slice(c, c + _CHUNK)
                        if helper is not None and helper.submit(
                                v_hat[part], layout.scale, u_hat[part], ridge[part], lo + c):
                            continue
                        v_hat[part] /= layout.scale  # run returned our own array
                        solver.solve_rows(v_hat[part], u_hat[part], ridge[part], self.radius,
                                          after[lo + c:min(hi, lo + c + _CHUNK)])
            except BaseException:
                if helper is not None:
                    helper.kill()
                raise
            if helper is not None:
                helper.close()
        self.t += n
        self._w = weights[-1].copy()
        return weights[:-1]

    def _run_full(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``_run`` without fixes: vec(x x^T) elements, batched solves."""
        n, d = X.shape
        start = self.t
        before = np.empty((n, d))
        block = max(1, _BLOCK_FLOATS // (d * d))
        for lo in range(0, n, block):
            Xb, yb = X[lo:lo + block], y[lo:lo + block]
            v_hat = self._counters[0].run(np.einsum("ni,nj->nij", Xb, Xb).reshape(len(Xb), -1))
            u_hat = self._counters[1].run(yb[:, None] * Xb)
            steps = np.arange(start + lo + 1, start + lo + len(Xb) + 1, dtype=float)
            after = self._solve_full(v_hat.reshape(-1, d, d), u_hat, steps)
            before[lo] = self._w
            before[lo + 1:lo + len(Xb)] = after[:-1]
            self._w = after[-1].copy()
        self.t += n
        return before

    def _solve_full(self, v_hat: np.ndarray, u_hat: np.ndarray, steps: np.ndarray
                    ) -> np.ndarray:
        """Without fixes: (t alpha I + V_hat)^-1 u_hat as printed, warning when indefinite."""
        d = self.dim
        with _blas_controller().limit(limits=1, user_api="blas"):
            system = v_hat + (steps * self.alpha)[:, None, None] * np.eye(d)
            lam_min = np.linalg.eigvalsh(0.5 * (system + np.swapaxes(system, 1, 2)))[:, 0]
            if np.any(lam_min <= 0.0):
                warnings.warn(f"{int(np.sum(lam_min <= 0))} of {len(steps)} PQFTL systems "
                              "t*alpha*I + V_hat are indefinite; use fixes=True (JKT spec 5.5)",
                              NumericalWarning, stacklevel=4)
            return np.linalg.solve(system, u_hat[:, :, None])[:, :, 0]

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (y - X @ w) ** 2 + 0.5 * self.alpha * float(w @ w)

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return 0.5 * (y - np.einsum("ij,ij->i", W, X)) ** 2 \
            + 0.5 * self.alpha * np.einsum("ij,ij->i", W, W)
