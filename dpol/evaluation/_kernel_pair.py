"""The neighbouring pair for :class:`~dpol.learners.PrivateKernelRegression`'s audits.

The learner's noise is calibrated for the whole transcript, mu = max_s sqrt(sum_{t > s}
(Delta_t(s) / s_t)^2) (:mod:`dpol.learners._kernel_sensitivity`). A change at s = 0
moves release t by at most Delta_t(0) = h_0 / m_{t-1}, h_0 = 2 t0^(1 - theta) kappa M
(w_0 = 0: the one-step diameter is g(0) = 2), and this pair attains it exactly:

* at s = 0 both streams take the same x = p, ||phi(p)|| = kappa, with labels +M against
  -M: w_1 differs by 2 eta_0 M phi(p), of norm h_0 / m_0;
* every other element is (q, 0) on both sides, phi(q) . phi(p) = K(p, q) = 0 (the kernel
  of the feature map: random features or the exact one). The later labels cancel, so the
  difference follows d <- (a_j I - eta_j phi(q) phi(q)^T) d = a_j d: it stays along
  phi(p) and shrinks by exactly a_j = 1 - 1/m_j, the bound's contraction, and release t
  differs by Delta_t(0) (before the change, y = 0 keeps w = 0).

The noiseless releases divided by the stds then differ by the s = 0 term of mu: all of
mu where s = 0 is the worst position (short horizons), less elsewhere (0.922 of mu for
the audit suite's learner, T = 16, whose worst position is s = 2: a change from an
iterate of norm R_2, which its 16 random features reach only approximately, 0.994 of mu
by a numerical search over streams). Zeros of K(p, q) in the ball: the polynomial kernel
has p . q = -coef0 when coef0 <= R^2 (else q = -p); random Fourier features depend on v
= p - q only (p = v / 2, q = -v / 2), a zero found by a sign change along fixed rays,
||v|| <= 2R. The exact kernel (``query_points``) releases f_t(U): p is the candidate (U,
the directions of +-U and of the axes) that U sees most, ||K(U, p)||, against the bound's
sqrt(lambda_max K(U, U)) kappa; the Gaussian kernel never vanishes, so q = -p at radius R
loses a little at every step. :func:`~dpol.evaluation.audit_pairs.sensitivity_attainment`
measures what a pair attains.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

__all__ = ["kernel_pair_points"]

_N_RAYS, _N_GRID = 64, 512


def _far_point(kernel: object, p: np.ndarray, R: float, e1: np.ndarray) -> np.ndarray:
    """q in the ball with K(p, q) = 0 (polynomial: p . q = -coef0) or smallest (Gaussian)."""
    n = float(np.linalg.norm(p))
    u = p / n if n > 0.0 else e1
    if kernel.name == "polynomial":
        return -min(kernel.coef0 / max(n, 1e-300), R) * u
    return -R * u


def kernel_pair_points(learner: object) -> tuple[np.ndarray, np.ndarray]:
    """(p, q) in the ball, ||phi(p)|| = kappa and K(p, q) = 0 where possible (else minimal).

    Examples
    --------
    >>> from dpol.learners import PrivateKernelRegression
    >>> m = PrivateKernelRegression(2, horizon=4, epsilon=1.0, delta=1e-5, n_features=16)
    >>> p, q = kernel_pair_points(m)
    >>> F = m.features(np.vstack([p, q]))
    >>> abs(float(F[0] @ F[1])) < 1e-12, bool(np.linalg.norm(p) <= 1 >= np.linalg.norm(q))
    (True, True)
    """
    R, d, kernel = learner.x_bound, learner.dim, learner.kernel
    e1 = np.eye(d)[0]
    if learner.mode != "random_features":  # the exact kernel, read at U: p where U sees it
        U = learner.query_points
        dirs = np.vstack([U, -U, np.eye(d)])
        lengths = np.linalg.norm(dirs, axis=1, keepdims=True)
        cand = R * dirs[lengths[:, 0] > 0.0] / lengths[lengths[:, 0] > 0.0]  # ||p|| = R
        if kernel.name == "gaussian":  # K(x, x) = 1 anywhere: U too, clipped to the ball
            cand = np.vstack([cand, U * np.minimum(1.0, R / np.maximum(lengths[:len(U)],
                                                                        1e-300))])
        p = cand[int(np.argmax(np.linalg.norm(kernel(U, cand), axis=0)))]
        return p, _far_point(kernel, p, R, e1)
    if kernel.name == "polynomial":  # (p . q + c)^degree, ||p|| = R for kappa
        return R * e1, _far_point(kernel, R * e1, R, e1)
    # random Fourier features: phi(p) . phi(q) is a function of v = p - q, 1 at v = 0
    rng = np.random.default_rng(0)  # fixed rays: the pair is a deterministic function
    rays = np.vstack([np.eye(d), -np.eye(d), rng.standard_normal((_N_RAYS, d))])
    rays /= np.linalg.norm(rays, axis=1, keepdims=True)
    radii = np.linspace(0.0, 2.0 * R, _N_GRID + 1)[1:]

    def sim(v: np.ndarray) -> np.ndarray:  # rows v: phi(v / 2) . phi(-v / 2)
        return np.einsum("ij,ij->i", learner.features(v / 2.0), learner.features(-v / 2.0))

    best, best_v = np.inf, 2.0 * R * rays[0]
    for u in rays:
        values = sim(radii[:, None] * u[None, :])
        crossing = np.flatnonzero(values <= 0.0)
        if crossing.size:  # a zero on this ray: bracket it from the grid and solve
            i = crossing[0]
            low = radii[i - 1] if i else 0.0
            r = brentq(lambda r, u=u: float(sim(r * u[None, :])[0]), low, radii[i],
                       xtol=1e-15, rtol=1e-15)
            return r * u / 2.0, -r * u / 2.0
        i = int(np.argmin(np.abs(values)))
        if abs(values[i]) < best:
            best, best_v = abs(values[i]), radii[i] * u
    return best_v / 2.0, -best_v / 2.0
