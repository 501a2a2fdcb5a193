"""A general banded encoder optimised for the mean loss, its columns normalised.

The encoder C is lower-triangular with b bands, not Toeplitz: C[t, t-j] = P[t, j] / n_{t-j}
for j < b, with n_s the norm of column s of the free band P, so every column of C has
norm 1. Participations at least b apart then touch disjoint columns: k of them cost
sensitivity sqrt(k) whatever P is, and the mean loss to minimise is
f(P) = ||A C^-1||_F^2 / T = ||A D P^-1||_F^2 / T (D = diag(n)), the objective of
Choquette-Choo et al. 2023 ("(Amplified) banded matrix factorization: a unified approach
to private training") and McKenna 2024 ("Scaling up the banded matrix factorization
mechanism for differentially private ML").

The exact gradient comes from B^T = C^-T A^T and Lambda^T = C^-1 B^T, computed by blocks
of m >= b rows (about 5 m T^2 flops; two threads from T = 1024), then projected through
the normalisation. L-BFGS starts from the banded Toeplitz band optimised for the mean
(:mod:`.banded_toeplitz_optimizer`).
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits

from dpol._lazy import scipy_optimize as optimize
from dpol.counters.strategies.banded_toeplitz_optimizer import optimal_band

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
#: from this horizon on, an evaluation runs as two column ranges on two threads
PARALLEL_FROM = 1024


def _mask(horizon: int, bands: int) -> np.ndarray:
    """Where the band (T, b) has entries: P[u, j] needs u - j >= 0."""
    return np.arange(horizon)[:, None] >= np.arange(bands)[None, :]


def column_norms(band: np.ndarray) -> np.ndarray:
    """n_s = ||column s||: sqrt(sum_j P[s + j, j]^2)."""
    layout = _layout(*band.shape)
    return _entry_norms(band[layout.u, layout.j], layout, band.shape[0])


def normalised_band(band: np.ndarray) -> np.ndarray:
    """The band of C = P D^-1: every column of norm 1."""
    layout = _layout(*band.shape)
    entries = band[layout.u, layout.j]
    out = np.zeros_like(band)
    out[layout.u, layout.j] = entries / _entry_norms(entries, layout, band.shape[0])[layout.s]
    return out


def _entry_norms(entries: np.ndarray, layout: _Layout, horizon: int) -> np.ndarray:
    """The column norms of a band given by its entries in layout order."""
    return np.sqrt(np.bincount(layout.s, weights=entries * entries, minlength=horizon))


class _Layout(NamedTuple):
    """Where the band's entries sit: in (T, b), and in the (n, m, 2m) block rows."""

    size: int  # m, the rows of a block
    blocks: int  # n, T padded to n m
    u: np.ndarray  # the entries' rows ...
    j: np.ndarray  # ... lags ...
    s: np.ndarray  # ... and columns u - j
    at: tuple[np.ndarray, np.ndarray, np.ndarray]  # their places in the block rows
    pad: tuple[np.ndarray, np.ndarray, np.ndarray]  # the padding rows' diagonal
    ranges: tuple[tuple[int, int], ...]  # the column ranges evaluated apart


@functools.lru_cache(maxsize=16)
def _layout(horizon: int, bands: int) -> _Layout:
    size = max(bands, MIN_BLOCK)
    blocks = -(-horizon // size)
    u, j = np.nonzero(_mask(horizon, bands))
    r = u % size
    pad = np.arange(horizon, blocks * size)
    width = blocks * size
    # column t costs the blocks that start before it, ~ t: equal halves split the width at
    # 1 / sqrt(2) (the fastest of 5/8, 1/sqrt(2) and 3/4 of it at T = 1024, measured)
    split = round(width * 0.5**0.5)
    ranges = ((0, split), (split, width)) if horizon >= PARALLEL_FROM else ((0, width),)
    return _Layout(size, blocks, u, j, u - j, (u // size, r, r + size - j),
                   (pad // size, pad % size, pad % size + size), ranges)


def _block_rows(values: np.ndarray, layout: _Layout) -> np.ndarray:
    """(n, m, 2m): block row k of C is [C[I_k, I_(k-1)] | C[I_k, I_k]], I_k = the k-th m
    steps, from the band's entries in layout order; T padded to n m with identity rows,
    which leave the first T releases alone."""
    out = np.zeros((layout.blocks, layout.size, 2 * layout.size))
    out[layout.at] = values
    out[layout.pad] = 1.0
    return out


class _Factors(NamedTuple):
    """The m x m products a sweep reuses, C_kk^-T included, computed once per C."""

    lower_t: np.ndarray  # C_kk^-T
    triangle: np.ndarray  # C_kk^-T of A^T's diagonal block (ones on and after the row)
    column: np.ndarray  # C_kk^-T of A^T's constant column beyond it
    up: np.ndarray  # C_kk^-T C_(k+1,k)^T (C^T is block-upper-bidiagonal)
    down: np.ndarray  # C_kk^-1 C_(k,k-1) (C is block-lower-bidiagonal)


def _factors(rows: np.ndarray, horizon: int) -> _Factors:
    n, size = rows.shape[:2]
    lower_t = np.empty((n, size, size))
    for k, block in enumerate(rows[:, :, size:]):  # LAPACK's triangular inverse
        lower_t[k] = lapack.dtrtri(block, lower=1)[0].T
    if horizon < n * size:  # padding rows sum nothing
        data = (np.arange(n * size) < horizon).astype(float).reshape(n, 1, size)
        triangle = np.cumsum(lower_t * data, axis=2)  # times the ones on and after the row
    else:
        triangle = np.cumsum(lower_t, axis=2)
    column = triangle[:, :, -1]
    up = lower_t[:-1] @ rows[1:, :, :size].transpose(0, 2, 1)
    down = lower_t.transpose(0, 2, 1) @ rows[:, :, :size]
    return _Factors(lower_t, triangle, column, up, down)


def _releases_t(f: _Factors, horizon: int, first: int, stop: int) -> np.ndarray:
    """Columns first..stop-1 of B^T = C^-T A^T, (n m, stop - first), by blocks of m rows
    from the last. Block k is written from column k m on only: before it B^T is zero (B
    is lower-triangular), left unwritten."""
    n, size = f.lower_t.shape[:2]
    out = np.empty((n * size, stop - first))
    for k in range(min(n, -(-stop // size)) - 1, -1, -1):  # the blocks starting before stop
        s = k * size
        here = max(s, first)
        block = out[s:s + size, here - first:]
        inside = max(0, min(s + size, stop) - here)  # columns within the diagonal block
        block[:, :inside] = f.triangle[k][:, here - s:here - s + inside]
        if s + size < stop and k + 1 < n:
            below = out[s + size:s + 2 * size, max(s + size, first) - first:]
            np.subtract(f.column[k][:, None], f.up[k] @ below, out=block[:, inside:])
        else:
            block[:, inside:] = f.column[k][:, None]
        block[:, max(0, horizon - here):] = 0.0
    return out


def _adjoint_terms(f: _Factors, horizon: int, first: int, stop: int
                   ) -> tuple[np.ndarray, float]:
    """Over columns first..stop-1: the band blocks [B^T Lambda][I_k, I_(k-1) | I_k] and
    ||B||_F^2 (each column of B^T and Lambda^T is a solve of its own, so column ranges
    add up)."""
    n, size = f.lower_t.shape[:2]
    bt = _releases_t(f, horizon, first, stop)
    lt = np.empty_like(bt)  # Lambda^T = C^-1 B^T, block k from column k m on
    cross = np.zeros((n, size, 2 * size))
    loss = 0.0
    for k in range(min(n, -(-stop // size))):
        s = k * size
        here = max(s, first) - first
        mine = bt[s:s + size, here:]
        lt[s:s + size, here:] = f.lower_t[k].T @ mine
        if k:
            lt[s:s + size, here:] -= f.down[k] @ lt[s - size:s, here:]
            cross[k] = mine @ lt[s - size:s + size, here:].T
        else:
            cross[0, :, size:] = mine @ lt[:size].T
        loss += float(np.einsum("ij,ij->", mine, mine))
    return cross, loss


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
    size, width = layout.size, layout.blocks * layout.size
    bt = _releases_t(_factors(rows, horizon), horizon, 0, width)
    rows_sq = np.zeros(width)
    for k in range(layout.blocks):
        block = bt[k * size:(k + 1) * size, k * size:]
        rows_sq[k * size:] += np.sum(block * block, axis=0)
    return rows_sq[:horizon]


def _flat_loss_and_gradient(free: np.ndarray, horizon: int, layout: _Layout,
                            pool: ThreadPoolExecutor | None = None
                            ) -> tuple[float, np.ndarray]:
    """f and its gradient in the free band's entries (layout order); the column ranges
    of ``layout.ranges`` run on ``pool``'s threads when given (the same sums either way)."""
    norms = _entry_norms(free, layout, horizon)
    c = free / norms[layout.s]
    factors = _factors(_block_rows(c, layout), horizon)
    args = [(factors, horizon, first, stop) for first, stop in layout.ranges]
    if pool is None or len(args) == 1:
        parts = [_adjoint_terms(*a) for a in args]
    else:  # the last range on the pool, the first here meanwhile
        later = pool.submit(_adjoint_terms, *args[-1])
        parts = [_adjoint_terms(*a) for a in args[:-1]] + [later.result()]
    cross = np.sum([p[0] for p in parts], axis=0)
    loss = sum(p[1] for p in parts)
    grad_c = -2.0 * cross[layout.at]
    along = np.bincount(layout.s, weights=grad_c * c, minlength=horizon)
    grad = (grad_c - along[layout.s] * c) / norms[layout.s]
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
    >>> from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients
    >>> b = np.tile(sqrt_toeplitz_coefficients(16), (16, 1)) * _mask(16, 16)
    >>> round(banded_matrix_loss(b), 3)  # the square root, columns normalised: < its 3.229
    2.921
    """
    return _loss_and_gradient(np.asarray(band, dtype=np.float64))[0]


@functools.lru_cache(maxsize=8)
def _optimised(horizon: int, bands: int) -> np.ndarray:
    layout = _layout(horizon, bands)
    start = optimal_band(horizon, bands, "mean")[layout.j]
    # one BLAS thread per product (blocks of m rows: BLAS threads only contend); the two
    # column ranges of a large horizon run on this thread and one more
    with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(1) as pool:
        # a step gaining < 1e-8 (relative) stops it: 1.5e-7 above the limit at T = 256 and
        # 1024 (measured), far below what a noise variance shows (jax_privacy's default,
        # 100 steps, stops 1.1e-6 above at T = 1024); 5 pairs of memory converge as fast
        # as 10 at half the cost
        result = optimize.minimize(_flat_loss_and_gradient, start, args=(horizon, layout, pool),
                          jac=True, method="L-BFGS-B",
                          options={"maxiter": 500, "gtol": 1e-8, "ftol": 1e-8, "maxcor": 5})
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
