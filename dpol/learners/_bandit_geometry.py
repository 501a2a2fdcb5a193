"""The geometry of ENV's bandit learner: sphere directions, one-point gradient
estimates, the Frank-Wolfe step toward the lazy-projection point, and a domain given by
its linear oracle alone (ENV Algorithm 1, Lemma C.4; layer L4).

These are data-free or post-processing steps: no noise is added here (the batch sums'
counter, in :mod:`dpol.learners._bandit`, is the only mechanism).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpol._validation import as_vector, check_int, check_real, fail

__all__ = ["LinearOracleDomain", "frank_wolfe_step", "one_point_gradient", "sample_sphere"]


def sample_sphere(rng: np.random.Generator, k: int, dim: int) -> np.ndarray:
    """k independent uniform points of the unit sphere S^(dim-1), shape (k, dim).

    Normalised Gaussians. ``sample_sphere(rng, a, n)`` then ``(rng, b, n)`` gives the rows
    of ``(rng, a + b, n)``, so a vectorized run repeats the ask/tell loop's draws exactly.

    Examples
    --------
    >>> u = sample_sphere(np.random.default_rng(0), 5, 3)
    >>> u.shape, bool(np.allclose(np.linalg.norm(u, axis=1), 1.0))
    ((5, 3), True)
    """
    z = rng.standard_normal((k, dim))
    return z / np.sqrt(np.einsum("ij,ij->i", z, z))[:, None]


def one_point_gradient(values: np.ndarray, directions: np.ndarray, zeta: float) -> np.ndarray:
    """Rows (n/zeta) f(x + zeta u) u: unbiased for the gradient of the ball smoothing of f.

    ENV Lemma 2.2(3) (after Flaxman-Kalai-McMahan). For linear f(x) = <theta, x> + b the
    smoothing is f itself and the mean is exactly theta (E u = 0, E u u^T = I/n).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u = sample_sphere(rng, 200000, 3); theta = np.array([1.0, -2.0, 0.5])
    >>> g = one_point_gradient(u @ theta * 0.1 + 0.3, u, 0.1)   # f(x) = <theta, x> + 0.3 at 0
    >>> bool(np.all(np.abs(g.mean(axis=0) - theta) < 0.05))
    True
    """
    values = np.asarray(values, dtype=np.float64)
    return ((directions.shape[1] / zeta) * values)[:, None] * directions


def frank_wolfe_step(oracle: Callable, x: np.ndarray, center: np.ndarray, y: np.ndarray
                     ) -> tuple[np.ndarray, float]:
    """One Frank-Wolfe iteration on q(x) = 1/2 ||x - center||^2 + <y, x> (one oracle call).

    ENV Alg. 1 line 14 with the sign corrected (docs/errata.md, ENV-1), exact line search
    gamma = min(1, gap / ||v - x||^2) (ENV-3). Returns the new point (in the set) and the
    Frank-Wolfe gap <grad q(x), x - v> >= q(x) - min q.

    Examples
    --------
    With ``y = 0`` the minimiser is the projection of ``center`` on the set, here (1, 0.5):

    >>> from dpol.sets import Box
    >>> box, x = Box(0.0, 1.0, dim=2), np.zeros(2)
    >>> for _ in range(3):
    ...     x, gap = frank_wolfe_step(box.linear_oracle, x, np.array([2.0, 0.5]), np.zeros(2))
    ...     print(x.tolist(), gap)
    [1.0, 1.0] 2.5
    [1.0, 0.5] 0.5
    [1.0, 0.5] 0.0
    """
    g = x - center + y
    v = np.asarray(oracle(g), dtype=np.float64)
    direction = v - x
    gap = float(g @ (x - v))
    dd = float(direction @ direction)
    if gap <= 0.0 or dd == 0.0:
        return x, max(gap, 0.0)
    return x + min(1.0, gap / dd) * direction, gap


class LinearOracleDomain:
    """A convex set known only through its linear minimisation oracle.

    Parameters
    ----------
    oracle : callable ``oracle(c) -> argmin_{x in D} <c, x>``
        Exact, with deterministic tie-breaking; must be picklable for checkpoints.
    dim : int
    diameter : float
        An upper bound on the l2 diameter of D.

    Examples
    --------
    >>> from dpol.sets import Box
    >>> box = Box(0.0, 1.0, dim=2)
    >>> d = LinearOracleDomain(box.linear_oracle, 2, box.diameter)
    >>> d.linear_oracle([1.0, -1.0])
    array([0., 1.])
    """

    def __init__(self, oracle: Callable, dim: int, diameter: float) -> None:
        if not callable(oracle):
            raise fail("oracle", "be callable", oracle)
        self.oracle = oracle
        self.dim = check_int("dim", dim, low=1)
        self.diameter = check_real("diameter", diameter, low=0.0, low_open=True)

    def linear_oracle(self, c: object) -> np.ndarray:
        """argmin over the set of <c, x> (a fresh array)."""
        return self._linear_oracle(as_vector("c", c, self.dim))

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        """The oracle on a clean float64 vector; its answer is checked (shape, finite)."""
        v = np.array(self.oracle(c), dtype=np.float64)
        if v.shape != (self.dim,) or not np.isfinite(v).all():
            raise fail("oracle(c)", f"return a finite vector of shape ({self.dim},)", v)
        return v

    def __repr__(self) -> str:
        return f"LinearOracleDomain(dim={self.dim}, diameter={self.diameter:g})"
