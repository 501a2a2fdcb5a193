"""The BLT optimiser: buffer parameters minimizing the loss at a horizon, in closed form.

The noise-correlation matrix G = C^{-1} is lower-triangular Toeplitz with g_0 = 1 and
g_k = sum_i omega_i theta_i^(k-1) (k >= 1): b geometric "buffers" (Dvijotham, McMahan,
Pillutla, Steinke, Thakurta 2024, "Efficient and near-optimal noise generation for
streaming differential privacy"). Writing omega_i = -(1 - theta_i) s_i, the release
matrix B = A G has the coefficients h_k = (1 - S) + sum_i s_i theta_i^k (S = sum_i s_i),
and C = G^{-1} is the impulse response c_0 = 1, c_k = |omega|^T M^(k-1) 1 of the
nonnegative state matrix M = diag(theta) + 1 |omega|^T: sums of positive terms, exact to
rounding even when several theta_i crowd near 1 (polynomial coefficients are not: off by
1.8% at T = 2^16, divergent at 2^20).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from threadpoolctl import threadpool_limits

from dpol._lazy import scipy_optimize as optimize
from dpol._validation import _as_float_array, check_choice, check_int, fail
from dpol.counters.strategies._participation import parse_participation

__all__ = ["DEFAULT_BUFFERS", "OBJECTIVES", "blt_loss", "check_blt_parameters",
           "optimal_blt_parameters", "state_matrix"]

#: what the optimiser minimises: the largest release variance ("max", the default) or
#: its mean over the T steps ("mean": the figure that adds up into regret), each times
#: the largest squared column norm
OBJECTIVES = ("max", "mean")

#: default number of buffers: the smallest b whose optimized loss is within 1.02x of the
#: square-root factorization at T = 2^10, 2^16 and 2^20 (b = 4 reaches only 1.031x at 2^20)
DEFAULT_BUFFERS = 5


def check_blt_parameters(thetas: object, omegas: object) -> tuple[np.ndarray, np.ndarray]:
    """Validated float copies of (thetas, omegas); nothing is stored before they pass."""
    th = _as_float_array("thetas", thetas)
    om = _as_float_array("omegas", omegas)
    if th.ndim != 1 or th.size == 0:
        raise fail("thetas", "be a non-empty 1-d array (one decay per buffer)", thetas)
    if om.shape != th.shape:
        raise fail("omegas", f"have the shape of thetas {th.shape}", omegas)
    if np.any(th <= 0.0) or np.any(th >= 1.0):
        raise fail("thetas", "lie in the open interval (0, 1)", thetas)
    if np.any(om >= 0.0):
        raise fail("omegas", "be < 0 (omega_i = -(1 - theta_i) s_i with s_i > 0)", omegas)
    if float(np.sum(-om / (1.0 - th))) >= 1.0:
        raise fail("omegas", "satisfy sum(-omegas / (1 - thetas)) < 1 (the stability rule: "
                   "then |G(x) - 1| < 1 on the unit disk and C = G^-1 is stable)", omegas)
    return th, om


def _geometric(log_ratio: np.ndarray, n: int) -> np.ndarray:
    """sum_{k<n} q^k for q = exp(log_ratio) < 1, without cancellation for q near 1."""
    return np.expm1(n * log_ratio) / np.expm1(log_ratio)


def _ramp(log_ratio: np.ndarray, n: int) -> np.ndarray:
    """sum_{k<n} (n - k) q^k for q = exp(log_ratio) <= 1, by binary doubling.

    Joining a block of a terms and one of b: W(a + b) = W(a) + b P(a) + q^a W(b), P the
    geometric sum; positive terms only (the closed form cancels for q near 1)."""
    total, weight, size = np.zeros_like(log_ratio), np.zeros_like(log_ratio), 0  # W, P, a
    block, block_weight, block_size = np.ones_like(log_ratio), np.ones_like(log_ratio), 1
    while n:
        if n & 1:
            shift = np.exp(size * log_ratio)
            total = total + block_size * weight + shift * block
            weight = weight + shift * block_weight
            size += block_size
        n >>= 1
        if n:
            shift = np.exp(block_size * log_ratio)
            block = block + block_size * block_weight + shift * block
            block_weight = block_weight * (1.0 + shift)
            block_size *= 2
    return total


def _gram(m: np.ndarray, n: int) -> np.ndarray:
    """sum_{j<n} M^j 1 1^T (M^j)^T by binary doubling (O(b^3 log n), positive terms)."""
    b = m.shape[0]
    total, power = np.zeros((b, b)), np.eye(b)  # sum over the prefix done, M^prefix
    block, block_power = np.ones((b, b)), m.copy()  # the same for a block of 2^level
    while n:
        if n & 1:
            total = total + power @ block @ power.T
            power = power @ block_power
        n >>= 1
        if n:
            block = block + block_power @ block @ block_power.T
            block_power = block_power @ block_power
    return total


def state_matrix(thetas: np.ndarray, omegas: np.ndarray) -> np.ndarray:
    """M = diag(theta) - 1 omega^T (entrywise >= 0): the state recursion of C = G^{-1}."""
    return np.diag(thetas) - np.ones((thetas.size, 1)) * omegas[None, :]


def _loss_factors(thetas: np.ndarray, omegas: np.ndarray, n: int, objective: str = "max"
                  ) -> tuple[float, float]:
    """(sum_{k<n} h_k^2, sum_{k<n} c_k^2) in closed form, O(b^3 log n); ``"mean"``: the
    first factor is the mean variance (1/n) sum_{t<=n} sum_{k<t} h_k^2 =
    (1/n) sum_{k<n} (n - k) h_k^2 instead."""
    cols = 1.0 + float(omegas @ _gram(state_matrix(thetas, omegas), n - 1) @ omegas)
    return _variance_factor(thetas, omegas, n, objective), cols


def _variance_factor(thetas: np.ndarray, omegas: np.ndarray, n: int, objective: str) -> float:
    """The first factor of :func:`_loss_factors` alone, O(b^2 log n)."""
    s = -omegas / (1.0 - thetas)
    rest = 1.0 - float(np.sum(s))
    logs = np.log(thetas)
    if objective == "mean":
        rows = (0.5 * (n + 1) * rest * rest + (2.0 * rest * float(s @ _ramp(logs, n))
                + float(s @ _ramp(logs[:, None] + logs[None, :], n) @ s)) / n)
    else:
        rows = (n * rest * rest + 2.0 * rest * float(s @ _geometric(logs, n))
                + float(s @ _geometric(logs[:, None] + logs[None, :], n) @ s))
    return rows


def blt_loss(thetas: object, omegas: object, horizon: int, reduction: str = "max") -> float:
    """The strategy's ``loss(reduction)`` for BLT parameters, in closed form: sum h_k^2
    (``"mean"``: the mean variance) times sum c_k^2.

    Examples
    --------
    >>> round(blt_loss([0.9], [-0.05], 2**10), 2), round(blt_loss([0.9], [-0.05], 2**10, "mean"), 2)
    (269.04, 137.84)
    """
    th, om = check_blt_parameters(thetas, omegas)
    rows, cols = _loss_factors(th, om, check_int("horizon", horizon, low=1),
                               check_choice("reduction", reduction, OBJECTIVES))
    return rows * cols


def _unpack(p: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray]:
    """theta = exp(-exp(p_i)); s = softmax(p_b.., 0) without the slack, so sum s < 1."""
    thetas = np.exp(-np.exp(p[:b]))
    z = np.concatenate([p[b:], [0.0]])
    e = np.exp(z - z.max())
    s = (e / e.sum())[:b]
    return thetas, -(1.0 - thetas) * s


def _arcsine_start(b: int, horizon: int) -> np.ndarray:
    """Quadrature of G(x) = (1 - x)^(1/2) = 1 - int (1 - t) x / (1 - t x) dmu(t).

    mu is the arcsine law on [0, 1] (its moments are the square-root coefficients), so a
    BLT is a quadrature of mu: cells in 1 - t geometric from 1 to 1/(T + 1), theta at
    each cell's geometric centre, s the cell's mass under mu.
    """
    edges = np.geomspace(1.0, 1.0 / (horizon + 1.0), b + 1)
    mass_above = 1.0 - (2.0 / np.pi) * np.arcsin(np.sqrt(1.0 - edges))  # mu([1 - e, 1])
    mass = mass_above[:-1] - mass_above[1:]
    r = -np.log1p(-np.sqrt(edges[:-1] * edges[1:]))
    return np.concatenate([np.log(r), np.log(mass) - np.log1p(-mass.sum())])


def _bounds(buffers: int, horizon: int) -> list[tuple[float, float]]:
    return [(math.log(1e-3 / horizon), math.log(50.0))] * buffers + [(-30.0, 30.0)] * buffers


def _minimize(loss, x0: np.ndarray, buffers: int, horizon: int) -> np.ndarray:
    """L-BFGS-B within the bounds from x0 (clipped into them); x0 if it does no better."""
    bounds = _bounds(buffers, horizon)
    x0 = np.clip(x0, [lo for lo, _ in bounds], [hi for _, hi in bounds])
    with threadpool_limits(1, user_api="blas"):  # 10 parameters: threads only contend
        res = optimize.minimize(loss, x0, method="L-BFGS-B", bounds=bounds)
    return res.x if res.fun <= loss(x0) else x0


@functools.lru_cache(maxsize=64)
def _optimized(horizon: int, buffers: int, objective: str = "max"
               ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    def loss(p: np.ndarray) -> float:
        rows, cols = _loss_factors(*_unpack(p, buffers), horizon, objective)
        return math.log(rows) + math.log(cols)

    thetas, omegas = _unpack(_minimize(loss, _arcsine_start(buffers, horizon), buffers,
                                       horizon), buffers)
    return tuple(thetas.tolist()), tuple(omegas.tolist())


def _pattern_sensitivity_sq(thetas: np.ndarray, omegas: np.ndarray, horizon: int,
                            steps: int, separation: int) -> float:
    """||sum_{j < k} C e_{jb}||^2 (the pattern 0, b, .., (k - 1) b) in closed form.

    It is sum_{i, j < k} X_{ib, jb} with X = C^T C. For p <= q, d = q - p and u = -omega
    (c_0 = 1, c_m = u^T M^(m-1) 1): X_pq = sum_{m < T - q} c_m c_{m+d} = c_d + u^T
    Gamma(T - q - 1) (M^T)^d u, Gamma(n) = sum_{j<n} M^j 1 1^T (M^j)^T. The k Gammas grow
    from the smallest, Gamma(n + b) = Gamma(n) + M^n Gamma(b) (M^n)^T: O(k b^3 + b^3 log T),
    whatever T, and positive terms only (M, u >= 0). The sensitivity to a participant:
    c is non-negative and non-increasing, so that pattern is the worst (BltCounter's
    Privacy).
    """
    u, m = -omegas, state_matrix(thetas, omegas)
    step = np.linalg.matrix_power(m, separation)
    shifts, lagged = np.empty((steps, u.size)), np.empty(steps)  # (M^T)^(e b) u, c_(e b)
    shifts[0], lagged[0] = u, 1.0
    column = np.linalg.matrix_power(m, separation - 1) @ np.ones(u.size)  # M^(e b - 1) 1
    for e in range(1, steps):
        shifts[e], lagged[e] = shifts[e - 1] @ step, u @ column
        column = step @ column
    size = horizon - (steps - 1) * separation - 1  # Gamma's size for the last step
    gram, power, block = _gram(m, size), np.linalg.matrix_power(m, size), _gram(m, separation)
    weighted = np.empty((steps, u.size))  # Gamma(T - j b - 1) u
    for j in range(steps - 1, -1, -1):
        weighted[j] = gram @ u
        gram, power = gram + power @ block @ power.T, power @ step
    pairs = lagged[None, :] + weighted @ shifts.T  # [j, e]: X_(jb - eb, jb)
    lags = np.arange(steps)
    twice = np.where(lags > 0, 2.0, 1.0)  # X is symmetric: every lag e > 0 twice
    return float(np.sum(np.where(lags[None, :] <= lags[:, None], pairs * twice, 0.0)))


def _pack(thetas: np.ndarray, omegas: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_unpack`."""
    s = -omegas / (1.0 - thetas)
    return np.concatenate([np.log(-np.log(thetas)), np.log(s) - np.log1p(-np.sum(s))])


@functools.lru_cache(maxsize=64)
def _optimized_for(horizon: int, buffers: int, objective: str, steps: int, separation: int
                   ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Minimise the loss under ``steps`` participations ``separation`` apart, from the
    single-participation optimum (kept if the result does no better)."""
    def loss(thetas: np.ndarray, omegas: np.ndarray) -> float:
        rows = _variance_factor(thetas, omegas, horizon, objective)
        return math.log(rows) + math.log(_pattern_sensitivity_sq(
            thetas, omegas, horizon, steps, separation))

    single = tuple(np.array(v) for v in _optimized(horizon, buffers, objective))
    found = _unpack(_minimize(lambda p: loss(*_unpack(p, buffers)), _pack(*single), buffers,
                              horizon), buffers)
    best = found if loss(*found) <= loss(*single) else single
    return tuple(best[0].tolist()), tuple(best[1].tolist())


def optimal_blt_parameters(horizon: int, buffers: int = DEFAULT_BUFFERS,
                           objective: str = "max", participation: object = "single"
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(thetas, omegas) minimizing ``blt_loss(..., objective)`` at this horizon (cached
    per (T, b, objective)). ``"mean"`` minimises the mean release variance times the
    largest squared column norm (the mean loss of Dvijotham et al. 2024): the error that
    adds up over a stream, as regret does.

    Deterministic L-BFGS-B on a parametrisation that keeps the parameters valid, from the
    arcsine quadrature start. ``participation=(k, b)``
    (:class:`~dpol.counters.strategies.Participation`) minimises
    ``BltStrategy.loss(objective, participation)`` instead (exact squared sensitivity in
    closed form, :func:`_pattern_sensitivity_sq`), from the single-participation optimum,
    kept if the result does no better.

    Examples
    --------
    >>> thetas, omegas = optimal_blt_parameters(2**10, buffers=3)
    >>> round(blt_loss(thetas, omegas, 2**10), 2)
    10.74
    >>> thetas, omegas = optimal_blt_parameters(2**10, buffers=3, objective="mean")
    >>> round(blt_loss(thetas, omegas, 2**10, "mean"), 2)
    9.36
    """
    horizon = check_int("horizon", horizon, low=1)
    buffers = check_int("buffers", buffers, low=1)
    objective = check_choice("objective", objective, OBJECTIVES)
    pattern = parse_participation(participation)
    steps = pattern.within(horizon)
    thetas, omegas = _optimized(horizon, buffers, objective) if steps == 1 else \
        _optimized_for(horizon, buffers, objective, steps, pattern.min_separation)
    return np.array(thetas), np.array(omegas)
