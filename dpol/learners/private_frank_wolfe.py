"""Private Frank-Wolfe over a polytope (Talwar, Thakurta, Zhang 2015), a batch solver for KNJ M1."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.calibrate import bisect_multiplier
from dpol.accounting.closed_forms import check_epsilon, zcdp_epsilon
from dpol.accounting.events import MechanismEvent
from dpol.learners._linear import fit_arguments
from dpol.learners.private_projected_sgd import per_call
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["SELECTIONS", "PrivateFrankWolfe", "polytope_vertices"]


def _gumbel_min(scores: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Scores minus Gumbel noise: their argmin is the exponential mechanism's draw."""
    return scores - scale * rng.gumbel(size=scores.shape)


def _laplace_min(scores: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """Scores plus Laplace noise (TTZ's report-noisy-min)."""
    return scores + rng.laplace(scale=scale, size=scores.shape)


#: report-noisy-min's selection noise: name -> (zCDP of an eps0-DP selection is
#: eps0^2 / this, the noisy scores, whether TTZ publish its scale). Not a
#: :mod:`dpol.noise.kinds` kind: what it releases is an argmin, not a noisy value
SELECTIONS = {"gumbel": (8.0, _gumbel_min, False), "laplace": (2.0, _laplace_min, True)}


def polytope_vertices(domain: object) -> np.ndarray:
    """The vertices of an :class:`~dpol.sets.L1Ball` (+-R e_i), a
    :class:`~dpol.sets.Simplex` (e_i) or a :class:`~dpol.sets.ConvexHull` (its points).

    >>> from dpol.sets import L1Ball
    >>> polytope_vertices(L1Ball(2, 0.5))
    array([[ 0.5,  0. ],
           [ 0. ,  0.5],
           [-0.5, -0. ],
           [-0. , -0.5]])
    """
    from dpol.sets import ConvexHull, L1Ball, Simplex

    if isinstance(domain, L1Ball):
        eye = domain.radius * np.eye(domain.dim)
        return np.vstack([eye, -eye])
    if isinstance(domain, Simplex):
        return np.eye(domain.dim)
    if isinstance(domain, ConvexHull):
        return np.array(domain.vertices)
    raise fail("domain", "be an L1Ball, a Simplex or a ConvexHull (a polytope with listed "
               "vertices)", domain)


class PrivateFrankWolfe:
    """Frank-Wolfe whose linear step picks a vertex by report-noisy-min.

    Minimises ``sum_i loss(theta; x_i, y_i)`` over a polytope C = conv(V): iteration j
    scores every vertex v by ``<v, grad(theta_j)>``, picks the noisy minimiser s and sets
    ``theta_{j+1} = (1 - mu_j) theta_j + mu_j s``, ``mu_j = 2/(j+2)``: always in C, no
    projection. On the L1 ball the 2d scores cost O(d).

    Parameters
    ----------
    loss : LinearLoss or Regularized(LinearLoss, alpha)
    domain : L1Ball, Simplex or ConvexHull
    iterations : int
        Frank-Wolfe iterations per call (TTZ take about (Gamma n epsilon/(L ||C||_1))^(2/3)).
    selection : {"gumbel", "laplace"}
        The selection's noise of scale b (:data:`SELECTIONS`): Gumbel, i.e. the
        exponential mechanism ``P(v) ~ exp(-<v, g>/b)``, or Laplace, TTZ's mechanism.
    noise : {"gumbel", "laplace"}, optional
        The former name of ``selection`` (still taken; ``noise`` reads it back).

    Privacy
    -------
    Replace-one, n public (KNJ Definition 4). Sensitivity: one example moves the gradient
    of the sum by a difference of two data gradients (a regulariser cancels), so a score
    by at most ``Delta = 2 L max_v ||v||_2``; report-noisy-min of scale b is pure eps0-DP,
    ``eps0 = 2 Delta / b``, per iteration. Composition over the k iterations of all calls:
    eps0^2/8-zCDP for the exponential mechanism (bounded range, Cesar & Rogers 2021),
    eps0^2/2-zCDP for Laplace (Bun & Steinke 2016); :meth:`epsilon` certifies ``min(k
    eps0, zCDP at delta)`` and :meth:`calibrate` inverts it; :meth:`privacy_events` lists
    them. ``calibration="paper"``: TTZ's Laplace scale ``b = L ||C||_1 sqrt(8 k
    ln(1/delta)) / epsilon`` as recalled (unverified against TTZ); it matches a score
    sensitivity of L ||C||_1, and :meth:`epsilon` states the 1.3-2x larger replace-one
    epsilon it really gives.

    Examples
    --------
    >>> from dpol.losses import SquaredLoss
    >>> from dpol.sets import L1Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 5)) / 3; y = np.clip(X @ [0.8, 0, 0, 0, 0], -1, 1)
    >>> fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(5), iterations=40)
    >>> b = fw.calibrate([300], 1.0, 1e-5)
    >>> round(fw.epsilon([300], b, 1e-5), 4) <= 1.0
    True
    >>> theta = fw.fit(X, y, b, rng); bool(np.abs(theta).sum() <= 1 + 1e-12)
    True
    """

    def __init__(self, loss: object, domain: object, *, iterations: int = 50,
                 selection: str | None = None, noise: str | None = None) -> None:
        from dpol.learners._linear import split_loss

        self._data, self._alpha = split_loss(loss, need_alpha=False)
        self.vertices = polytope_vertices(domain)
        self.loss, self.domain = loss, domain
        self.iterations = check_int("iterations", iterations, low=1)
        if selection is not None and noise is not None and selection != noise:
            raise fail("noise", f"be left out or equal selection={selection!r} (its former "
                       "name)", noise)
        name = "selection" if noise is None or selection is not None else "noise"
        self.selection = check_choice(name, selection or noise or "gumbel", tuple(SELECTIONS))
        self._rho_divisor, self._noisy_scores, self._published = SELECTIONS[self.selection]
        #: Lipschitz constant of the whole loss on the domain (TTZ's L, ``paper_sigma``)
        self.lipschitz = float(loss.lipschitz(domain))
        norms = np.linalg.norm(self.vertices, axis=1)
        #: sensitivity of one score to one example (replace-one), from the data loss alone
        self.score_sensitivity = 2.0 * float(self._data.lipschitz(domain)) * float(norms.max())
        self._l1_radius = float(np.abs(self.vertices).sum(axis=1).max())
        #: examples ``fit`` clipped to the loss's bounds (all calls)
        self.n_clipped_ = 0

    @property
    def noise(self) -> str:
        """``selection``, by its former name (read-only)."""
        return self.selection

    @property
    def has_paper(self) -> bool:
        """Whether a published calibration exists (TTZ, for ``selection="laplace"``)."""
        return self._published

    def n_steps(self, n: int) -> int:
        """Iterations of one call (independent of n)."""
        return self.iterations

    # ------------------------------------------------------------------ accounting
    def _eps0(self, scale: float) -> float:
        return 2.0 * self.score_sensitivity / scale

    def epsilon(self, sizes: list[int], scale: float, delta: float,
                target: float | None = None) -> float:
        """Certified epsilon at ``delta`` of one call per dataset size in ``sizes``
        (``target`` is accepted for a uniform solver protocol and not needed here)."""
        scale = check_real("scale", scale, low=0.0, allow_inf=True)
        if scale == 0.0:
            return math.inf
        k = self.iterations * len(sizes)
        eps0 = self._eps0(scale)
        basic = k * eps0
        if delta == 0.0:
            return basic
        rho = k * eps0**2 / self._rho_divisor
        acc = dp_accounting.rdp.RdpAccountant()
        acc.compose(dp_accounting.ZCDpEvent(rho))
        return min(basic, float(acc.get_epsilon(delta)))

    def privacy_events(self, sizes: Sequence[int], scale: object,
                       delta: float) -> tuple[MechanismEvent, ...]:
        """The mechanisms of one call per size in ``sizes``, each call's ``iterations``
        report-noisy-min selections (class Privacy), replace-one; ``scale`` one b for all
        calls or one per call.

        Each call's event is ``iterations`` ``ZCDpEvent(rho)`` (rho = eps0^2/8 Gumbel,
        eps0^2/2 Laplace, eps0 = 2 Delta / b), with its pure epsilon ``iterations eps0``
        where basic composition certifies less (as :meth:`epsilon` decides).

        Examples
        --------
        >>> from dpol.losses import SquaredLoss
        >>> from dpol.sets import L1Ball
        >>> fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(5), iterations=2, selection="laplace")
        >>> fw.score_sensitivity, [e.pure_epsilon for e in fw.privacy_events([300], 100.0,
        ...                                                                  1e-5)]
        (4.0, [0.16])
        """
        calls = per_call(sizes, scale)
        eps0 = [self._eps0(b) for _, b in calls]
        rho = [e**2 / self._rho_divisor for e in eps0]
        basic = self.iterations * math.fsum(eps0)
        pure = delta == 0.0 or basic <= zcdp_epsilon(self.iterations * math.fsum(rho), delta)
        return tuple(
            MechanismEvent(
                dp_accounting.SelfComposedDpEvent(dp_accounting.ZCDpEvent(r), self.iterations),
                "replace_one", pure_epsilon=self.iterations * e if pure else None,
                name=f"Frank-Wolfe report-noisy-min ({self.selection}), call on n={n}")
            for (n, _), e, r in zip(calls, eps0, rho, strict=True))

    def calibrate(self, sizes: list[int], epsilon: float, delta: float) -> float:
        """Smallest scale b (to 1e-6 relative) with :meth:`epsilon` <= epsilon: the
        accounting's calibrator for an accountant of its own (``bisect_multiplier``),
        from the scale basic composition certifies."""
        epsilon = check_epsilon(epsilon, allow_inf=False)  # the one rule of a target
        hi = self.iterations * len(sizes) * 2.0 * self.score_sensitivity / epsilon  # basic
        return bisect_multiplier(lambda b: self.epsilon(sizes, b, delta), epsilon, hi,
                                 rel=1e-6)

    def paper_sigma(self, n: int, epsilon: float, delta: float) -> float:
        """TTZ's Laplace scale (sum scale), ``L ||C||_1 sqrt(8 k ln(1/delta)) / epsilon``."""
        if not self._published:
            raise fail("calibration", "be 'tight' unless selection='laplace' (TTZ's mechanism)",
                       "paper")
        epsilon = check_epsilon(epsilon, allow_inf=False)  # the one rule of a target
        delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        return self.lipschitz * self._l1_radius \
            * math.sqrt(8.0 * self.iterations * math.log(1.0 / delta)) / epsilon

    # ------------------------------------------------------------------ solver
    def fit(self, X: np.ndarray, y: np.ndarray, scale: float, rng: np.random.Generator,
            start: np.ndarray | None = None) -> np.ndarray:
        """One private call on (X, y); rows beyond the loss's bounds are clipped (counted in
        ``n_clipped_``), as ``score_sensitivity`` assumes."""
        X, y, scale = fit_arguments(self, X, y, scale, name="scale")
        n = X.shape[0]
        theta = self.vertices[0].copy() if start is None else np.array(start, dtype=float)
        for j in range(self.iterations):
            g = X.T @ self._data._dphi(X @ theta, y) + n * self._alpha * theta
            scores = self.vertices @ g
            if scale > 0.0:
                scores = self._noisy_scores(scores, scale, rng)
            mu = 2.0 / (j + 2.0)
            theta = (1.0 - mu) * theta + mu * self.vertices[int(np.argmin(scores))]
        return theta
