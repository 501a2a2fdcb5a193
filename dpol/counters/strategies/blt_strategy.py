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

#: from this dimension a block steps through time row by row instead of lfilter along time
#: (measured, 5 buffers, us per row: d = 300 lfilter 11 against 23; d = 1000 43-64
#: against 28; d = 4095, PQFTL's svec at d = 90, 240-307 against 42)
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

    ``correlate`` runs blocks by ``scipy.signal.lfilter`` from the current buffers (the
    same draws, equal to rounding), or row by row from ``dim`` 512 (bit-identical).

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
        return {"u": np.zeros((self.thetas.size, dim)), "n": np.zeros(dim)}

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        if n > 1 and rows.shape[1] < ROW_LOOP_DIM:
            return self._filtered(state, rows)
        # one recursion for add and for wide blocks: lfilter walks each coordinate along
        # time with a stride of dim floats, which misses the cache on wide rows
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

    def _filtered(self, state: dict, z: np.ndarray) -> np.ndarray:
        """A block of narrow rows: each buffer filtered along time, from the current state."""
        lfilter = _linear_filter()
        u = state["u"]
        acc = np.zeros(z.shape)  # sum_i omega_i u_i(before step t), in the recursion's order
        # the same additions and products as the row loop, in arrays made once: a fresh
        # product a buffer and a stacked copy for the cumsum took 30% of this function
        product = np.empty((z.shape[0] - 1, z.shape[1]))
        for i, (theta, omega) in enumerate(zip(self.thetas, self.omegas, strict=True)):
            after, _ = lfilter(_ONE, np.array([1.0, -theta]), z, 0, theta * u[i][None, :])
            acc[0] += omega * u[i]
            acc[1:] += np.multiply(omega, after[:-1], out=product)
            u[i] = after[-1]
        acc += z  # y = z + acc (addition commutes, bit for bit)
        acc[0] += state["n"]  # the running sum n_t = n_{t-1} + y_t continued from n
        noise = np.cumsum(acc, axis=0, out=acc)
        state["n"] = noise[-1].copy()
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        coefficients = inverse_coefficients(self.thetas, self.omegas, len(values)) \
            if self.horizon is None else self.coefficients[: len(values)]
        return signal.fftconvolve(values, coefficients[:, None], axes=0)[: len(values)]
