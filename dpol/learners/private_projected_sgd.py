"""A noisy projected SGD batch solver (BST14) for KNJ's Mechanism 1.

:class:`PrivateProjectedSGD` is the private batch ERM solver that KNJ's Mechanism 1
calls as a black box: noisy projected SGD in the style of Bassily, Smith, Thakurta
(FOCS 2014, Algorithm 1), or its full-batch (noisy gradient descent) variant. KNJ's
NoisyProjGrad, a post-processing step that adds no noise, is
:mod:`dpol.learners.noisy_proj_grad`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from numbers import Real

import numpy as np

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.calibrate import bisect_multiplier, calibrate, noise_events
from dpol.accounting.closed_forms import check_epsilon, gaussian_epsilon, mu_star, zcdp_epsilon
from dpol.accounting.events import MechanismEvent
from dpol.learners._linear import fit_arguments
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.kinds import KINDS, noise_kind

__all__ = [
    "SAMPLINGS",
    "PrivateProjectedSGD",
    "per_call",
]

#: the ``sampling=`` choices of :class:`PrivateProjectedSGD`
SAMPLINGS = ("full", "one")


def per_call(sizes: Sequence[int], scale: object) -> list[tuple[int, float]]:
    """(n, scale) of each call: one scale for all calls, or one per call.

    Examples
    --------
    >>> per_call([10, 20], 2.0), per_call([10, 20], [1.0, 3.0])
    ([(10, 2.0), (20, 2.0)], [(10, 1.0), (20, 3.0)])
    """
    sizes = [check_int("n", n, low=1) for n in sizes]
    scales = [scale] * len(sizes) if isinstance(scale, Real) else list(scale)
    if len(scales) != len(sizes):
        raise fail("scale", f"be one number or one per call ({len(sizes)})", scale)
    return [(n, check_real("scale", v, low=0.0, low_open=True, allow_inf=True))
            for n, v in zip(sizes, scales, strict=True)]


def _rdp_orders(epsilon: float, delta: float) -> tuple[float, ...]:
    """RDP orders for the subsampled Gaussian: 20 geometric points from 1.25 to the order
    where ln(1/delta)/(alpha - 1) falls to epsilon/3 (the optimum lies below). Any set of
    orders gives a valid upper bound; this only keeps the calibration fast and tight."""
    top = min(max(64.0, 1.0 + 3.0 * math.log(1.0 / delta) / max(epsilon, 1e-3)), 4096.0)
    return tuple(float(a) for a in np.unique(np.round(np.geomspace(1.25, top, 20), 2)))


@lru_cache(maxsize=256)
def _bisect_sigma(solver: PrivateProjectedSGD, sizes: tuple[int, ...], epsilon: float,
                  delta: float) -> float:
    """Smallest sigma (1e-4 relative) whose RDP epsilon is <= epsilon (cached: repeated
    constructions of the same mechanism do not repeat the accountant's work)."""
    hi = solver._ratio(max(sizes)) * math.sqrt(sum(solver.n_steps(n) for n in sizes)) \
        / mu_star(epsilon, delta)  # without amplification: always enough
    return bisect_multiplier(
        lambda sigma: solver.epsilon(list(sizes), sigma, delta, target=epsilon), epsilon, hi)


class PrivateProjectedSGD:
    """Private batch ERM by noisy projected (stochastic) gradient descent.

    Minimises the *sum* ``sum_i loss(theta; x_i, y_i)`` over C.

    Parameters
    ----------
    loss : LinearLoss
        A linear-model loss (optionally ``Regularized``); ``lipschitz(domain)`` L bounds
        every per-example gradient on C.
    domain : ConvexSet
        C, with ``project``.
    sampling : str
        One of :data:`SAMPLINGS`. ``"one"``: BST14 Algorithm 1, ``n grad loss(theta; z)``
        of one uniformly drawn example plus N(0, sigma^2 I), step ``||C|| / sqrt(j (n^2
        L^2 + p sigma^2))``, last iterate. ``"full"``: noisy full-gradient descent, step
        ``min(1/(n beta), D/(sigma sqrt(p k)))``, averaged iterates.
    steps : int, optional
        Steps per call; BST prescribes n^2 (``"one"``), capped at ``max_steps``.
    max_steps : int
        Cap on the steps of one call (fewer steps only spend less privacy).
    noise : {"gaussian", "secure"}
        ``"secure"`` (``sampling="full"`` only): exact discrete Gaussian noise on a grid,
        from OS randomness.

    Privacy
    -------
    Replace-one with n public (KNJ Definition 4). Sensitivity of one step's noisy
    gradient: 2L (``"full"``), 2nL when the sampled example is the changed one
    (``"one"``). ``"full"``: the k_total Gaussian steps compose exactly (Gaussian DP,
    adaptive), and tight calibration sets sigma = 2L sqrt(k_total) / mu*(epsilon, delta).
    ``"one"``: a subsampled Gaussian, accounted by dp-accounting's RDP accountant
    (Wang-Balle-Kasiviswanathan 2019); paper: BST14's sigma^2 = 32 L^2 n^2 ln(n/delta)
    ln(1/delta) / epsilon^2 (Algorithm 1), its real guarantee in :meth:`epsilon`. Secure:
    sensitivity 2L + g sqrt(p), zCDP (CKS 2020, Theorem 14). :meth:`privacy_events` lists
    the mechanisms. Derivation: docs/derivations/noisy_sgd.md.

    Examples
    --------
    >>> from dpol.losses import SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)) / 2; y = np.clip(X @ [0.6, -0.4, 0.2], -1, 1)
    >>> s = PrivateProjectedSGD(SquaredLoss(), L2Ball(3), steps=300)
    >>> sigma = s.calibrate([200], 1.0, 1e-5)
    >>> round(s.epsilon([200], sigma, 1e-5), 6)
    1.0
    >>> s.fit(X, y, sigma, rng).shape
    (3,)
    """

    def __init__(self, loss: object, domain: object, *, sampling: str = "full",
                 steps: int | None = None, max_steps: int = 2000,
                 noise: str = "gaussian") -> None:
        from dpol.learners._linear import split_loss

        self._data, self._alpha = split_loss(loss, need_alpha=False)
        if domain is None or not hasattr(domain, "project"):
            raise fail("domain", "be a convex set with a projection", domain)
        self.loss, self.domain = loss, domain
        self.sampling = check_choice("sampling", sampling, SAMPLINGS)
        self.steps = None if steps is None else check_int("steps", steps, low=1)
        self.max_steps = check_int("max_steps", max_steps, low=1)
        self.noise = noise_kind(noise, among=("gaussian", "secure")).name
        if self.noise_kind.secure and self.sampling == "one":
            raise fail("noise", "be 'gaussian' with sampling='one' (the subsampled "
                       "Gaussian's amplification that dp-accounting certifies holds for the "
                       "continuous law, not for the discrete Gaussian)", noise)
        self.lipschitz = float(loss.lipschitz(domain))
        self.smoothness = float(loss.smoothness)  # Regularized: alpha included
        #: examples ``fit`` clipped to the loss's bounds (all calls)
        self.n_clipped_ = 0

    @property
    def has_paper(self) -> bool:
        """Whether a published calibration exists (BST14, for ``sampling="one"``)."""
        return self.sampling == "one"

    def _key(self) -> tuple:
        return (self.sampling, self.steps, self.max_steps, self.lipschitz, self.noise)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrivateProjectedSGD) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def n_steps(self, n: int) -> int:
        """Steps of one call on n examples: ``steps`` or n^2 (BST), capped at max_steps."""
        return min(self.steps if self.steps is not None else n * n, self.max_steps)

    # ------------------------------------------------------------------ accounting
    @property
    def noise_kind(self):
        """The noise object of ``noise`` (:mod:`dpol.noise.kinds`)."""
        return KINDS[self.noise]

    def grid(self, sigma: float) -> float:
        """The grid of noise std sigma: secure noise's, <= min(sigma, 2L/sqrt(p)) / 2^10
        (0.0 for Gaussian noise: none).

        Examples
        --------
        >>> from dpol.losses import SquaredLoss
        >>> from dpol.sets import L2Ball
        >>> s = PrivateProjectedSGD(SquaredLoss(), L2Ball(3), steps=10, noise="secure")
        >>> sigma = s.calibrate([50], 1.0, 1e-5)
        >>> s.grid(sigma) == 2.0**-9, s.epsilon([50], sigma, 1e-5) <= 1.0
        (True, True)
        """
        return self.noise_kind.grid(sigma, self._ratio(1), self.domain.dim)

    def _secure_rho(self, sizes: list[int], sigma: float) -> float:
        """zCDP of every step of one call per size (class Privacy, secure noise)."""
        k = sum(self.n_steps(n) for n in sizes)
        sens = self._ratio(1) + self.grid(sigma) * math.sqrt(self.domain.dim)
        return k * sens**2 / (2.0 * sigma**2)

    def _ratio(self, n: int) -> float:
        """sigma over the sensitivity of one step's release (replace-one)."""
        return 2.0 * self.lipschitz * (n if self.sampling == "one" else 1.0)

    def epsilon(self, sizes: list[int], sigma: float, delta: float,
                target: float | None = None) -> float:
        """Certified epsilon at ``delta`` of one call per dataset size in ``sizes``.

        ``target``: the epsilon expected, which picks the RDP orders (``sampling="one"``);
        by default they are refined from a first estimate.
        """
        if target is None and self.sampling == "one":
            target = 1.0
            for _ in range(3):
                eps = self.epsilon(sizes, sigma, delta, target)
                if _rdp_orders(eps, delta)[-1] <= _rdp_orders(target, delta)[-1]:
                    return eps
                target = eps
            return eps
        sigma = check_real("sigma", sigma, low=0.0, allow_inf=True)
        if sigma == 0.0:
            return math.inf
        if self.noise_kind.secure:  # zCDP of the grid-inflated steps (class Privacy)
            return 0.0 if math.isinf(sigma) else zcdp_epsilon(self._secure_rho(sizes, sigma),
                                                               delta)
        if self.sampling == "full":
            k = sum(self.n_steps(n) for n in sizes)
            return gaussian_epsilon(sigma / (self._ratio(1) * math.sqrt(k)), delta)
        acc = dp_accounting.rdp.RdpAccountant(
            orders=_rdp_orders(target, delta),
            neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
        for n in sizes:
            z = sigma / self._ratio(n)
            step = (dp_accounting.GaussianDpEvent(z) if n == 1 else
                    dp_accounting.SampledWithoutReplacementDpEvent(
                        n, 1, dp_accounting.GaussianDpEvent(z)))
            acc.compose(dp_accounting.SelfComposedDpEvent(step, self.n_steps(n)))
        return float(acc.get_epsilon(delta))

    def privacy_events(self, sizes: Sequence[int], sigma: object,
                       delta: float | None = None) -> tuple[MechanismEvent, ...]:
        """The mechanisms of one call per size in ``sizes``, each call's k noisy gradients
        (class Privacy), replace-one; ``sigma`` one std for all calls or one per call
        (``delta`` is accepted for a uniform solver protocol and not needed here).

        ``"full"``: k Gaussians of noise multiplier sigma / (2L); secure: k ``ZCDpEvent``
        of rho = (2L + g sqrt(p))^2 / (2 sigma^2); ``"one"``: k
        ``SampledWithoutReplacementDpEvent(n, 1, GaussianDpEvent(sigma / (2 n L)))``.

        Examples
        --------
        >>> from dpol.losses import SquaredLoss
        >>> from dpol.sets import L2Ball
        >>> s = PrivateProjectedSGD(SquaredLoss(), L2Ball(3), steps=300)
        >>> [e.event.count for e in s.privacy_events([100, 200], 40.0)]
        [300, 300]
        """
        events = []
        for n, sigma_n in per_call(sizes, sigma):
            k = self.n_steps(n)
            # one step's sensitivity on the grid (secure: both neighbours' gradients
            # rounded; Gaussian noise: no grid)
            step = self.noise_kind.event(
                self._ratio(n) + self.grid(sigma_n) * math.sqrt(self.domain.dim), sigma_n)
            if self.sampling == "one" and n > 1:
                step = dp_accounting.SampledWithoutReplacementDpEvent(n, 1, step)
            name = "noisy SGD (BST14)" if self.sampling == "one" else "noisy gradient descent"
            events.append(MechanismEvent(dp_accounting.SelfComposedDpEvent(step, k),
                                         "replace_one", name=f"{name}, call on n={n}"))
        return tuple(events)

    def calibrate(self, sizes: list[int], epsilon: float, delta: float) -> float:
        """Smallest sigma (to 1e-4 relative) with :meth:`epsilon` <= epsilon."""
        epsilon = check_epsilon(epsilon, allow_inf=False)  # the one rule of a target
        if self.noise_kind.secure:
            return self._secure_calibrate(sizes, epsilon, delta)
        if self.sampling == "full":
            k = sum(self.n_steps(n) for n in sizes)
            # mu*: k steps compose to sqrt(k) / z
            mu = 1.0 / calibrate(noise_events(self.noise_kind), epsilon, delta)
            return self._ratio(1) * math.sqrt(k) / mu * (1.0 + 1e-12)
        return _bisect_sigma(self, tuple(sizes), epsilon, delta)

    def _secure_calibrate(self, sizes: list[int], epsilon: float, delta: float) -> float:
        """The smallest sigma whose steps' zCDP events (:meth:`privacy_events`, each step
        of sensitivity 2L + g(sigma) sqrt(p)) certify (epsilon, delta): the grid moves
        with sigma, so the one calibrator sizes the events themselves."""
        return calibrate(lambda sigma: self.privacy_events(sizes, sigma), epsilon, delta)

    def paper_sigma(self, n: int, epsilon: float, delta: float) -> float:
        """BST14 Algorithm 1 noise, ``sigma^2 = 32 L^2 n^2 ln(n/delta) ln(1/delta)/epsilon^2``."""
        if self.sampling != "one":
            raise fail("calibration", "be 'tight' for sampling='full' (no published formula)",
                       "paper")
        epsilon = check_epsilon(epsilon, allow_inf=False)  # the one rule of a target
        delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
        n = check_int("n", n, low=1)
        return math.sqrt(32.0 * math.log(n / delta) * math.log(1.0 / delta)) \
            * self.lipschitz * n / epsilon

    # ------------------------------------------------------------------ solver
    def _grad_sum(self, theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        margins = X @ theta
        return X.T @ self._data._dphi(margins, y) + len(y) * self._alpha * theta

    def fit(self, X: np.ndarray, y: np.ndarray, sigma: float, rng: np.random.Generator,
            start: np.ndarray | None = None) -> np.ndarray:
        """One private call on (X, y); rows beyond the loss's bounds are clipped (counted in
        ``n_clipped_``), as the sensitivity assumes."""
        X, y, sigma = fit_arguments(self, X, y, sigma)
        n, p = X.shape
        theta = self.domain.project(np.zeros(p) if start is None else start)
        k = self.n_steps(n)
        R, D = float(self.domain.radius), float(self.domain.diameter)
        if self.sampling == "one":
            idx = rng.integers(0, n, size=k)
            for j in range(k):
                i = idx[j]
                g = n * self._grad_sum(theta, X[i:i + 1], y[i:i + 1])
                step = R / math.sqrt((j + 1) * ((n * self.lipschitz) ** 2 + p * sigma**2))
                theta = self.domain.project(theta - step * self.noise_kind.noisy(g, sigma, rng))
            return theta
        beta = max(n * self.smoothness, 1e-300)  # the sum's smoothness
        step = min(1.0 / beta, D / (sigma * math.sqrt(p * k))) if sigma > 0 else 1.0 / beta
        total = np.zeros(p)
        grid = self.grid(sigma) if sigma > 0 else 0.0  # secure: on the grid (class Privacy)
        for _ in range(k):
            total += theta
            g = self.noise_kind.noisy(self._grad_sum(theta, X, y), sigma, rng, grid)
            theta = self.domain.project(theta - step * g)
        return total / k
