"""Banded Toeplitz strategies: an encoder with b bands, noise streamed by a recursion.

The encoder C is lower-triangular Toeplitz with first column c_0..c_{b-1}, 0, ..., 0
(c_0 > 0): one element enters b encoder values. The decoder B = A C^-1 is the prefix sum
of the inverse filter: (C^-1 z)_t = y_t with c_0 y_t = z_t - sum_{0<k<b} c_k y_{t-k}, so
the release noise n_t = n_{t-1} + y_t streams from the last b - 1 values of y (O(b d)).
By default the band is the first b square-root coefficients, the banded square root of
Kalinin and Lampert 2024 ("Banded square root matrix factorization for differentially
private model training"): positive and decreasing, so the polynomial sum_k c_k x^k has
no root inside the unit disk (Enestrom-Kakeya) and the recursion does not blow up.
"""

from __future__ import annotations

import numpy as np

from dpol._lazy import scipy_signal as signal
from dpol.counters.strategies._participation import Participation, toeplitz_sensitivity_sq
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients

__all__ = ["BandedToeplitzStrategy"]


class BandedToeplitzStrategy(Strategy):
    """Encoder C x with b bands; release noise A C^-1 z from the inverse recursion.

    The largest column norm is sqrt(sum_k c_k^2); the variance at t is sum_{k < t} h_k^2,
    h = cumsum of the impulse response of 1 / (sum_k c_k x^k). ``correlate`` filters a
    block with ``scipy.signal.lfilter`` (the same draws, equal to rounding).

    Parameters
    ----------
    horizon : int
    bands : int
        b >= 1 (b = 1: no correlation, the noise of each step released as a running sum;
        b >= T: the square root itself for the default band).
    coefficients : np.ndarray of shape (b,), optional
        The band c_0..c_{b-1} (c_0 > 0); default the square-root coefficients.

    Examples
    --------
    >>> s = BandedToeplitzStrategy(2**10, 32)
    >>> round(s.loss(), 2), round(s.loss("mean"), 2), s.column_norm_sq() < 4
    (58.1, 30.68, True)
    """

    name = "banded_toeplitz"
    refusal = ("a banded Toeplitz counter (its l1 column norm grows with the bands; the "
               "pure-DP calibration counts weight-one nodes)")
    continues_vectorized = True

    def __init__(self, horizon: int, bands: int, coefficients: np.ndarray | None = None
                 ) -> None:
        super().__init__(horizon)
        self.bands = min(bands, horizon)
        if coefficients is None:
            coefficients = sqrt_toeplitz_coefficients(self.bands)
        #: the band c_0..c_{b-1} of the encoder (the first column of C, zeros after)
        self.coefficients = np.asarray(coefficients, dtype=np.float64)[: self.bands]
        impulse = np.zeros(horizon)
        impulse[0] = 1.0
        h = np.cumsum(signal.lfilter([1.0], self.coefficients, impulse))  # row sums of B, by lag
        self._cum_sq = np.cumsum(h**2)
        self._norm_sq = float(np.sum(self.coefficients**2))

    @property
    def levels(self) -> int:
        return self.bands  # one element enters b encoder values

    def _single_norm_sq(self) -> float:
        return self._norm_sq

    def _participation_norm_sq(self, participation: Participation) -> float:
        exact = toeplitz_sensitivity_sq(self.coefficients, self.horizon, participation)
        if exact is None and self.bands <= participation.min_separation:
            # columns b apart do not overlap: X is diagonal on every pattern, whose worst
            # is the first k columns (the later ones lose the band's tail past T)
            head = np.concatenate([[0.0], np.cumsum(self.coefficients**2)])
            starts = np.arange(participation.within(self.horizon)) * participation.min_separation
            # column i holds c_0 .. c_{min(b, T - i) - 1}
            exact = float(np.sum(head[np.minimum(self.bands, self.horizon - starts)]))
        return super()._participation_norm_sq(participation) if exact is None else exact

    def variance(self, t: np.ndarray) -> np.ndarray:
        return self._cum_sq[t - 1]

    def init_state(self, dim: int) -> dict:
        # y: the last b - 1 outputs of C^-1 z, oldest first; n: the release noise so far
        return {"y": np.zeros((self.bands - 1, dim)), "n": np.zeros(dim)}

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        c, past = self.coefficients, state["y"]
        m = c.size
        if n == 1:
            y = (rows - c[1:][::-1] @ past) / c[0] if m > 1 else rows / c[0]
        else:
            # lfilter's transposed direct form: zi_i = -sum_{k > i} a_k y_{-(k - i)}, with
            # a = c / c_0 and y_{-1} the latest output
            a = c / c[0]
            zi = np.zeros((m - 1, rows.shape[1]))
            for i in range(m - 1):  # past[i:] reversed: y_{-1}, ..., for k = i + 1, ...
                zi[i] = -(a[i + 1:] @ past[i:][::-1])
            y = signal.lfilter([1.0 / c[0]], a, rows, axis=0, zi=zi)[0] if m > 1 else rows / c[0]
        if m > 1:
            state["y"] = np.vstack([past, y])[-(m - 1):]
        noise = np.cumsum(np.vstack([state["n"][None, :], y]), axis=0)[1:]
        state["n"] = noise[-1].copy()
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        return signal.fftconvolve(values, self.coefficients[:, None], axes=0)[: len(values)]
