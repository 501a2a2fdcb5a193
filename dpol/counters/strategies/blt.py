"""The buffered linear Toeplitz (BLT) strategy: O(b d) streaming noise, near-optimal loss.

Parameters and their optimiser: :mod:`dpol.counters.strategies.blt_optimizer`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import fftconvolve, lfilter

from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.blt_optimizer import state_matrix
from dpol.counters.strategies.toeplitz import MATRIX_REFUSAL

__all__ = ["BltStrategy", "inverse_coefficients"]

#: from this dimension a block steps through time row by row instead of lfilter along time
#: (measured, 5 buffers, us per row: d = 300 lfilter 11 against 23; d = 1000 43-64
#: against 28; d = 4095, PQFTL's svec at d = 90, 240-307 against 42)
ROW_LOOP_DIM = 512


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
    return np.concatenate([[1.0], (rows @ cols).ravel()[: n - 1]])


class BltStrategy(Strategy):
    """Encoder C x with C = G^{-1}; release noise A G z streamed from b buffers.

    (G z)_t = z_t + sum_i omega_i u_i, then u_i <- theta_i u_i + z_t, and the release
    noise is n_t = n_{t-1} + (G z)_t: O(b d) state (buffers u and n). Variance at t per
    unit: sum_{k < t} h_k^2 with h = cumsum(g) (the squared row t of B = A G); column 1
    of C has the largest norm, sqrt(sum_{k < T} c_k^2) (a prefix of the same sum for
    every later column).

    ``correlate`` runs the recursion row by row for one step and, from ``dim`` 512 on,
    for a block too (whole-row numpy operations, bit-identical to the steps); narrower
    blocks filter each buffer along time with ``scipy.signal.lfilter`` started from the
    current buffers: the same draws, equal to rounding.

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

    def __init__(self, horizon: int, thetas: np.ndarray, omegas: np.ndarray) -> None:
        super().__init__(horizon)
        self.thetas, self.omegas = thetas, omegas
        s = -omegas / (1.0 - thetas)
        k = np.arange(horizon, dtype=np.float64)
        h = (1.0 - s.sum()) + s @ np.exp(np.log(thetas)[:, None] * k[None, :])
        self._cum_sq = np.cumsum(h**2)
        #: first column of the encoder C
        self.coefficients = inverse_coefficients(thetas, omegas, horizon)
        self._norm_sq = float(np.sum(self.coefficients**2))

    @property
    def levels(self) -> int:
        return self.horizon  # the first element enters every encoder value

    def column_norm_sq(self, participation: str = "single") -> float:
        super().column_norm_sq(participation)
        return self._norm_sq

    def variance(self, t: np.ndarray) -> np.ndarray:
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
        u = state["u"]
        acc = np.zeros(z.shape)  # sum_i omega_i u_i(before step t), in the recursion's order
        for i, (theta, omega) in enumerate(zip(self.thetas, self.omegas, strict=True)):
            after, _ = lfilter([1.0], [1.0, -theta], z, axis=0, zi=theta * u[i][None, :])
            acc[0] += omega * u[i]
            acc[1:] += omega * after[:-1]
            u[i] = after[-1]
        y = z + acc
        noise = np.cumsum(np.vstack([state["n"][None, :], y]), axis=0)[1:]
        state["n"] = noise[-1].copy()
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        return fftconvolve(values, self.coefficients[: len(values), None],
                           axes=0)[: len(values)]
