"""The band of a banded Toeplitz strategy optimised for its max or mean loss.

With c_0 = 1 and g the impulse response of 1/p, p(x) = sum_{k<b} c_k x^k, the release
rows are h = cumsum(g) and the loss is R(c) K(c): R = sum_{j<T} w_j h_j^2 (w_j = 1 for
the max loss, whose worst step is the last; (T - j)/T for the mean loss) and K = sum c_k^2
(every column but the last b - 1 holds the whole band). The gradient is exact and costs
two FFTs (dh_j/dc_k = -H_{j-k}, H = cumsum(g * g)). L-BFGS minimises log R + log K from
the square-root band (Kalinin and Lampert 2024), McKenna 2024's objective restricted to
Toeplitz bands, which stream in O(b d).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpol._lazy import scipy_optimize as optimize
from dpol._lazy import scipy_signal as signal
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients

__all__ = ["banded_loss", "optimal_band"]


def _rows(band: np.ndarray, horizon: int, objective: str) -> tuple[np.ndarray, np.ndarray]:
    """(h, w): the release rows by lag and the weights of the objective."""
    impulse = np.zeros(horizon)
    impulse[0] = 1.0
    g = signal.lfilter([1.0], band, impulse)
    lags = np.arange(horizon, dtype=np.float64)
    w = np.ones(horizon) if objective == "max" else (horizon - lags) / horizon
    return g, w


def banded_loss(band: np.ndarray, horizon: int, objective: str = "max") -> float:
    """The strategy's ``loss(objective)`` for a band (c_0 first), O(T b).

    Examples
    --------
    >>> round(banded_loss(sqrt_toeplitz_coefficients(4), 64), 2)
    21.03
    """
    g, w = _rows(np.asarray(band, dtype=np.float64), horizon, objective)
    h = np.cumsum(g)
    return float(np.sum(w * h * h)) * float(np.sum(np.square(band)))


def _log_loss_and_gradient(free: np.ndarray, horizon: int, objective: str
                           ) -> tuple[float, np.ndarray]:
    band = np.concatenate([[1.0], free])
    with np.errstate(over="ignore", invalid="ignore"):  # a line search may try such bands
        g, w = _rows(band, horizon, objective)
        h = np.cumsum(g)
        rows = float(np.sum(w * h * h))
    if not math.isfinite(rows) or rows > 1e100:  # a root inside the unit disk: unstable
        return 1e100, np.zeros_like(free)
    big_h = np.cumsum(signal.fftconvolve(g, g)[:horizon])
    b = band.size
    # sum_j (w h)_j H_{j-k} for k = 1..b-1: a correlation, by FFT
    corr = signal.fftconvolve(w * h, big_h[::-1])[horizon - 1: horizon - 1 + b]
    grad_rows = -2.0 * corr[1:]
    cols = float(np.sum(band**2))
    return math.log(rows) + math.log(cols), grad_rows / rows + 2.0 * band[1:] / cols


@functools.lru_cache(maxsize=32)
def _optimized(horizon: int, bands: int, objective: str) -> tuple[float, ...]:
    start = sqrt_toeplitz_coefficients(bands)
    if bands == 1:
        return (1.0,)
    res = optimize.minimize(_log_loss_and_gradient, start[1:], args=(horizon, objective), jac=True,
                   method="L-BFGS-B")
    best = res.x if res.fun <= _log_loss_and_gradient(start[1:], horizon, objective)[0] \
        else start[1:]
    return (1.0, *best.tolist())


def optimal_band(horizon: int, bands: int, objective: str = "mean") -> np.ndarray:
    """c_0 = 1, c_1..c_{b-1} minimising ``banded_loss(..., objective)`` (cached, never
    worse than the square-root band it starts from).

    Examples
    --------
    >>> band = optimal_band(64, 4, "mean")
    >>> bool(banded_loss(band, 64, "mean") < banded_loss(sqrt_toeplitz_coefficients(4), 64,
    ...                                                 "mean"))
    True
    """
    return np.array(_optimized(horizon, min(bands, horizon), objective))
