"""A general banded encoder optimised for the mean loss, its columns normalised.

The encoder C is lower-triangular with b bands, not Toeplitz: C[t, t-j] = P[t, j] / n_{t-j}
for j < b, with n_s the norm of column s of the free band P, so every column of C has
norm 1. Participations at least b apart then touch disjoint columns: k of them cost
sensitivity sqrt(k) whatever P is, and the mean loss to minimise is
f(P) = ||A C^-1||_F^2 / T = ||A D P^-1||_F^2 / T (D = diag(n)), the objective of
Choquette-Choo et al. 2023 ("(Amplified) banded matrix factorization: a unified approach
to private training") and McKenna 2024 ("Scaling up the banded matrix factorization
mechanism for differentially private ML").

With C the column-normalised band, B^T = C^-T A^T and Lambda^T = C^-1 B^T give the exact
gradient: d f / d C[u, s] = -2 sum_t B[t, u] Lambda[t, s] / T on the band, then through the
normalisation d f / d P[:, s] = (G[:, s] - <G[:, s], C[:, s]> C[:, s]) / n_s. All three
products run by blocks of m >= b rows (C is block-bidiagonal then), as matrix products:
B^T[I_k] from the last block (its columns start at block k: B is lower-triangular),
Lambda^T[I_k] from the first, only from column k m on (what the gradient reads). About
5 m T^2 flops, L-BFGS from the square-root band (Kalinin and Lampert 2024).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from dpol.counters.strategies.toeplitz import sqrt_toeplitz_coefficients

__all__ = [
    "MAX_HORIZON",
    "banded_matrix_loss",
    "normalised_band",
    "optimal_banded_matrix",
    "release_variances",
]

#: the optimiser holds T x T matrices: 32 MiB each at T = 2048
MAX_HORIZON = 2048
#: the smallest block of rows (a small band would make many tiny matrix products)
MIN_BLOCK = 32


def _mask(horizon: int, bands: int) -> np.ndarray:
    """Where the band (T, b) has entries: P[u, j] needs u - j >= 0."""
    return np.arange(horizon)[:, None] >= np.arange(bands)[None, :]


def column_norms(band: np.ndarray) -> np.ndarray:
    """n_s = ||column s||: sqrt(sum_j P[s + j, j]^2)."""
    horizon, bands = band.shape
    sq = np.zeros(horizon)
    for j in range(bands):
        sq[: horizon - j] += band[j:, j] ** 2
    return np.sqrt(sq)


def normalised_band(band: np.ndarray) -> np.ndarray:
    """The band of C = P D^-1: every column of norm 1."""
    norms = column_norms(band)
    out = np.zeros_like(band)
    for j in range(band.shape[1]):
        out[j:, j] = band[j:, j] / norms[: band.shape[0] - j]
    return out


class _Layout(NamedTuple):
    """Where the band's entries sit: in (T, b), and in the (n, m, 2m) block rows."""

    size: int  # m, the rows of a block
    blocks: int  # n, T padded to n m
    u: np.ndarray  # the entries' rows ...
    j: np.ndarray  # ... lags ...
    s: np.ndarray  # ... and columns u - j
    at: tuple[np.ndarray, np.ndarray, np.ndarray]  # their places in the block rows
    pad: tuple[np.ndarray, np.ndarray, np.ndarray]  # the padding rows' diagonal


@functools.lru_cache(maxsize=16)
def _layout(horizon: int, bands: int) -> _Layout:
    size = max(bands, MIN_BLOCK)
    blocks = -(-horizon // size)
    u, j = np.nonzero(_mask(horizon, bands))
    r = u % size
    pad = np.arange(horizon, blocks * size)
    return _Layout(size, blocks, u, j, u - j, (u // size, r, r + size - j),
                   (pad // size, pad % size, pad % size + size))


def _block_rows(values: np.ndarray, layout: _Layout) -> np.ndarray:
    """(n, m, 2m): block row k of C is [C[I_k, I_(k-1)] | C[I_k, I_k]], I_k = the k-th m
    steps, from the band's entries in layout order; T padded to n m with identity rows,
    which leave the first T releases alone."""
    out = np.zeros((layout.blocks, layout.size, 2 * layout.size))
    out[layout.at] = values
    out[layout.pad] = 1.0
    return out


def _inverse_t(rows: np.ndarray) -> np.ndarray:
    """C_kk^-T of every diagonal block (LAPACK's triangular inverse, then transposed)."""
    size = rows.shape[1]
    out = np.empty((rows.shape[0], size, size))
    for k, block in enumerate(rows[:, :, size:]):
        out[k] = lapack.dtrtri(block, lower=1)[0].T
    return out


def _releases_t(rows: np.ndarray, horizon: int, lower_t: np.ndarray) -> np.ndarray:
    """B^T = C^-T A^T, (n m, n m), by blocks of m rows: block k holds B^T[I_k, k m:]; what
    lies before column k m is zero in B^T and left unwritten here (lower-triangular B).
    ``lower_t`` holds the diagonal blocks' C_kk^-T."""
    n, size = rows.shape[:2]
    width = n * size
    data = (np.arange(width) < horizon).astype(float)  # padding rows sum nothing
    upper = np.triu(np.ones((size, size)))
    out = np.empty((width, width))
    for k in range(n - 1, -1, -1):
        s = k * size
        block = out[s:s + size, s:]
        # A^T[I_k, s:] is ones on and after the diagonal: beyond the block a constant
        # column, so C_kk^-T of it is one column, and C_kk^-T C_(k+1,k)^T is m x m
        block[:, :size] = lower_t[k] @ (upper * data[s:s + size, None])
        block[:, size:] = (lower_t[k] @ data[s:s + size])[:, None]
        if k + 1 < n:  # C^T is block-upper-bidiagonal
            below = out[s + size:s + 2 * size, s + size:]
            block[:, size:] -= (lower_t[k] @ rows[k + 1, :, :size].T) @ below
        block[:, max(0, horizon - s):] = 0.0
    return out


def release_variances(band: np.ndarray) -> np.ndarray:
    """||row t of A C^-1||^2 for the encoder C[t, t - j] = band[t, j], t = 1..T.

    Examples
    --------
    >>> band = np.array([[1.0, 0.0], [1.0, 0.5], [1.0, 0.5]])
    >>> c = np.array([[1.0, 0, 0], [0.5, 1, 0], [0, 0.5, 1]])
    >>> bool(np.allclose(release_variances(band),
    ...                  np.sum((np.tril(np.ones((3, 3))) @ np.linalg.inv(c))**2, axis=1)))
    True
    """
    horizon, bands = band.shape
    layout = _layout(horizon, bands)
    rows = _block_rows(band[layout.u, layout.j], layout)
    size = layout.size
    bt = _releases_t(rows, horizon, _inverse_t(rows))
    rows_sq = np.zeros(layout.blocks * size)
    for k in range(layout.blocks):
        block = bt[k * size:(k + 1) * size, k * size:]
        rows_sq[k * size:] += np.sum(block * block, axis=0)
    return rows_sq[:horizon]


def _flat_loss_and_gradient(free: np.ndarray, horizon: int, layout: _Layout
                            ) -> tuple[float, np.ndarray]:
    """f and its gradient in the free band's entries (layout order)."""
    size, n = layout.size, layout.blocks
    norms = np.sqrt(np.bincount(layout.s, weights=free * free, minlength=horizon))
    c = free / norms[layout.s]
    rows = _block_rows(c, layout)
    lower_t = _inverse_t(rows)
    bt = _releases_t(rows, horizon, lower_t)
    lt = np.empty_like(bt)  # Lambda^T = C^-1 B^T, block k from column k m on
    cross = np.zeros((n, size, 2 * size))  # [B^T Lambda][I_k, I_(k-1) | I_k]
    for k in range(n):
        s = k * size
        here = bt[s:s + size, s:]
        if k:
            rhs = here - rows[k, :, :size] @ lt[s - size:s, s:]
            lt[s:s + size, s:] = lower_t[k].T @ rhs
            cross[k] = here @ lt[s - size:s + size, s:].T
        else:
            lt[:size] = lower_t[0].T @ here
            cross[0, :, size:] = here @ lt[:size].T
    grad_c = -2.0 * cross[layout.at]
    along = np.bincount(layout.s, weights=grad_c * c, minlength=horizon)
    grad = (grad_c - along[layout.s] * c) / norms[layout.s]
    loss = sum(float(np.einsum("ij,ij->", x, x))
               for x in (bt[k * size:(k + 1) * size, k * size:] for k in range(n)))
    return loss / horizon, grad / horizon


def _loss_and_gradient(band: np.ndarray) -> tuple[float, np.ndarray]:
    """f(P) and its gradient as (T, b) arrays (module docstring)."""
    horizon, bands = band.shape
    layout = _layout(horizon, bands)
    value, flat = _flat_loss_and_gradient(band[layout.u, layout.j], horizon, layout)
    grad = np.zeros_like(band)
    grad[layout.u, layout.j] = flat
    return value, grad


def banded_matrix_loss(band: np.ndarray) -> float:
    """The mean loss ||A C^-1||_F^2 / T of the column-normalised encoder of ``band``
    (sensitivity 1 for one participation).

    Examples
    --------
    >>> b = np.tile(sqrt_toeplitz_coefficients(16), (16, 1)) * _mask(16, 16)
    >>> round(banded_matrix_loss(b), 3)  # the square root, columns normalised: < its 3.229
    2.921
    """
    return _loss_and_gradient(np.asarray(band, dtype=np.float64))[0]


@functools.lru_cache(maxsize=8)
def _optimised(horizon: int, bands: int) -> np.ndarray:
    layout = _layout(horizon, bands)
    start = sqrt_toeplitz_coefficients(bands)[layout.j]
    with threadpool_limits(1, user_api="blas"):  # blocks of m rows: threads only contend
        result = minimize(_flat_loss_and_gradient, start, args=(horizon, layout), jac=True,
                          method="L-BFGS-B",
                          options={"maxiter": 500, "gtol": 1e-8, "ftol": 1e-10})
    band = np.zeros((horizon, bands))
    band[layout.u, layout.j] = result.x
    out = normalised_band(band)
    out.flags.writeable = False
    return out


def optimal_banded_matrix(horizon: int, bands: int) -> np.ndarray:
    """The column-normalised band (T, b) of C minimising the mean loss (read-only, cached).

    Examples
    --------
    >>> band = optimal_banded_matrix(32, 4)
    >>> band.shape, bool(np.allclose(column_norms(band), 1.0))
    ((32, 4), True)
    """
    return _optimised(int(horizon), int(min(bands, horizon)))
