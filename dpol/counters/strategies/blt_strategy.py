"""The buffered linear Toeplitz (BLT) strategy: O(b d) streaming noise, near-optimal loss.

Parameters and their optimiser: :mod:`dpol.counters.strategies.blt_optimizer`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.linalg import solve_discrete_lyapunov

from dpol._lazy import scipy_signal as signal
from dpol.counters.strategies._participation import (
    Participation,
    toeplitz_envelope_sensitivity_sq,
)
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.blt_optimizer import state_matrix
from dpol.counters.strategies.toeplitz_strategy import MATRIX_REFUSAL

__all__ = ["BltStrategy", "infinite_column_norm_sq", "inverse_coefficients", "row_norm_sq"]

#: from this dimension a block steps through time row by row (measured against the lfilter
#: filters that preceded the blocked products, 5 buffers, us per row: d = 300 lfilter 11
#: against 23; d = 1000 43-64 against 28; d = 4095, PQFTL's svec at d = 90, 240-307
#: against 42)
ROW_LOOP_DIM = 512
#: steps per block of the variance table's construction (a 5 x 2^16 float block: 2.5 MB)
_BLOCK = 1 << 16


def inverse_coefficients(thetas: np.ndarray, omegas: np.ndarray, n: int) -> np.ndarray:
    """c_0..c_{n-1} of C = G^{-1}: c_k = -omega^T M^(k-1) 1, blocked in O(n b + sqrt(n) b^2)."""
    m = state_matrix(thetas, omegas)
    width = max(1, math.isqrt(max(n - 1, 1)))
    cols = np.empty((thetas.size, width))  # M^j 1, j < width
    vec = np.ones(thetas.size)
    for j in range(width):
        cols[:, j] = vec
        vec = m @ vec
    step = np.linalg.matrix_power(m, width)
    rows = np.empty((-(-(n - 1) // width), thetas.size))  # -omega^T M^(q width)
    row = -omegas
    for q in range(rows.shape[0]):
        rows[q] = row
        row = row @ step
    out = np.empty(n)  # filled, not concatenated: one T-long copy less at long horizons
    out[0] = 1.0
    out[1:] = (rows @ cols).ravel()[: n - 1]
    return out


def infinite_column_norm_sq(thetas: np.ndarray, omegas: np.ndarray) -> float:
    """sum over all k >= 0 of c_k^2: 1 + omega^T X omega, X = sum_j M^j 1 1^T (M^j)^T the
    solution of the Stein equation X = M X M^T + 1 1^T (c_k = -omega^T M^(k-1) 1).

    The series converges iff the spectral radius of M is below 1 (C = G^{-1} stable),
    which is checked: a ``ValueError`` otherwise.

    Examples
    --------
    >>> th, om = np.array([0.5]), np.array([-0.25])  # M = 0.75: c = 1, 0.25, 0.25 0.75, ..
    >>> round(infinite_column_norm_sq(th, om), 12), round(1 + 0.0625 / (1 - 0.5625), 12)
    (1.142857142857, 1.142857142857)
    """
    m = state_matrix(thetas, omegas)
    radius = float(np.max(np.abs(np.linalg.eigvals(m))))
    if radius >= 1.0:
        raise ValueError(f"the BLT's inverse is not stable (spectral radius {radius:.6g} "
                         ">= 1): its column norms grow without bound")
    ones = np.ones((thetas.size, 1))
    return 1.0 + float(omegas @ solve_discrete_lyapunov(m, ones @ ones.T) @ omegas)


def row_norm_sq(thetas: np.ndarray, omegas: np.ndarray, t: np.ndarray) -> np.ndarray:
    """sum_{k < t} h_k^2 in closed form for any steps t >= 1 (h_k = r + sum_i s_i
    theta_i^k, s = -omega / (1 - theta), r = 1 - sum s): r^2 t + 2 r sum_i s_i
    (1 - theta_i^t) / (1 - theta_i) + sum_ij s_i s_j (1 - (theta_i theta_j)^t) /
    (1 - theta_i theta_j); it grows like r^2 t.

    Examples
    --------
    >>> th, om = np.array([0.5]), np.array([-0.25])  # h = 1, 0.75, 0.625, ...
    >>> row_norm_sq(th, om, np.array([1, 2, 3])).tolist()
    [1.0, 1.5625, 1.953125]
    """
    s = -omegas / (1.0 - thetas)
    rest = 1.0 - float(np.sum(s))
    logs = np.log(thetas)
    t = np.asarray(t, dtype=np.float64)[..., None]
    single = np.expm1(t * logs) / np.expm1(logs)  # sum_{k<t} theta_i^k
    pair = (logs[:, None] + logs[None, :]).ravel()
    double = np.expm1(t * pair) / np.expm1(pair)  # sum_{k<t} (theta_i theta_j)^k
    return (rest * rest * t[..., 0] + 2.0 * rest * (single @ s)
            + double @ np.outer(s, s).ravel())


#: lfilter's numerator (b = [1]): u_t = z_t + theta u_{t-1}
_ONE = np.array([1.0])
#: rows per block of ``run``'s noise (``BltStrategy._blocked``): L = 32 took 1.0 us a row
#: of 77 coordinates against 1.2 at L = 16 and 1.3 at 64 (the filter: 3.4)
BLOCK_ROWS = 32


class _BlockMatrices:
    """The blocked recursion's matrices for blocks of ``rows`` steps (a function of the
    BLT parameters alone). From the buffers u and total n before a block and its draws
    z (rows x d): the release noise is n + F u + H z, and the buffers after it D u + P z.

    H (rows x rows): lower-triangular Toeplitz of h = cumsum(g), g_0 = 1, g_k = sum_i
    omega_i theta_i^(k-1) (the noise's response to one draw); F (rows x b): F_ti = omega_i
    sum_{j <= t} theta_i^j (the buffers' own decay, summed); P (b x rows): theta_i^(rows-1-s);
    D: theta_i^rows.
    """

    def __init__(self, thetas: np.ndarray, omegas: np.ndarray, rows: int) -> None:
        powers = thetas[None, :] ** np.arange(rows, dtype=np.float64)[:, None]  # (rows, b)
        g = np.empty(rows)
        g[0] = 1.0
        g[1:] = powers[:-1] @ omegas
        h = np.cumsum(g)
        lag = np.subtract.outer(np.arange(rows), np.arange(rows))
        self.H = np.where(lag >= 0, h[np.maximum(lag, 0)], 0.0)
        self.F = np.cumsum(powers, axis=0) * omegas  # sums of powers: no 1 - theta^k
        self.P = np.ascontiguousarray(powers[::-1].T)
        self.D = thetas**rows


@functools.cache
def _linear_filter():
    """``f(b, a, x, axis, zi)``: the C filter ``scipy.signal.lfilter`` calls for arrays
    ``b``, ``a`` of float64 with ``len(a) > 1`` (the same function, so the same bits),
    without lfilter's argument handling, which cost ~30 us a call (a run of ridge calls it
    5 times a chunk of 1000 rows); lfilter itself where scipy moves it."""
    try:
        from scipy.signal._sigtools import _linear_filter as direct
    except ImportError:  # pragma: no cover - a scipy that moved its private filter
        return lambda b, a, x, axis, zi: signal.lfilter(b, a, x, axis=axis, zi=zi)
    return direct


class BltStrategy(Strategy):
    """Encoder C x with C = G^{-1}; release noise A G z streamed from b buffers.

    (G z)_t = z_t + sum_i omega_i u_i, then u_i <- theta_i u_i + z_t, and the release
    noise is n_t = n_{t-1} + (G z)_t: O(b d) state (buffers u and n). Variance at t per
    unit: sum_{k < t} h_k^2 with h = cumsum(g) (the squared row t of B = A G); column 1
    of C has the largest norm, sqrt(sum_{k < T} c_k^2) (a prefix of the same sum for
    every later column).

    ``correlate`` runs blocks of narrow rows as matrix products over blocks of
    ``BLOCK_ROWS`` steps (the same draws, equal to rounding), or row by row from ``dim``
    512 (bit-identical).

    Parameters
    ----------
    horizon : int
    thetas, omegas : np.ndarray of shape (b,)
        Validated BLT parameters
        (:func:`~dpol.counters.strategies.blt_optimizer.check_blt_parameters`).

    Examples
    --------
    >>> from dpol.counters.strategies.blt_optimizer import optimal_blt_parameters
    >>> s = BltStrategy(2**10, *optimal_blt_parameters(2**10))
    >>> round(s.loss(), 2), s.thetas.shape
    (10.71, (5,))
    """

    name = "blt"
    refusal = MATRIX_REFUSAL
    continues_vectorized = True
    unbounded = True  # horizon None: the column norms summed over every t (Privacy)

    def __init__(self, horizon: int | None, thetas: np.ndarray, omegas: np.ndarray) -> None:
        super().__init__(horizon)
        self.thetas, self.omegas = thetas, omegas
        if horizon is None:  # an endless stream: the whole series of column norms
            self._norm_sq = infinite_column_norm_sq(thetas, omegas)
            return
        # h and its running sum of squares in blocks: the b x T exponentials of one pass
        # took 5 x 80 MB at T = 10^7; a block of h has the bits of those columns, and a
        # cumsum continued from the last total those of one cumsum (sequential sums)
        s = -omegas / (1.0 - thetas)
        rest, logs = 1.0 - s.sum(), np.log(thetas)[:, None]
        self._cum_sq = np.empty(horizon)
        total = 0.0
        for lo in range(0, horizon, _BLOCK):
            hi = min(horizon, lo + _BLOCK)
            square = (rest + s @ np.exp(logs * np.arange(lo, hi, dtype=np.float64))) ** 2
            square[0] += total
            total = np.cumsum(square, out=self._cum_sq[lo:hi])[-1]
        #: first column of the encoder C
        self.coefficients = inverse_coefficients(thetas, omegas, horizon)
        self._norm_sq = float(np.sum(self.coefficients**2))

    @property
    def levels(self) -> int | None:
        return self.horizon  # the first element enters every encoder value (None: all)

    def _single_norm_sq(self) -> float:
        return self._norm_sq

    def _participation_norm_sq(self, participation: Participation) -> float:
        if self.horizon is None:
            return super()._participation_norm_sq(participation)  # refused: no horizon
        # exact: C's coefficients are non-negative and non-increasing (BltCounter's
        # Privacy), so the envelope is C itself, up to rounding in a flat tail
        return toeplitz_envelope_sensitivity_sq(self.coefficients, self.horizon,
                                                participation)

    def variance(self, t: np.ndarray) -> np.ndarray:
        if self.horizon is None:
            return row_norm_sq(self.thetas, self.omegas, t)
        return self._cum_sq[t - 1]

    def init_state(self, dim: int) -> dict:
        # u, n: the buffers and the noise total at the start of the current block; z: the
        # draws of its steps so far (fewer than BLOCK_ROWS; none outside ``run``'s blocks)
        return {"u": np.zeros((self.thetas.size, dim)), "n": np.zeros(dim),
                "z": np.zeros((0, dim))}

    def restore_state(self, state: dict, dim: int) -> dict:
        # a state saved before the blocks (u, n alone) is at a block's start
        return super().restore_state({"z": [], **state}, dim)

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        if rows.shape[1] < ROW_LOOP_DIM:  # add too: one step is a block's next row
            return self._blocked(state, rows)
        return self._recursion(state, rows)

    def _recursion(self, state: dict, rows: np.ndarray) -> np.ndarray:
        """The recursion step by step, on wide rows (a block's product there walks each
        coordinate along time with a stride of dim floats, which misses the cache)."""
        u, total = state["u"], state["n"]
        thetas, omegas = self.thetas[:, None], self.omegas[:, None]
        noise = np.empty_like(rows)
        for t, z in enumerate(rows):
            y = z + (omegas * u).sum(axis=0)  # sum_i omega_i u_i, in the order of i
            u = thetas * u + z
            total = total + y
            noise[t] = total
        state["u"], state["n"] = u, total
        return noise

    @functools.cached_property
    def _blocks(self) -> _BlockMatrices:
        return _BlockMatrices(self.thetas, self.omegas, BLOCK_ROWS)

    def _blocked(self, state: dict, z: np.ndarray) -> np.ndarray:
        """Narrow rows in blocks of BLOCK_ROWS steps, each a matrix product
        (:class:`_BlockMatrices`), not 5 first-order recursions a coordinate (lfilter ran
        them at 5-6 ns a step, each waiting for the one before: 3.4 us a row of PQFTL's
        77 coordinates at d = 11, this 1.0). The noise of the recursion to rounding (~1e-13
        of its standard deviation). Blocks start where the state's block did, and a
        block's row t is a product with row t of H, zero past t: a block cut between
        calls (``add`` is a call of one step) gives the bits of one call, since the draws
        of its first part are kept in the state.
        """
        m, L = self._blocks, BLOCK_ROWS
        kept = len(state.get("z", ()))  # none in a state saved before the blocks
        if len(z) == 1 and kept + 1 < L:  # add inside a block: the same products, less
            return self._step(state, z, kept)
        z = np.concatenate([state["z"], z]) if kept else z
        n, d = z.shape
        full, blocks = n // L, -(-n // L)
        if n % L:  # the last block zero-padded: H's zeros past each row ignore the pad
            padded = np.zeros((blocks * L, d))
            padded[:n] = z
            z = padded
        Z = z.reshape(blocks, L, d)
        u = state["u"]
        starts = np.empty((blocks, *u.shape))  # the buffers at each block's start
        starts[0] = u
        if full:  # u_(k+1) = D u_k + P z_k: one first-order recursion over the blocks
            PZ = np.matmul(m.P, Z[:full])
            lfilter = _linear_filter()
            for i, decay in enumerate(m.D):
                after, _ = lfilter(_ONE, np.array([1.0, -decay]), PZ[:, i], 0,
                                   decay * u[i][None, :])
                starts[1:, i] = after[:blocks - 1]
                if full == blocks:
                    state["u"][i] = after[-1]
        noise = np.matmul(m.H, Z)
        noise += np.matmul(m.F, starts)
        # the totals at each block's start, n_(k+1) = n_k + (its last row so far): a
        # running sum over the blocks, continued from the state's
        totals = np.cumsum(np.vstack([state["n"][None, :], noise[:-1, -1]]), axis=0)
        noise += totals[:, None, :]
        flat = noise.reshape(blocks * L, d)
        if full == blocks:
            state["n"], state["z"] = flat[n - 1].copy(), z[:0]
        else:  # the last block goes on in the next call, from its start
            state["u"], state["n"] = starts[-1], totals[-1]
            state["z"] = z[full * L:n].copy()
        return flat[kept:n]

    def _step(self, state: dict, z: np.ndarray, kept: int) -> np.ndarray:
        """``_blocked`` of one step that does not end its block (``add``): the same
        products and sums (H and F times the whole padded block), only its row kept
        (``add`` took 15 us with the recursion, 30 with ``_blocked``, this ~20)."""
        m = self._blocks
        padded = np.zeros((BLOCK_ROWS, z.shape[1]))
        padded[:kept] = state["z"]
        padded[kept] = z[0]
        noise = np.matmul(m.H, padded[None])[0]
        noise += np.matmul(m.F, state["u"][None])[0]
        noise[kept] += state["n"]
        state["z"] = padded[:kept + 1]
        return noise[kept:kept + 1]

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        coefficients = inverse_coefficients(self.thetas, self.omegas, len(values)) \
            if self.horizon is None else self.coefficients[: len(values)]
        return signal.fftconvolve(values, coefficients[:, None], axes=0)[: len(values)]
