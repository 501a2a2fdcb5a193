"""The exact l2 sensitivity of :class:`PrivateKernelRegression`'s releases (NW eq. (3)).

A step at 0-based position s is ``w <- a_s w - eta_s (phi . w - y) phi`` with ``m_s = s +
t0``, ``eta_s = m_s^-theta``, ``a_s = 1 - 1/m_s``, ``||phi|| <= kappa``, ``|y| <= M``.

1. **Norm of the iterate**: a recursion R_s bounds ``||w_s||`` (exact from the second or
   third step on; NW Lemma 2's closed form is 3-9 times larger).
2. **One step**: two neighbours' steps from one w differ by at most ``eta_s kappa M
   g(kappa R / M)``, ``g(r) = max_{0 <= c <= 1} 2 (1 + r c) sqrt(1 - c^2)`` (NW's (16):
   2 + r).
3. **Later steps** contract by a_j: a change at s moves release t > s by at most
   ``Delta_t(s) = h_s / m_{t-1}``, ``h_s = m_s eta_s kappa M g(kappa R_s / M)``.
4. **Transcript**: ``mu = max_s sqrt(sum_{t > s} (Delta_t(s) / s_t)^2)`` (mu-GDP, adaptive
   inputs included: Smith & Thakurta 2022); secure noise sums the Renyi costs the same
   way (:func:`transcript_rho`; Feldman & Zrnic 2021, Theorem 3.1).

The bounds are attained (tests maximise them over tiny streams). Proofs:
docs/derivations/kernel_regression.md, The sensitivity, step by step.
"""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_real, fail

__all__ = ["check_t0", "diameter_factor", "position_weights", "release_sensitivities",
           "transcript_mu",
           "transcript_rho"]


def check_t0(t0: float | None, kappa: float, theta: float) -> float:
    """NW's offset t0, checked: t0^theta >= kappa^2 + 1, which the step sizes
    eta_t = (t - 1 + t0)^-theta need for the bounds below; None: the smallest integer.

    Examples
    --------
    >>> check_t0(None, 1.0, 0.5)
    4.0
    """
    need = kappa**2 + 1.0
    if t0 is None:
        t0 = math.ceil(need ** (1.0 / theta))
        while t0**theta < need:
            t0 += 1
        return float(t0)
    t0 = check_real("t0", t0, low=0.0, low_open=True)
    if t0**theta < need:
        raise fail("t0", f"satisfy t0^theta >= kappa^2 + 1 = {need:g}", t0)
    return t0


def diameter_factor(r: np.ndarray | float) -> np.ndarray:
    """g(r) = max over c in [0, 1] of 2 (1 + r c) sqrt(1 - c^2) (module step 2).

    Examples
    --------
    >>> [round(float(v), 6) for v in diameter_factor(np.array([0.0, 1.0]))]  # 2, 3 sqrt(3)/2
    [2.0, 2.598076]
    """
    r = np.asarray(r, dtype=float)
    safe = np.where(r > 0.0, r, 1.0)
    c = np.where(r > 0.0, (np.sqrt(1.0 + 8.0 * r * r) - 1.0) / (4.0 * safe), 0.0)
    return 2.0 * (1.0 + r * c) * np.sqrt(1.0 - c * c)


def _norm_bounds(m: np.ndarray, eta: np.ndarray, kappa: float, bound: float) -> np.ndarray:
    """R_s >= ||w_s|| for s = 0..T-1 (module step 1)."""
    a = 1.0 - 1.0 / m
    quad = (eta * bound**2 / (2.0 * a - eta * kappa**2)).tolist()
    lin = (eta * kappa * bound).tolist()
    a = a.tolist()
    out, r = [0.0] * len(m), 0.0
    for s in range(len(m) - 1):  # sequential: the minimum of two bounds at every step
        r = min(a[s] * r + lin[s], a[s] * math.sqrt(r * r + quad[s]))
        out[s + 1] = r
    return np.array(out)


def position_weights(horizon: int, t0: float, theta: float, kappa: float,
                     bound: float) -> tuple[np.ndarray, np.ndarray]:
    """(m, h): a change at 0-based position s moves release t > s by <= h_s / m_{t-1}.

    Examples
    --------
    >>> m, h = position_weights(3, 3.0, 0.8, 1.0, 1.0)
    >>> bool(np.isclose(h[0] / m[0], 2 * 3.0**-0.8))  # t = 1: w_0 = 0, a label flip
    True
    """
    m = np.arange(horizon, dtype=float) + t0
    eta = m**-theta
    R = _norm_bounds(m, eta, kappa, bound)
    return m, m * eta * kappa * bound * diameter_factor(kappa * R / bound)


def release_sensitivities(m: np.ndarray, h: np.ndarray) -> np.ndarray:
    """l2 sensitivity of release t = 1..T alone: max over s < t of h_s / m_{t-1}."""
    return np.maximum.accumulate(h) / m


def _tail(v: np.ndarray) -> np.ndarray:
    """tail[s] = sum over i >= s of v[i]."""
    return np.cumsum(v[::-1])[::-1]


def transcript_mu(m: np.ndarray, h: np.ndarray, stds: np.ndarray) -> float:
    """mu of the whole transcript with stds s_t (module step 4).

    Examples
    --------
    >>> m, h = position_weights(100, 3.0, 0.8, 1.0, 1.0)
    >>> sens = release_sensitivities(m, h)
    >>> 0.5 < transcript_mu(m, h, sens) / math.sqrt(100) < 1  # every release's worst: 10
    True
    >>> transcript_mu(m, h, 0 * sens)  # a release without noise: not private
    inf
    """
    if np.any(stds <= 0.0):  # every h_s > 0: a noise-free release shows the change
        return math.inf
    return math.sqrt(float(np.max(h**2 * _tail((m * stds) ** -2.0))))


def transcript_rho(m: np.ndarray, h: np.ndarray, stds: np.ndarray, slack: np.ndarray) -> float:
    """zCDP rho = max_s sum_{t > s} (Delta_t(s) + slack_t)^2 / (2 s_t^2) (secure noise).

    Examples
    --------
    >>> m, h = position_weights(50, 3.0, 0.8, 1.0, 1.0)
    >>> s = release_sensitivities(m, h)
    >>> bool(np.isclose(transcript_rho(m, h, s, 0 * s), transcript_mu(m, h, s) ** 2 / 2))
    True
    """
    if np.any(stds <= 0.0):  # as transcript_mu: a noise-free release is not private
        return math.inf
    inv = stds**-2.0
    quad = h**2 * _tail(inv / m**2) + 2.0 * h * _tail(slack * inv / m) + _tail(slack**2 * inv)
    return float(np.max(quad)) / 2.0
