"""The square-root Toeplitz factorization A = C C of the prefix-sum matrix."""

from __future__ import annotations

import numpy as np

from dpol._lazy import scipy_signal as signal
from dpol.counters.strategies._participation import Participation, toeplitz_sensitivity_sq
from dpol.counters.strategies._strategy import Strategy

__all__ = ["ToeplitzStrategy", "sqrt_toeplitz_coefficients"]

#: the matrix factorizations refuse pure noise: their l1 column norm grows like sqrt(T)
MATRIX_REFUSAL = "a matrix-factorization counter (its l1 column norm grows like sqrt(T))"


def sqrt_toeplitz_coefficients(n: int) -> np.ndarray:
    """f_0 = 1, f_k = f_{k-1} (2k - 1) / (2k): the Taylor coefficients of (1 - x)^(-1/2).

    The lower-triangular Toeplitz matrix C with first column f satisfies C C = A, the
    all-ones lower-triangular (prefix-sum) matrix, because ((1 - x)^(-1/2))^2 = 1/(1 - x).

    Examples
    --------
    >>> sqrt_toeplitz_coefficients(4)
    array([1.    , 0.5   , 0.375 , 0.3125])
    """
    k = np.arange(1, n, dtype=np.float64)
    return np.concatenate([[1.0], np.cumprod((2.0 * k - 1.0) / (2.0 * k))])[:n]


class ToeplitzStrategy(Strategy):
    """Encoder C x, decoder C (C lower-triangular Toeplitz with coefficients f_k).

    The release noise C z has variance sum_{k < t} f_k^2 per unit (about (ln t)/pi); column
    1 is the longest. State: every past draw (O(T d)); a step is a dot product, a block an
    FFT convolution (equal to rounding). ``run`` takes its block whole (``run_chunks``
    False): chunks would convolve the whole history again.

    Examples
    --------
    >>> s = ToeplitzStrategy(2**10)
    >>> round(s.loss(), 2), bool(s.column_norm_sq() == s.variance(np.array([1024]))[0])
    (10.71, True)
    """

    name = "toeplitz"
    refusal = MATRIX_REFUSAL
    continues_vectorized = True
    #: a block convolves the whole history: one block per ``run``, not one per chunk
    run_chunks = False

    def __init__(self, horizon: int) -> None:
        super().__init__(horizon)
        #: first column of the encoder C (and of the decoder)
        self.coefficients = sqrt_toeplitz_coefficients(horizon)
        self._cum_sq = np.cumsum(self.coefficients**2)

    @property
    def levels(self) -> int:
        return self.horizon  # the first element enters every encoder value

    def _single_norm_sq(self) -> float:
        return float(self._cum_sq[-1])

    def _participation_norm_sq(self, participation: Participation) -> float:
        # positive, decreasing coefficients: the pattern 0, b, 2b, ... is the worst, exactly
        return toeplitz_sensitivity_sq(self.coefficients, self.horizon, participation)

    def variance(self, t: np.ndarray) -> np.ndarray:
        return self._cum_sq[t - 1]

    def init_state(self, dim: int) -> dict:
        return {"z": np.zeros((0, dim))}  # float: the draws; secure: the noisy encoder

    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        # the draws are fresh arrays: a first block becomes the state without a copy
        z = state["z"] = rows if start == 0 else np.vstack([state["z"], rows])
        f = self.coefficients
        if n == 1:
            return (f[: start + 1][::-1] @ z)[None, :]
        # one coordinate at a time: the FFT working set is O(start + n), not O((start + n)
        # d) (the same bits as one batched call: pocketfft transforms columns apart)
        out = np.empty((n, z.shape[1]))
        for j in range(z.shape[1]):
            out[:, j] = signal.fftconvolve(z[:, j], f[: start + n])[start:start + n]
        return out

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        return signal.fftconvolve(values, self.coefficients[: len(values), None],
                           axes=0)[: len(values)]
