"""PQFTL's post-processing kernels: svec elements, the PSD-projected solve, a helper process.

Kept apart from :mod:`dpol.learners.private_quadratic_ftl` (the algorithm) because they are
numerical machinery measured for speed; every number here is post-processing of
the counters' releases.
"""

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

from dpol.errors import NumericalWarning
from dpol.learners._multi_output import eigen_solve, tridiagonal_block

#: from this dimension the PSD solver's tridiagonal route beats dsyevd (measured, one
#: core, per indefinite step: 99 against 114 us at d = 24, 60 against 28 us at d = 8)
_TRIDIAGONAL_DIM = 24
#: the tridiagonal route finds the negative eigenvalues by bisection where Cholesky proved
#: at most this share of d of them (failing in the last third of the columns). Measured
#: at d = 90 over the issue-8 stream: bisection costs ~3 + 20 k us against dsterf's ~120
#: for all 90, and the steps so chosen (23% of the indefinite ones) have k <= 9, mean 3:
#: ~14 us saved per indefinite step on average (shares from 20% to 40% of d save 10-14)
_BISECT_SHARE = 1 / 3
#: rows per helper task, and tasks in flight (the shared buffers: ~8 MB at d = 90)
_CHUNK = 64
_SLOTS = 4
_SQRT2 = math.sqrt(2.0)

_THREADPOOLS: list[ThreadpoolController] = []  # built on first use (inspecting costs ~1 ms)


def _blas_controller() -> ThreadpoolController:
    """The BLAS limiter: the solves of small matrices run single-threaded (PQFTL's _run)."""
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


def _svec_outer(X: np.ndarray, layout: _Svec, out: np.ndarray | None = None) -> np.ndarray:
    """svec(x x^T) of every row, C-ordered: (x_i scale_ij) x_j, the same floats either way.

    C order matters: the counters clip rows by their norms, and a column-ordered block
    (what X[:, index] gives) sums them in another order than ``add``'s single row. One row
    (``learn_one``): a gather, 2.8 us at d = 10; a block: one slice product per i, 7.5 us a
    row at d = 90 and 256 rows against 28-45 us for the gather (measured). ``out``: a
    C-contiguous (n, d(d+1)/2) array to fill, by the block path whatever n (``_run``'s
    last block may be one row).
    """
    n, d = X.shape
    if n == 1 and out is None:
        x = X[0]
        out = x[layout.rows]
        out *= layout.scale
        out *= x[layout.cols]
        return out[None, :]
    if out is None:
        out = np.empty((n, len(layout.rows)))
    scaled = X * _SQRT2  # the gather's off-diagonal scale
    pos = 0
    for i in range(d):
        np.multiply(X[:, i], X[:, i], out=out[:, pos])  # scale 1 on the diagonal
        np.multiply(scaled[:, i, None], X[:, i + 1:], out=out[:, pos + 1:pos + d - i])
        pos += d - i
    return out


def _tridiagonal_eigh(diag: np.ndarray, off: np.ndarray) -> tuple:
    """All eigenpairs of a symmetric tridiagonal matrix, (lam, z, info): dstevd (divide
    and conquer, wrapped from scipy 1.16 on), else dstev (implicit QL, same call, slower:
    only ~0.4% of the steps of the issue-8 stream come here)."""
    return (getattr(lapack, "dstevd", None) or lapack.dstev)(diag, off)


class _PsdSolver:
    """w = (P(S) + ridge I)^-1 u, S symmetric given by its lower packed entries (svec order,
    unscaled), P the projection on the PSD cone (negative eigenvalues set to 0).

    Where Cholesky of S succeeds, P(S) = S and a Cholesky solve gives w. Elsewhere, with
    S = Q T Q^T and the negative eigenpairs (lam, Z) of T,
        w = Q [(T + ridge I)^-1 (c - Z Z^T c) + Z Z^T c / ridge],  c = Q^T u,
    exact, well conditioned when lam_min >= -ridge/2; below that, through all eigenpairs
    of T: w = Q Z (Z^T c / (max(lam, 0) + ridge)). About 7x faster than dsyevd on the
    Cholesky route at d = 90 (docs/benchmarks/defaults.md). The same LAPACK calls on the
    same numbers in any block or process: ``run`` reproduces ``learn_one`` bit for bit.
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
        """(P(S) + ridge I)^-1 u; u (d,) or (d, K): K right-hand sides, one factorisation."""
        a = self._unpack(ap)
        failed = lapack.dpotrf(a, lower=1, clean=0)[1]  # a copy: a itself is kept
        if failed == 0:
            a.reshape(-1, order="F")[:: self.d + 1] += ridge  # a view: a is Fortran-ordered
            _, w, info = lapack.dposv(a, u, lower=1, overwrite_a=1)
            if info == 0:  # else a ridge below the round-off of S: the routes below
                return w
            a = self._unpack(ap)
        if self.tridiagonal:
            # Cholesky failing at column j proves S's leading (j-1)-block positive
            # definite, so by interlacing S has at most d - j + 1 negative eigenvalues
            w = self._tridiagonal(a, u, ridge, bisect=failed > 0 and
                                  self.d - failed + 1 <= self.d * _BISECT_SHARE)
            if w is not None:
                return w
            a = self._unpack(ap)
        lam, vec, info = lapack.dsyevd(a, lower=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"LAPACK dsyevd did not converge (info={info})")
        return eigen_solve(vec, lam, u, ridge)

    def _tridiagonal(self, a: np.ndarray, u: np.ndarray, ridge: float, bisect: bool = False
                     ) -> np.ndarray | None:
        """The tridiagonal route (class docstring); None if LAPACK fails.

        ``bisect``: find the eigenvalues <= 0 alone by bisection (dstebz, ~3 + 20 k us at
        d = 90) rather than all of them (dsterf, ~120 us); a choice of speed, either finds
        the negative eigenpairs to working accuracy.
        """
        t, diag, off, tau, info = lapack.dsytrd(a, lower=1, lwork=self.lwork, overwrite_a=1)
        if bisect:  # the eigenvalues in (-inf, 0] and T's blocks for dstein, grouped by
            # block ("B"), as dstein requires: ordered over the whole matrix ("E"), a T
            # that splits (a zero off-diagonal) can list a later block first, which
            # dstein refuses with a LAPACK message on stderr (parameter 6, IBLOCK)
            k, lam, iblock, isplit, info = lapack.dstebz(diag, off, 1, -np.inf, 0.0, 0, 0,
                                                         0.0, b"B")
        else:  # all eigenvalues, ascending (copies: diag, off are kept)
            lam, info = lapack.dsterf(diag, off)
            k = int(np.searchsorted(lam, 0.0))  # eigenvalues < 0
            iblock, isplit = self.iblock, self.isplit
        if info != 0:
            return None
        # T + ridge I too ill-conditioned to solve (lam ascends only within a block)
        every, z = k > 0 and float(np.min(lam[:k])) < -0.5 * ridge, None
        if every:  # all eigenpairs of T
            lam, z, info = _tridiagonal_eigh(diag, off)
        elif k:
            z, info = lapack.dstein(diag, off, lam[:k], iblock, isplit)
        if info != 0:
            return None
        # Q = diag(1, Q1), Q1 the product of the reflectors below the subdiagonal; the
        # unblocked dormqr (lwork=1) suits one vector, a contiguous copy spares f2py two
        refl = np.asfortranarray(t[1:, :-1])
        if u.ndim > 1:  # K right-hand sides: the same steps on (d, K) blocks
            return tridiagonal_block(refl, tau, diag, off, u, ridge, lam, z, k, every)
        c = np.empty(self.d)
        c[0] = u[0]
        c[1:] = lapack.dormqr("L", "T", refl, tau, u[1:, None], 1)[0][:, 0]
        if every:
            x = z @ ((c @ z) / (np.maximum(lam, 0.0) + ridge))
        else:
            if k:
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
        norm = math.sqrt(float(w @ w if w.ndim == 1 else np.vdot(w, w)))  # Frobenius
        return w if norm <= radius else w * (radius / norm)

    def solve_released(self, V: np.ndarray, scale: np.ndarray, U: np.ndarray,
                       ridge: np.ndarray, radius: float, out: np.ndarray,
                       work: np.ndarray) -> None:
        """``solve_clipped`` of every row of the V counter's releases (svec, off-diagonals
        times sqrt(2)) into ``out``, unscaled into ``work`` (``V`` itself is allowed): one
        division wherever a chunk is solved, so either process gives the same bits."""
        np.divide(V, scale, out=work)
        for i in range(len(U)):
            out[i] = self.solve_clipped(work[i], U[i], float(ridge[i]), radius)


@functools.lru_cache(maxsize=16)
def _psd_solver(d: int) -> _PsdSolver:
    return _PsdSolver(d)



def _solve_printed(v_hat: np.ndarray, u_hat: np.ndarray, ridge: np.ndarray) -> np.ndarray:
    """PQFTL without fixes: (ridge_t I + V_hat_t)^-1 u_hat_t as printed, V_hat the full d x d
    release, warning when a system is indefinite."""
    d = u_hat.shape[1]
    with _blas_controller().limit(limits=1, user_api="blas"):
        system = v_hat + ridge[:, None, None] * np.eye(d)
        lam_min = np.linalg.eigvalsh(0.5 * (system + np.swapaxes(system, 1, 2)))[:, 0]
        if np.any(lam_min <= 0.0):
            warnings.warn(f"{int(np.sum(lam_min <= 0))} of {len(ridge)} PQFTL systems "
                          "t*alpha*I + V_hat are indefinite; use fixes=True "
                          "(docs/errata.md, JKT-5)", NumericalWarning, stacklevel=4)
        return np.linalg.solve(system, u_hat[:, :, None])[:, :, 0]

def _helper_possible() -> bool:
    """Whether a helper process can use a second core: Linux (fork), two usable cores."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return len(os.sched_getaffinity(0)) >= 2


def _shared_empty(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised float64 array in anonymous shared memory: a child forked after
    this sees the parent's writes and the parent the child's. Freed with the array."""
    count = math.prod(shape)
    return np.frombuffer(mmap.mmap(-1, max(1, count) * 8), dtype=np.float64,
                         count=count).reshape(shape)


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

    A process, not a thread: GIL hand-offs between LAPACK calls made two solver threads
    no faster than one (docs/benchmarks/defaults.md). The parent draws the noise in order
    and solves a chunk itself whenever ``_SLOTS`` are queued; a step is a pure function of
    (S, u, ridge), so who solves it does not change its bits. The child runs only LAPACK
    and numpy on shared buffers, writes its w into ``out`` (shared memory,
    ``_shared_empty``) and leaves by ``os._exit``; if it dies, the parent solves its chunks.
    """

    _MSG = struct.Struct("iii")  # (slot, rows, first row of out)

    def __init__(self, solver: _PsdSolver, radius: float, out: np.ndarray,
                 scale: np.ndarray) -> None:
        d = self.d = solver.d
        self.p = d * (d + 1) // 2
        self.solver, self.radius, self.out, self.scale = solver, radius, out, scale
        width = self.p + d + 1  # a row: svec(S) as released (scaled), u, ridge
        self._mem = mmap.mmap(-1, _SLOTS * _CHUNK * width * 8)  # anonymous: shared by fork
        self.slots = np.frombuffer(self._mem, dtype=np.float64).reshape(_SLOTS, _CHUNK, width)
        self._unscaled = np.empty((_CHUNK, self.p))
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
        self.free, self.busy = list(range(_SLOTS)), {}  # busy: slot -> (rows, first row)
        self.dead = False

    def _columns(self, rows: np.ndarray) -> tuple:
        p, d = self.p, self.d
        return rows[:, :p], rows[:, p:p + d], rows[:, p + d]

    def _serve(self, task_r: int, done_w: int) -> None:
        while (msg := _read(task_r, self._MSG.size)) is not None:
            self._solve_slot(*self._MSG.unpack(msg))
            os.write(done_w, msg)

    def _solve_slot(self, slot: int, n: int, start: int) -> None:
        """Solve a slot's chunk into rows start.. of ``out`` (shared: no copy back),
        unscaled into a private array (a chunk the child dies on is solved again from the
        shared one); one array for every chunk, as ``_run``'s elements."""
        V, U, ridge = self._columns(self.slots[slot, :n])
        self.solver.solve_released(V, self.scale, U, ridge, self.radius,
                                   self.out[start:start + n], self._unscaled[:n])

    def submit(self, V: np.ndarray, U: np.ndarray, ridge: np.ndarray, start: int) -> bool:
        """Queue rows start.. (V as the counter released it) if a slot is free; False if
        none is. The child unscales: in the late, positive definite steps this process
        (noise and counters) is the slower one, and the division costs ~2 us a row."""
        self.collect(wait=False)
        if self.dead or not self.free:
            return False
        slot = self.free.pop()
        Vs, Us, ridges = self._columns(self.slots[slot, :len(U)])
        Vs[:] = V
        Us[:] = U
        ridges[:] = ridge
        try:
            os.write(self._task_w, self._MSG.pack(slot, len(U), start))
        except BrokenPipeError:  # the child died: collect() solves what it had queued
            self.dead = True
            self.free.append(slot)
            return False
        self.busy[slot] = (len(U), start)
        return True

    def collect(self, wait: bool) -> None:
        """Free the slots of finished chunks; with ``wait``, until none is left."""
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
        n, start = self.busy.pop(slot)
        if solve:
            self._solve_slot(slot, n, start)
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
