"""The neighbouring pair for :class:`~dpol.learners.PrivateKernelRegression`'s audits.

A change at s = 0 moves release t by at most Delta_t(0) = h_0 / m_{t-1}
(:mod:`dpol.learners._kernel_sensitivity`), and this pair attains it: at s = 0 the same
x = p, ||phi(p)|| = kappa, with labels +M against -M; every other element (q, 0) with
K(p, q) = 0, so the difference stays along phi(p) and shrinks by exactly a_j. It attains
all of the transcript's mu where s = 0 is the worst position, less elsewhere. How q is
found per kernel, and what the audit suite's learner attains:
docs/derivations/kernel_regression.md, The audits' neighbouring pair.
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
