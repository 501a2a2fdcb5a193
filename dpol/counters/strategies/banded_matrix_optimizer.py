"""A general banded encoder optimised for the mean loss, its columns normalised.

The encoder C is lower-triangular with b bands, not Toeplitz: C[t, t-j] = P[t, j] / n_{t-j}
for j < b, with n_s the norm of column s of the free band P, so every column of C has
norm 1. Participations at least b apart then touch disjoint columns: k of them cost
sensitivity sqrt(k) whatever P is, and the mean loss to minimise is
f(P) = ||A C^-1||_F^2 / T = ||A D P^-1||_F^2 / T (D = diag(n)), the objective of
Choquette-Choo et al. 2023 ("(Amplified) banded matrix factorization: a unified approach
to private training") and McKenna 2024 ("Scaling up the banded matrix factorization
mechanism for differentially private ML").

B = A D P^-1 solves B P = A D one column at a time from the last (O(T b) each, P banded),
and the exact gradient comes from Lambda = B P^-T (P Lambda^T = B^T, forward): with
df = 2 <Lambda, A dD> - 2 <Lambda, B dP>, the band entry P[u, j] (column s = u - j)
gets -2 sum_t B[t, u] Lambda[t, s] + 2 g_s P[u, j] / n_s, g_s = sum_{t >= s} Lambda[t, s].
L-BFGS starts from the square-root band (Kalinin and Lampert 2024); O(T^2 b) a step.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import minimize

from dpol.counters.strategies.toeplitz import sqrt_toeplitz_coefficients

__all__ = ["MAX_HORIZON", "banded_matrix_loss", "normalised_band", "optimal_banded_matrix"]

#: the optimiser holds T x T matrices: 32 MiB each at T = 2048
MAX_HORIZON = 2048


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


def _solve_right(band: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """X with X P = rhs (P lower-triangular banded), as X^T: rows from the last.

    Works on transposes so that every step reads contiguous rows:
    X^T[s] = (rhs^T[s] - sum_{0<j<b} P[s + j, j] X^T[s + j]) / P[s, 0].
    """
    horizon, bands = band.shape
    xt = np.array(rhs.T, order="C")
    for s in range(horizon - 1, -1, -1):
        stop = min(horizon, s + bands)
        if stop > s + 1:
            js = np.arange(1, stop - s)
            xt[s] -= band[s + js, js] @ xt[s + 1:stop]
        xt[s] /= band[s, 0]
    return xt


def _solve_right_transposed(band: np.ndarray, rhs_t: np.ndarray) -> np.ndarray:
    """X^T with X P^T = rhs, from rhs^T: rows from the first,
    X^T[s] = (rhs^T[s] - sum_{0<j<b} P[s, j] X^T[s - j]) / P[s, 0]."""
    horizon, bands = band.shape
    xt = rhs_t.copy()
    for s in range(horizon):
        start = max(0, s - bands + 1)
        if s > start:
            # a copy: matmul of a reversed (negative-stride) view misses BLAS, 6x slower
            xt[s] -= band[s, s - start:0:-1].copy() @ xt[start:s]
        xt[s] /= band[s, 0]
    return xt


def _loss_and_gradient(band: np.ndarray) -> tuple[float, np.ndarray]:
    horizon, bands = band.shape
    norms = column_norms(band)
    a_d = np.tril(np.ones((horizon, horizon))) * norms[None, :]
    bt = _solve_right(band, a_d)  # B^T
    lt = _solve_right_transposed(band, bt)  # Lambda^T
    g = np.triu(lt).sum(axis=1)  # g_s = sum_{t >= s} Lambda[t, s]
    grad = np.zeros_like(band)
    for j in range(bands):
        s = np.arange(horizon - j)  # column s, row u = s + j
        cross = np.einsum("st,st->s", bt[j:], lt[: horizon - j])
        grad[j:, j] = -2.0 * cross + 2.0 * g[s] * band[j:, j] / norms[s]
    return float(np.sum(bt * bt)) / horizon, grad / horizon


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
    mask = _mask(horizon, bands)
    start = np.tile(sqrt_toeplitz_coefficients(bands), (horizon, 1)) * mask

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        band = np.zeros((horizon, bands))
        band[mask] = flat
        value, grad = _loss_and_gradient(band)
        return value, grad[mask]

    result = minimize(objective, start[mask], jac=True, method="L-BFGS-B",
                      options={"maxiter": 500, "gtol": 1e-8, "ftol": 1e-10})
    band = np.zeros((horizon, bands))
    band[mask] = result.x
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
