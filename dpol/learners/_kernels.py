"""Kernels, their bound kappa, and finite feature maps of :class:`PrivateKernelRegression`.

On the ball ``||x|| <= R``, kappa = sup sqrt(K(x, x)) (docs/errata.md, NW-2) is 1 for the
Gaussian kernel and (R^2 + coef0)^(degree / 2) for the polynomial one. Feature maps with
``||phi(x)|| <= kappa``: random Fourier features for the Gaussian (Rahimi & Recht 2007;
``||phi(x)|| = 1``, ``E[phi(x) . phi(x')] = K(x, x')``), the exact multinomial map of
dimension C(d + degree, degree) for the polynomial.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_bound, check_choice, check_int, check_real, fail

__all__ = ["KERNELS", "FeatureMap", "Kernel", "on_ball"]

#: the kernels' names (``Kernel.name``)
KERNELS = ("gaussian", "polynomial")
#: a public, fixed tag mixed into the feature seed, so that the (public) feature stream can
#: never coincide with a noise stream drawn from the same integer seed
_FEATURE_TAG = 0x4E57
_MAX_POLY_FEATURES = 100_000


@dataclass(frozen=True)
class Kernel:
    """A Mercer kernel on the ball of radius ``x_bound``, with its bound kappa.

    Parameters
    ----------
    name : {"gaussian", "polynomial"}
        One of :data:`KERNELS`: exp(-||x - x'||^2 / (2 bandwidth^2)) or
        (x . x' + coef0)^degree.
    bandwidth : float
        Of the Gaussian kernel.
    degree, coef0 : int, float
        Of the polynomial kernel (coef0 >= 0).
    x_bound : float
        R, the radius of the ball (a learner sets its own: :func:`on_ball`).

    Examples
    --------
    >>> k = Kernel("polynomial", degree=2, coef0=1.0, x_bound=1.0)
    >>> k.kappa, float(k(np.ones((1, 2)) / 2, np.ones((1, 2)))[0, 0])
    (2.0, 4.0)
    """

    name: str = "gaussian"
    bandwidth: float = 1.0
    degree: int = 2
    coef0: float = 1.0
    x_bound: float = 1.0

    def __post_init__(self) -> None:
        check_choice("kernel", self.name, KERNELS)
        check_real("bandwidth", self.bandwidth, low=0.0, low_open=True)
        check_int("degree", self.degree, low=1)
        check_real("coef0", self.coef0, low=0.0)
        check_bound("x_bound", self.x_bound)

    @property
    def kappa(self) -> float:
        """sup over ||x|| <= x_bound of sqrt(K(x, x)) (docs/errata.md, NW-2)."""
        if self.name == "gaussian":
            return 1.0
        return float((self.x_bound**2 + self.coef0) ** (self.degree / 2.0))

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The Gram block K(A, B), shape (len(A), len(B))."""
        if self.name == "gaussian":
            sq = (np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :]
                  - 2.0 * A @ B.T)
            return np.exp(-np.maximum(sq, 0.0) / (2.0 * self.bandwidth**2))
        return (A @ B.T + self.coef0) ** self.degree


def on_ball(kernel: str | Kernel, x_bound: float) -> Kernel:
    """``kernel`` (a name of :data:`KERNELS`, with its default parameters, or a
    :class:`Kernel`) on the ball of radius ``x_bound``.

    >>> on_ball(Kernel("polynomial", degree=3), 2.0).kappa  # (R^2 + coef0)^(degree / 2)
    11.180339887498949
    """
    if isinstance(kernel, Kernel):
        return dataclasses.replace(kernel, x_bound=x_bound)
    return Kernel(kernel, x_bound=x_bound)


class FeatureMap:
    """phi: R^d -> R^D for a :class:`Kernel`, with ``||phi(x)|| <= kernel.kappa``.

    Parameters
    ----------
    kernel : Kernel
    dim : int
        Input dimension d.
    n_features : int or None
        D for the Gaussian kernel (even, default 256); must be None for the polynomial
        kernel, whose exact map has D = C(d + degree, degree).
    feature_seed : int
        Public seed of the random frequencies, mixed with a fixed tag (never a noise
        stream of the same integer).

    Examples
    --------
    >>> k = Kernel("gaussian", bandwidth=0.5)
    >>> phi = FeatureMap(k, 2, 4000, feature_seed=0)
    >>> X = np.array([[0.0, 0.1], [0.3, -0.2]])
    >>> F = phi(X)
    >>> bool(np.allclose(np.linalg.norm(F, axis=1), 1.0))
    True
    >>> bool(abs(F[0] @ F[1] - k(X, X)[0, 1]) < 0.05)  # D = 4000: error ~ 1/sqrt(D)
    True
    """

    def __init__(self, kernel: Kernel, dim: int, n_features: int | None = None,
                 feature_seed: int = 0) -> None:
        self.kernel = kernel
        self.dim = check_int("dim", dim, low=1)
        self.feature_seed = check_int("feature_seed", feature_seed, low=0)
        if kernel.name == "gaussian":
            n = 256 if n_features is None else check_int("n_features", n_features, low=2)
            if n % 2:
                raise fail("n_features", "be even (cos/sin pairs)", n_features)
            rng = np.random.default_rng([self.feature_seed, _FEATURE_TAG])
            self.omega = rng.standard_normal((self.dim, n // 2)) / kernel.bandwidth
            self.n_features = n
        else:
            if n_features is not None:
                raise fail("n_features", "be None with kernel='polynomial' (its feature map "
                           "is exact, of dimension C(d + degree, degree))", n_features)
            n = math.comb(self.dim + kernel.degree, kernel.degree)
            if n > _MAX_POLY_FEATURES:
                raise fail("degree", f"give at most {_MAX_POLY_FEATURES} exact polynomial "
                           f"features in dimension {self.dim} (C(d + degree, degree) = {n})",
                           kernel.degree)
            combos = list(itertools.combinations_with_replacement(range(self.dim + 1),
                                                                  kernel.degree))
            self.index = np.array(combos, dtype=np.intp)
            counts = [np.bincount(c, minlength=self.dim + 1) for c in combos]
            fact = math.factorial(kernel.degree)
            self.coef = np.sqrt([fact / math.prod(math.factorial(int(a)) for a in c)
                                 for c in counts])
            self.n_features = n

    @property
    def kappa(self) -> float:
        """sup ||phi(x)|| over the ball: 1 for random Fourier features, kernel.kappa else."""
        return 1.0 if self.kernel.name == "gaussian" else self.kernel.kappa

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Features of the rows of X, shape (n, D)."""
        if self.kernel.name == "gaussian":
            # X Omega by a sum over the d inputs in a fixed order, not a BLAS product:
            # a row then maps to the same bits alone or in a batch (``run`` equals the
            # ``learn_one`` loop bit for bit)
            proj = X[:, :1] * self.omega[0]
            for j in range(1, self.dim):
                proj += X[:, j:j + 1] * self.omega[j]
            return np.hstack([np.cos(proj), np.sin(proj)]) / math.sqrt(self.n_features / 2)
        ext = np.hstack([X, np.full((X.shape[0], 1), math.sqrt(self.kernel.coef0))])
        return self.coef * np.prod(ext[:, self.index], axis=2)
