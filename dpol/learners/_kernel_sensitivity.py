"""The exact l2 sensitivity of :class:`PrivateKernelRegression`'s releases (NW eq. (3)).

Notation: a step at 0-based position s is ``w <- a_s w - eta_s (phi . w - y) phi`` with
``m_s = s + t0``, ``eta_s = m_s^-theta``, ``a_s = 1 - eta_s lambda_s = 1 - 1/m_s``, features
``||phi|| <= kappa`` (random features in R^D, or K_x in the RKHS), labels ``|y| <= M``;
``t0^theta >= kappa^2 + 1`` gives ``eta_s kappa^2 <= a_s``. Release t (1-based) is w_t.

1. **Norm of the iterate.** ``R_0 = 0`` and
   ``R_{s+1} = min(a_s R_s + eta_s kappa M, a_s sqrt(R_s^2 + eta_s M^2 / (2 a_s - eta_s
   kappa^2)))`` bound ``||w_s||``. With ``phi = b e`` (``||e|| = 1``) and ``c = e . w``,
   ``||w'||^2 = a^2 (||w||^2 - c^2) + ((a - eta b^2) c + eta b y)^2``; at ``|y| = M`` this
   is a concave quadratic in c whose maximum over all real c is
   ``a^2 [||w||^2 + eta M^2 / (2 a - eta b^2)]``, increasing in b. The first term is the
   triangle inequality (the step of NW Lemma 2, whose closed form kappa M / lambda_s is
   3-9 times R_s at T = 10^3 for kappa = 1). The recursion is the exact supremum whenever
   the maximising c is at most R_s (from the second or third step on in the settings
   tested).
2. **One step.** Two neighbours share w_s and their steps differ by ``eta_s D``,
   ``D = (y - phi . w) phi - (y' - phi' . w) phi'``. Over ``|y|, |y'| <= M``,
   ``||phi||, ||phi'|| <= kappa``, ``||w|| <= R``: ``sup ||D|| = kappa M g(kappa R / M)``,
   ``g(r) = max_{0 <= c <= 1} 2 (1 + r c) sqrt(1 - c^2)``, at
   ``c* = (sqrt(1 + 8 r^2) - 1) / (4 r)``. Proof (scale kappa = M = 1): D is affine in y,
   y' and w, so |y| = |y'| = 1 and ||w|| = R; ``(y, phi) -> (-y, -phi)`` leaves the step
   unchanged, so y = y' = 1 and ``D = F(phi) - F(phi')``, ``F(u) = (1 - u . w) u``. D lies
   in the plane of phi, phi', where only w's projection (norm r <= R, on the first axis)
   acts; there, along each ray, ``F(t e(psi)) = t (1 - r t cos psi) e(psi)`` stays on
   segments from 0 to the limacon ``L(psi) = (1 - r cos psi) e(psi)`` or on the chord
   ``x = 1/(4r)`` between ``L(+-psi_0)``, ``r cos psi_0 = 1/2``, and 0 is the midpoint of
   ``L(+-pi/2)``: the image of the disc lies in the convex hull of L. Two points of L,
   with ``psi_{1,2} = tau +- s``, ``A_i = 1 - r cos psi_i`` and ``k = r cos s``, are at
   squared distance
   ``(A_1 + A_2)^2 sin^2 s + (A_1 - A_2)^2 cos^2 s = 4 sin^2 s (1 - 2 k cos tau + k^2)
   <= [2 (1 + r |cos s|) |sin s|]^2 <= g(r)^2``; equality at ``psi_2 = -psi_1`` on the side
   opposite to w, ``|cos s| = c*``. NW's (16) bounds ``||D||`` by
   ``2 kappa M + 2 kappa^2 R``; g(r) <= 2 + r.
3. **Later steps** multiply the difference by ``A_j = a_j I - eta_j phi_j phi_j^T``,
   ``||A_j|| <= a_j``, and ``prod_{j=s+1}^{t-1} a_j = m_s / m_{t-1}``: a change at
   position s moves release t > s by at most ``Delta_t(s) = h_s / m_{t-1}``,
   ``h_s = m_s eta_s kappa M g(kappa R_s / M)``, and release t alone has sensitivity
   ``max_{s < t} Delta_t(s)`` (the last position wherever h grows, as in all settings
   tested).
4. **Transcript.** Divided by their stds s_t, the T releases are one Gaussian mechanism
   on the stacked ``(w_1 / s_1, ..., w_T / s_T)``, and a change at s moves only t > s:
   ``mu = max_s sqrt(sum_{t > s} (Delta_t(s) / s_t)^2)`` (mu-GDP). For elements chosen
   adaptively, the conditional sensitivities satisfy this bound path by path, which
   suffices (fully adaptive composition of Gaussian DP, Smith & Thakurta 2022). Summing
   every release's own worst case, ``sum_t max_s (...)^2``, overcounts: no single change
   is at every release's worst position. Secure noise adds the rounding slack to each
   shift and sums the per-release Renyi costs the same way (:func:`transcript_rho`), a
   Renyi filter for adaptive inputs (Feldman & Zrnic 2021, Theorem 3.1).

Features in a plane suffice to attain the bounds (step 4 takes later features orthogonal
to the difference): the tests maximise both numerically over tiny streams of the
learner with D = 2 random features and reach them (to 1e-8 in development).
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
