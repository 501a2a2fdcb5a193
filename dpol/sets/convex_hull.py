"""The convex hull of finitely many points, a V-polytope (layer L3)."""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import as_matrix, as_vector, check_real, fail
from dpol.sets._base import MEMBER_TOL, ConvexSet, GaugeUndefinedError, point_argument

__all__ = ["ConvexHull", "min_norm_point"]

#: Wolfe's stopping rule: Frank–Wolfe gap <= GAP_TOL · max_i ‖p_i‖²
GAP_TOL = 1e-13


def _affine_minimizer(points: np.ndarray) -> np.ndarray:
    """Weights ``α`` (summing to 1) of the least-norm point of the affine hull of ``points``."""
    if points.shape[0] == 1:
        return np.ones(1)
    basis = (points[1:] - points[0]).T
    beta = np.linalg.lstsq(basis, -points[0], rcond=None)[0]
    return np.concatenate(([1.0 - beta.sum()], beta))


def min_norm_point(points: np.ndarray, gap_tol: float = GAP_TOL) -> tuple[np.ndarray, np.ndarray]:
    """The least-norm point of ``conv(points)`` by Wolfe's algorithm (1976).

    Returns the support (row indices, affinely independent, at most ``d + 1``) and the
    convex weights ``λ`` on it; the point is ``λ @ points[support]``. It stops when the
    Frank–Wolfe gap is at most ``gap_tol·max_i ‖p_i‖²`` (then ``‖y − y*‖ <=
    sqrt(2·gap)``), on a stall or after ``50(k + d) + 100`` major cycles; the point is
    feasible whatever the reason.

    >>> sup, lam = min_norm_point(np.array([[1.0, -1.0], [1.0, 1.0], [2.0, 0.0]]))
    >>> sorted(sup.tolist()), lam.round(12)
    ([0, 1], array([0.5, 0.5]))
    """
    k, d = points.shape
    sq = np.einsum("ij,ij->i", points, points)
    scale = max(float(sq.max()), np.finfo(float).tiny)
    support = [int(np.argmin(sq))]
    lam = np.ones(1)
    y = points[support[0]].copy()
    for _ in range(50 * (k + d) + 100):
        dots = points @ y
        j = int(np.argmin(dots))
        if float(y @ y) - dots[j] <= gap_tol * scale or j in support:
            break
        support.append(j)
        lam = np.append(lam, 0.0)
        while True:  # minor cycle: move to the affine minimiser, dropping points
            alpha = _affine_minimizer(points[support])
            if np.all(alpha > 0.0):
                lam = alpha
                break
            neg = np.flatnonzero(alpha <= 0.0)
            den = lam[neg] - alpha[neg]
            ratios = np.divide(lam[neg], den, out=np.zeros(neg.size), where=den > 0)
            i_min = int(np.argmin(ratios))
            lam = lam + ratios[i_min] * (alpha - lam)
            lam[neg[i_min]] = 0.0
            keep = np.flatnonzero(lam > 0.0)
            support = [support[i] for i in keep]
            lam = lam[keep]
        if j not in support:  # stalled by rounding
            break
        y = lam @ points[support]
    return np.asarray(support, dtype=np.int64), lam / lam.sum()


class ConvexHull(ConvexSet):
    """The polytope ``P = conv{v_1, ..., v_k}`` given by its points (a V-polytope).

    Parameters
    ----------
    vertices : array of shape (k, d)
        The points; non-extreme points are allowed.
    rho : float, optional
        LLOO parameter ``ρ > 0``; defaults to ``√d``. Property (i) of the LLOO holds
        when ``ρ >= √d·μ_P·D`` (Garber–Hazan; :meth:`rho_bound`); a smaller ``ρ`` voids
        it, never feasibility.

    Notes
    -----
    * Projection by Wolfe's min-norm-point algorithm (:func:`min_norm_point`), exact up
      to a Frank–Wolfe gap of ``1e-13·max_i ‖v_i − a‖²``; ``contains(x, tol)``:
      ``‖x − P(x)‖₂ <= tol``. Linear oracle: the point of least ``⟨c, v_i⟩``. Radius
      ``max ‖v_i‖``; diameter ``max ‖v_i − v_j‖`` (O(k²d)). No gauge.
    * LLOO of Garber–Hazan: move ``min(ρ·r/D, 1)`` of the weight of ``x = Σ λ_i v_i``,
      greedily from the points of largest ``⟨c, v_i⟩``, onto the linear-oracle point
      (proof: docs/derivations/local_linear_oracles.md). Pass the maintained ``weights``
      (updated as ``(1 − α)λ + α·λ_p``, :meth:`lloo_weights`) or let :meth:`decompose`
      compute them.

    Examples
    --------
    >>> import numpy as np
    >>> square = ConvexHull([[0, 0], [1, 0], [0, 1], [1, 1]])
    >>> square.project([2.0, 0.5]), square.linear_oracle([1.0, -1.0])
    (array([1. , 0.5]), array([0., 1.]))
    >>> lam = square.decompose([0.5, 0.5])
    >>> p = square.local_linear_oracle([0.5, 0.5], 0.1, [1.0, 2.0], weights=lam)
    >>> bool(p @ [1.0, 2.0] < 1.5), bool(np.linalg.norm(p - 0.5) <= square.rho * 0.1 + 1e-12)
    (True, True)
    """

    def __init__(self, vertices: object, rho: float | None = None) -> None:
        try:
            ndim = int(np.ndim(vertices))
        except ValueError as exc:
            raise fail("vertices", "be a numeric array of shape (k, d)", vertices) from exc
        if ndim != 2:
            raise fail("vertices", "be a numeric array of shape (k, d)", vertices)
        dim = int(np.shape(vertices)[1])
        if dim < 1:
            raise fail("vertices", "have at least one column", vertices)
        self.vertices = as_matrix("vertices", vertices, dim)
        self.vertices.setflags(write=False)
        self.dim = dim
        self.rho = math.sqrt(dim) if rho is None else check_real("rho", rho, low=0.0, low_open=True)
        self._radius = float(np.sqrt(np.einsum("ij,ij->i", self.vertices, self.vertices).max()))
        self._diameter: float | None = None

    @property
    def radius(self) -> float:
        """``max_i ‖v_i‖₂``."""
        return self._radius

    @property
    def diameter(self) -> float:
        """``max_{i,j} ‖v_i − v_j‖₂`` (computed once, in blocks)."""
        if self._diameter is None:
            v = self.vertices - self.vertices.mean(axis=0)
            sq = np.einsum("ij,ij->i", v, v)
            best, pair = -1.0, (0, 0)
            for start in range(0, v.shape[0], 512):
                block = v[start : start + 512]
                d2 = sq[start : start + 512, None] + sq[None, :] - 2.0 * (block @ v.T)
                i, j = np.unravel_index(int(np.argmax(d2)), d2.shape)
                if d2[i, j] > best:
                    best, pair = float(d2[i, j]), (start + int(i), int(j))
            self._diameter = float(np.linalg.norm(v[pair[0]] - v[pair[1]]))
        return self._diameter

    def _project(self, x: np.ndarray) -> np.ndarray:
        support, lam = min_norm_point(self.vertices - x)
        return lam @ self.vertices[support]

    def _linear_oracle(self, c: np.ndarray) -> np.ndarray:
        return self.vertices[int(np.argmin(self.vertices @ c))].copy()

    def _contains(self, x: np.ndarray, tol: float) -> bool:
        return float(np.linalg.norm(self._project(x) - x)) <= tol

    def _gauge(self, x: np.ndarray) -> float:
        raise GaugeUndefinedError(
            "ConvexHull has no gauge: it is the Minkowski functional only when 0 is in the "
            "hull, which a list of points does not certify"
        )

    def point(self, weights: object) -> np.ndarray:
        """``Σ λ_i v_i`` for a weight vector of shape (k,)."""
        return as_vector("weights", weights, self.vertices.shape[0]) @ self.vertices

    def decompose(self, x: object, tol: float = MEMBER_TOL) -> np.ndarray:
        """Convex weights ``λ`` (shape (k,), at most ``d + 1`` non-zero) with ``Σ λ_i v_i = x``.

        Raises if ``x`` is farther than ``tol·max(1, radius)`` from the hull.
        """
        x = point_argument("x", x, self.dim)
        tol = check_real("tol", tol, low=0.0)
        support, lam = min_norm_point(self.vertices - x)
        if np.linalg.norm(lam @ self.vertices[support] - x) > tol * max(1.0, self._radius):
            raise fail("x", f"lie in the convex hull (to {tol:g})", x)
        out = np.zeros(self.vertices.shape[0])
        out[support] = lam
        return out

    def local_linear_oracle(
        self, x: object, r: float, c: object, *, weights: object = None
    ) -> np.ndarray:
        """The LLOO (see :meth:`ConvexSet.local_linear_oracle`) at ``x = Σ weights_i v_i``.

        ``weights`` (shape (k,)) is the maintained decomposition of ``x``; without it one
        is computed by :meth:`decompose`.
        """
        x = point_argument("x", x, self.dim)
        r = check_real("r", r, low=0.0, allow_inf=True)
        c = point_argument("c", c, self.dim)
        lam = self.decompose(x) if weights is None else self._check_weights(weights, x)
        return self._lloo_weights(lam, r, c) @ self.vertices

    def lloo_weights(self, weights: object, r: float, c: object) -> np.ndarray:
        """The LLOO on decompositions: weights ``λ_p`` of ``p`` from the weights of ``x``."""
        lam = self._check_weights(weights, None)
        r = check_real("r", r, low=0.0, allow_inf=True)
        return self._lloo_weights(lam, r, point_argument("c", c, self.dim))

    def _lloo(self, x: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        return self._lloo_weights(self.decompose(x), r, c) @ self.vertices

    def _check_weights(self, weights: object, x: np.ndarray | None) -> np.ndarray:
        lam = as_vector("weights", weights, self.vertices.shape[0])
        if np.any(lam < -1e-12) or abs(float(lam.sum()) - 1.0) > 1e-9:
            raise fail("weights", "be non-negative and sum to 1", lam)
        lam = np.maximum(lam, 0.0)
        if x is not None and np.linalg.norm(lam @ self.vertices - x) > MEMBER_TOL * max(
            1.0, self._radius
        ):
            raise fail("weights", "reproduce x (sum_i weights_i v_i == x)", lam)
        return lam

    def _lloo_weights(self, lam: np.ndarray, r: float, c: np.ndarray) -> np.ndarray:
        costs = self.vertices @ c
        best = int(np.argmin(costs))
        diam = self.diameter
        delta = 1.0 if diam == 0.0 else min(self.rho * r / diam, 1.0)
        if delta >= 1.0:  # the plain linear oracle: ‖v⁺ − x‖ <= D <= ρ·r
            out = np.zeros(lam.shape[0])
            out[best] = 1.0
            return out
        order = np.argsort(-costs, kind="stable")
        mass = lam[order]
        take = np.clip(delta - (np.cumsum(mass) - mass), 0.0, mass)
        out = lam.copy()
        out[order] -= take
        out[best] += float(take.sum())
        out[out < 1e-15] = 0.0  # drop negligible weights: the active set stays small
        return out / out.sum()

    def rho_bound(self, A: object, b: object, tol: float = 1e-9) -> float:
        """Garber–Hazan's ``ρ = √d·(ψ/ξ)·D`` from an H-description ``P = {y : A y <= b}``.

        ``ξ`` is the least positive slack ``b_j − A_j v`` over the points (slacks below
        ``tol·(1 + max|b|)`` count as active) and ``ψ``, the largest spectral norm of a
        set of linearly independent rows, is bounded above by
        ``min(‖A‖₂, sqrt(sum of the d largest ‖A_j‖²))``; so the value is a valid
        (conservative) LLOO parameter for this set.
        """
        A = as_matrix("A", A, self.dim)
        b = as_vector("b", b, A.shape[0])
        tol = check_real("tol", tol, low=0.0) * (1.0 + float(np.abs(b).max()))
        slack = b[None, :] - self.vertices @ A.T
        if slack.min() < -tol:
            raise fail("b", "satisfy A v <= b at every point", b)
        positive = slack[slack > tol]
        if positive.size == 0 or self.diameter == 0.0:
            return 1.0  # a single point: any ρ works
        rows = np.sort(np.einsum("ij,ij->i", A, A))[::-1][: self.dim]
        psi = min(float(np.linalg.norm(A, 2)), math.sqrt(float(rows.sum())))
        return math.sqrt(self.dim) * psi / float(positive.min()) * self.diameter

    def _repr_params(self) -> str:
        return f"vertices of shape {self.vertices.shape}, rho={self.rho!r}"
