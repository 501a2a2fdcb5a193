"""The square-root Toeplitz factorization A = C C of the prefix-sum matrix."""

from __future__ import annotations

import numpy as np

from dpol._lazy import scipy_signal as signal
from dpol.counters.strategies._participation import Participation, toeplitz_sensitivity_sq
from dpol.counters.strategies._strategy import Strategy

__all__ = ["ToeplitzStrategy", "blocked_toeplitz", "sqrt_toeplitz_coefficients"]

#: the matrix factorizations refuse pure noise: their l1 column norm grows like sqrt(T)
MATRIX_REFUSAL = "a matrix-factorization counter (its l1 column norm grows like sqrt(T))"

#: the blocked product's shape (:func:`blocked_toeplitz`): blocks of 2^17 rows (FFTs of
#: 2^18), one coordinate at a time, 8 output blocks per sweep; its working set is about
#: 38 MiB whatever T, and at T = 1e6 / 4e6, d = 10 it took 0.85 / 5.7 s of CPU where
#: 2^19 values a batch, sweeps of 4 took 0.88 / 7.1 s (40 MiB), one block a sweep 1.6 s
BLOCK_ROWS = 2**17
#: float64 values per batch of transforms: FFT_VALUES / (2 block) coordinates at a time
FFT_VALUES = 2**18
#: output blocks that share each transform of a block of draws (one accumulator each)
SWEEP_BLOCKS = 8


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


def _lag_spectrum(f: np.ndarray, lag: int, block: int) -> np.ndarray:
    """rfft (length 2b, b = block) of h with h_m = f_{lag b + m} (0 <= m < b) and
    h_{2b - m} = f_{lag b - m} (0 < m < b, lag > 0): its circular convolution with a block
    of b draws padded by b zeros is, in its first b entries, the b x b Toeplitz block of
    C at block lag ``lag`` times the block (f past its end enters only against zeros)."""
    h = np.zeros(2 * block)
    ahead = f[lag * block:(lag + 1) * block]
    h[:len(ahead)] = ahead
    if lag > 0:
        behind = f[lag * block - block + 1:lag * block]
        h[block + 1:block + 1 + len(behind)] = behind
    return np.fft.rfft(h)


def blocked_toeplitz(z: np.ndarray, f: np.ndarray, start: int, n: int,
                     block: int = BLOCK_ROWS, fft_values: int = FFT_VALUES,
                     sweep: int = SWEEP_BLOCKS):
    """Rows start .. start+n-1 of C z (C lower-triangular Toeplitz, first column f), in
    pieces: yields ``(lo, cols, piece)``, ``piece`` the rows start+lo .. of columns ``cols``.

    Blocked: an output block of at most ``block`` rows sums, over the blocks of draws
    ``lag`` blocks before it, their product with the Toeplitz block of that lag, each an
    FFT of length 2 ``block`` (:func:`_lag_spectrum`), summed in the frequency domain
    and transformed back once. ``sweep`` output blocks share each transform of a block of
    draws, and a window of ``sweep`` lag spectra slides as the draws advance. The
    working set is a few (columns x 2 ``block``) arrays per output block of the sweep,
    whatever T; the time O(T^2 / (block sweep)) FFTs of length 2 ``block``, against one
    FFT over the history's O(T log T) with O(T) arrays (docs/benchmarks/performance.md).
    Equal to the direct product to rounding.

    Examples
    --------
    >>> f = sqrt_toeplitz_coefficients(5)
    >>> z = np.ones((5, 1))
    >>> out = np.empty((5, 1))
    >>> for lo, cols, piece in blocked_toeplitz(z, f, 0, 5, block=2):
    ...     out[lo:lo + len(piece), cols] = piece
    >>> bool(np.allclose(out[:, 0], np.cumsum(f)))
    True
    """
    dim, end = z.shape[1], start + n
    block = min(block, 1 << max(end - 1, 1).bit_length())  # no block past the history
    group = max(1, min(dim, fft_values // (2 * block)))
    for c0 in range(0, dim, group):
        cols = slice(c0, min(c0 + group, dim))
        padded = np.zeros((cols.stop - c0, 2 * block))  # a block of draws, then zeros
        for s0 in range(start, end, sweep * block):
            heads = range(s0, min(s0 + sweep * block, end), block)  # its output blocks
            acc: list = [None] * len(heads)
            spectra: dict = {}  # lag -> _lag_spectrum: the window the draws still need
            # the blocks of draws s0 + q b .. s0 + q b + b - 1 that reach 0 .. end - 1
            for q in range(-((s0 + block - 1) // block), len(heads)):
                lo = s0 + q * block
                first, stop = max(lo, 0), min(lo + block, end)
                if first > lo or stop < lo + block:  # a partial block: zeros around it
                    padded[:, :block] = 0.0
                padded[:, first - lo:stop - lo] = z[first:stop, cols].T
                draws = np.fft.rfft(padded, axis=1)
                for i in range(max(q, 0), len(heads)):  # output block i, lag i - q
                    if i - q not in spectra:
                        spectra[i - q] = _lag_spectrum(f, i - q, block)
                    if acc[i] is None:
                        acc[i] = draws * spectra[i - q]
                    else:
                        acc[i] += draws * spectra[i - q]
                spectra.pop(len(heads) - 1 - q, None)  # its largest lag: not needed again
            for i, a in enumerate(heads):
                piece = np.fft.irfft(acc[i], 2 * block, axis=1)[:, :min(block, end - a)]
                acc[i] = None
                yield a - start, cols, piece.T


class ToeplitzStrategy(Strategy):
    """Encoder C x, decoder C (C lower-triangular Toeplitz with coefficients f_k).

    The release noise C z has variance sum_{k < t} f_k^2 per unit (about (ln t)/pi); column
    1 is the longest. State: every past draw (O(T d)); a step is a dot product, a block
    the blocked product of :func:`blocked_toeplitz` (equal to rounding), which ``run``
    adds into its output block by block: beyond the output, the draws (the state) and
    the coefficients, its working set is bounded whatever T (``run_chunks`` False: the
    draws of a run are drawn at once, as the state they become).

    Examples
    --------
    >>> s = ToeplitzStrategy(2**10)
    >>> round(s.loss(), 2), bool(s.column_norm_sq() == s.variance(np.array([1024]))[0])
    (10.71, True)
    """

    name = "toeplitz"
    refusal = MATRIX_REFUSAL
    continues_vectorized = True
    #: a run's draws are drawn whole (they are the state); the blocked product bounds
    #: the rest: chunks would only redo the history's transforms once per chunk
    run_chunks = False
    #: rows per block of the blocked product (:func:`blocked_toeplitz`)
    block_rows = BLOCK_ROWS

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
        if n == 1:
            z = self._append(state, rows, start)
            return (self.coefficients[: start + 1][::-1] @ z)[None, :]
        out = np.zeros((n, rows.shape[1]))  # the blocked product added into zeros
        self.add_correlated(state, rows, start, n, out)
        return out

    def add_correlated(self, state: dict, rows: np.ndarray, start: int, n: int,
                       out: np.ndarray) -> None:
        # block by block into the releases: no (n x d) noise array beside them
        if n == 1:
            out += self.correlate(state, rows, start, n)
            return
        z = self._append(state, rows, start)
        for lo, cols, piece in blocked_toeplitz(z, self.coefficients, start, n,
                                                self.block_rows):
            out[lo:lo + len(piece), cols] += piece

    @staticmethod
    def _append(state: dict, rows: np.ndarray, start: int) -> np.ndarray:
        # the draws are fresh arrays: a first block becomes the state without a copy
        z = state["z"] = rows if start == 0 else np.vstack([state["z"], rows])
        return z

    def encode(self, values: np.ndarray) -> np.ndarray:
        """The encoder C x: every value that receives noise."""
        values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
        return signal.fftconvolve(values, self.coefficients[: len(values), None],
                           axes=0)[: len(values)]
