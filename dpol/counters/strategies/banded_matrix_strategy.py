"""A general banded strategy: an encoder with b bands (not Toeplitz), unit columns."""

from __future__ import annotations

import numpy as np

from dpol.counters.strategies._participation import (
    Participation,
    max_pattern_sum,
)
from dpol.counters.strategies._strategy import Strategy
from dpol.counters.strategies.banded_matrix_optimizer import column_norms, release_variances

__all__ = ["BandedMatrixStrategy"]


class BandedMatrixStrategy(Strategy):
    """Encoder C x with C[t, t-j] = band[t, j] (j < b); release noise A C^-1 z.

    The release noise n_t = n_{t-1} + (C^-1 z)_t streams from the last b - 1 values of
    C^-1 z (O(b d) state). Variance: the squared rows of A C^-1; column norms read off the
    band (all 1 for the optimised band, :mod:`.banded_matrix_optimizer`).

    Parameters
    ----------
    horizon : int
    band : np.ndarray of shape (T, b)
        band[t, j] = C[t, t - j] (0 where t < j), band[t, 0] > 0.

    Examples
    --------
    >>> from dpol.counters.strategies.banded_matrix_optimizer import optimal_banded_matrix
    >>> s = BandedMatrixStrategy(32, optimal_banded_matrix(32, 4))
    >>> round(s.loss("mean"), 3), round(s.column_norm_sq(), 6)  # banded Toeplitz: 6.255
    (5.924, 1.0)
    """

    name = "banded_matrix"
    refusal = ("a banded matrix counter (its l1 column norm grows with the bands; the "
               "pure-DP calibration counts weight-one nodes)")
    continues_vectorized = True

    def __init__(self, horizon: int, band: np.ndarray) -> None:
        super().__init__(horizon)
        self.band = np.asarray(band, dtype=np.float64)
        self.bands = self.band.shape[1]
        self._col_sq = column_norms(self.band) ** 2
        self._row_sq = release_variances(self.band)  # squared rows of A C^-1

    @property
    def levels(self) -> int:
        return self.bands  # one element enters b encoder values

    def _single_norm_sq(self) -> float:
        return float(np.max(self._col_sq))

    def _participation_norm_sq(self, participation: Participation) -> float:
        if self.bands <= participation.min_separation:
            # columns b apart have disjoint supports: C^T C is diagonal on every pattern
            return float(max_pattern_sum(self._col_sq, participation))
        return super()._participation_norm_sq(participation)

    def variance(self, t: np.ndarray) -> np.ndarray:
        return self._row_sq[t - 1]

    def init_state(self, dim: int) -> dict:
        # y: the last b - 1 values of C^-1 z, oldest first; n: the release noise so far
        return {"y": np.zeros((self.bands - 1, dim)), "n": np.zeros(dim)}

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        past, total = state["y"], state["n"]
        m = self.bands
        noise = np.empty_like(rows)
        for i, z in enumerate(rows):  # the band changes with t: one step at a time
            t = start + i
            k = min(m - 1, t)  # lags with an entry: 1 .. k
            y = z - (self.band[t, k:0:-1] @ past[m - 1 - k:] if k else 0.0)
            y = y / self.band[t, 0]
            if m > 1:
                past = np.vstack([past[1:], y[None, :]])
            total = total + y
            noise[i] = total
        state["y"], state["n"] = past, total
        return noise

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        n = len(values)
        out = np.zeros_like(values)
        for j in range(min(self.bands, n)):
            out[j:] += self.band[j:n, j, None] * values[: n - j]
        return out
