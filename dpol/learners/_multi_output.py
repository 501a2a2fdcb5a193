"""PQFTL with K outputs: labels y_t in R^K, one Gram matrix, K right-hand sides.

Least squares with K outputs (one-hot rows for K classes) solves W_t = (t alpha I +
V_t)^-1 U_t, the same V_t = sum x x^T for every column and U_t = sum x y^T.
:class:`~dpol.learners.PrivateQuadraticFTL` with ``outputs=K`` releases U_t through one u
counter of dimension d K (vec(x y^T), row-major) and solves the K systems on one
factorisation a step (:func:`tridiagonal_block`, :func:`eigen_solve`). This module holds
the label side (validation, clipping, the loss) and the solver's K-column steps. Against
one-vs-rest it wins at equal privacy (docs/benchmarks/defaults.md). Predictions are
clipped to [-y_bound, y_bound] output by output, which keeps their order.

Privacy
-------
Replace-one, ||x|| <= R, labels rescaled to ||y|| <= R. ||x y^T - x' y'^T||_F^2 = a ||y||^2
+ b ||y'||^2 - 2 c g (a, b the squared row norms, c = <x, x'>, g = <y, y'>) is linear in
g, so its maximum is at an end of g's range, where the scalar case has it: the stacked
sensitivity is the scalar labels' ``outer_product_sensitivity(R, R)`` (add/remove: as for
scalars), and K classes cost no more noise per coordinate. Labels with ||y|| > Y are scaled
to norm Y (counted). Derivation: docs/derivations/pqftl.md, Several outputs.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from dpol._validation import as_matrix, as_vector, check_int, fail
from dpol.clipping import clip_norms, exceeds_l2, scale_rows_l2
from dpol.learners.postprocess import ReleaseAverage, row_dot

__all__ = ["QuadraticOutputs", "check_outputs", "eigen_solve", "tridiagonal_block",
           "u_element", "u_elements"]


def check_outputs(learner: object, outputs: object) -> int:
    """K, validated against the learner's other settings (K > 1 needs ``fixes`` and the
    tight calibration: JKT's printed algorithm and noise are for scalar labels)."""
    k = check_int("outputs", outputs, low=1)
    if k > 1 and not learner.fixes:
        raise fail("outputs", "be 1 with fixes=False (JKT's algorithm as printed)", k)
    if k > 1 and learner.calibration == "paper":
        raise fail("outputs", "be 1 with calibration='paper' (JKT's scalar labels)", k)
    return k


def u_element(x: np.ndarray, y: float | np.ndarray) -> np.ndarray:
    """The u counter's element of one row: y x, or vec(x y^T) for a label row y (K,)
    (the floats of :func:`u_elements`'s row: the same products)."""
    return y * x if np.ndim(y) == 0 else np.outer(x, y).ravel()


def u_elements(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """The u counter's elements of rows X (n, d) and labels Y: y x (n, d) for labels (n,),
    vec(x y^T) row-major (n, d K) for labels (n, K).

    >>> u_elements(np.array([[1.0, 2.0]]), np.array([[1.0, -1.0, 0.5]])).tolist()
    [[1.0, -1.0, 0.5, 2.0, -2.0, 1.0]]
    """
    if Y.ndim == 1:
        return Y[:, None] * X  # the scalar labels' expression: the same floats as before
    return (X[:, :, None] * Y[:, None, :]).reshape(len(X), -1)


def _as_shape(name: str, value: object, shape: tuple[int, int]) -> np.ndarray:
    """A fresh finite float64 array of exactly ``shape`` (as_matrix's rules and message)."""
    arr = as_matrix(name, value, shape[1], allow_empty=True) if np.ndim(value) == 2 else None
    if arr is None or len(arr) != shape[0]:
        raise fail(name, f"have shape {shape}", value if arr is None else arr)
    return arr


def eigen_solve(vec: np.ndarray, lam: np.ndarray, u: np.ndarray, ridge: float
                ) -> np.ndarray:
    """(P(S) + ridge I)^-1 u from S's eigenpairs (lam, vec): the PSD solver's last route,
    for u (d,) (its expression as it always was) or (d, K)."""
    if u.ndim == 1:
        return vec @ ((u @ vec) / (np.maximum(lam, 0.0) + ridge))
    return vec @ ((vec.T @ u) / (np.maximum(lam, 0.0) + ridge)[:, None])


def tridiagonal_block(refl, tau, diag, off, u, ridge, lam, z, k, every):
    """The PSD solver's tridiagonal route (``_PsdSolver._tridiagonal``, whose notation
    this keeps) for u (d, K): the same steps on (d, K) blocks, one factorisation for
    the K columns (dormqr needs lwork >= K); None if LAPACK fails. Kept here, beside
    the other multi-output pieces, so the 1-d route stays as it was."""
    c = np.empty(u.shape)
    c[0] = u[0]
    c[1:] = lapack.dormqr("L", "T", refl, tau, u[1:], u.shape[1])[0]
    if every:
        x = z @ ((z.T @ c) / (np.maximum(lam, 0.0) + ridge)[:, None])
    else:
        if k:
            p = z.T @ c
            c -= z @ p
        _, _, x, info = lapack.dptsv(diag + ridge, off, c)
        if info != 0:
            return None
        if k:
            x += z @ (p / ridge)
    w = np.empty(u.shape)
    w[0] = x[0]
    w[1:] = lapack.dormqr("L", "N", refl, tau, x[1:], u.shape[1])[0]
    return w


class QuadraticOutputs:
    """PQFTL's labels and loss, scalar (K = 1, the base's hooks) or rows of R^K.

    Mixed in before :class:`~dpol.learners._base.OnlineLearner`; the class sets
    ``outputs``. With K > 1 a label is a vector y (K,), ``run``'s labels a matrix
    (n, K), and a label row of norm above ``y_bound`` is scaled to it and counted.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> m = PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, outputs=3, seed=0)
    >>> m.learn_one([0.6, 0.0], [0.0, 3.0, 4.0])  # ||y|| = 5 > y_bound = 1: scaled
    >>> m.n_clipped_, m.weights.shape, m.predict_one([1.0, 0.0]).shape
    (1, (2, 3), (3,))
    >>> m.learn_one([0.6, 0.0], [1.0, 0.0])
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: y must have shape (3,); got array([1. 0.], dtype=float64)
    """

    outputs = 1

    def _zero_weights(self) -> np.ndarray:
        """The first release, 0 of the weights' shape ((d,) or (d, K)); the model's
        average takes that shape too."""
        if self.outputs == 1:
            return np.zeros(self.dim)
        self._average = ReleaseAverage((self.dim, self.outputs))
        return np.zeros((self.dim, self.outputs))

    def _check_label(self, y: object, name: str = "y") -> float | np.ndarray:
        if self.outputs == 1:
            return super()._check_label(y, name)
        return as_vector(name, y, self.outputs)

    def _check_labels(self, y: object, n: int) -> np.ndarray:
        if self.outputs == 1:
            return super()._check_labels(y, n)
        return _as_shape("y", y, (n, self.outputs))

    def _label_over(self, y: float | np.ndarray) -> bool:
        if self.outputs == 1:
            return abs(y) > self.y_bound
        return exceeds_l2(y, self.y_bound)

    def _labels_over(self, y: np.ndarray) -> np.ndarray:
        if self.outputs == 1 or np.ndim(y) == 1:  # (a wrapper's loss passes zeros (n,))
            return np.abs(y) > self.y_bound
        return clip_norms(y) > self.y_bound

    def _label_sizes(self, y: object) -> object:
        if self.outputs == 1:
            return y
        return clip_norms(np.asarray(y, dtype=float).reshape(-1, self.outputs))

    def _check_weights(self, name: str, w: object) -> np.ndarray:
        if self.outputs == 1:
            return super()._check_weights(name, w)
        return _as_shape(name, w, (self.dim, self.outputs))

    def _clip(self, X: np.ndarray, y: np.ndarray, *, copy: bool = True
              ) -> tuple[np.ndarray, np.ndarray, int]:
        """Rows of X to norm x_bound and label rows to norm y_bound; the rows counted once
        (as ``clip_examples``: a norm within a rounding step of its bound is not counted)."""
        if self.outputs == 1:
            return super()._clip(X, y, copy=copy)
        counted = np.zeros(len(X), dtype=bool)
        out = []
        for A, bound, own in ((X, self.x_bound, not copy), (y, self.y_bound, False)):
            norms = clip_norms(A)
            over = norms > bound
            if np.any(over):
                A = A if own else A.copy()
                scale_rows_l2(A, norms, over, bound)
            counted |= norms > bound * (1.0 + 1e-12)
            out.append(A)
        return out[0], out[1], int(np.count_nonzero(counted))

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """1/2 ||y - W^T x||^2 + alpha/2 ||W||_F^2 for rows of X, y."""
        if w.ndim == 1:
            return 0.5 * (y - X @ w) ** 2 + 0.5 * self.alpha * float(w @ w)
        return 0.5 * np.sum((y - X @ w) ** 2, axis=1) + 0.5 * self.alpha * float(np.vdot(w, w))

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        if W.ndim == 2:
            return 0.5 * (y - np.einsum("ij,ij->i", W, X)) ** 2 \
                + 0.5 * self.alpha * np.einsum("ij,ij->i", W, W)
        return 0.5 * np.sum((y - row_dot(X, W)) ** 2, axis=1) \
            + 0.5 * self.alpha * np.einsum("ijk,ijk->i", W, W)
