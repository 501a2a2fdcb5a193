"""ENV: private projection-free bandit convex optimisation (Ene, Nguyen, Vladu, Alg. 1)."""

from __future__ import annotations

import math
import warnings

from dpol._validation import check_choice, fail
from dpol.accounting.calibrate import calibrate, noise_events
from dpol.accounting.mechanism import Mechanism
from dpol.accounting.presets import (
    env_bandit_gaussian_sigma,
    env_bandit_laplace_scale,
    tree_levels,
)
from dpol.accounting.presets._common import LOG_READINGS
from dpol.counters import BinaryTreeCounter, Counter, resolve_counter
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.learners._api import Accepts, set_mechanism
from dpol.learners._bandit import BanditFrankWolfeBase
from dpol.noise.kinds import KINDS

__all__ = ["PrivateBanditFrankWolfe"]

#: ENV's published noise per kind: (scale of (epsilon, delta, T, n, L, log), citation)
_ENV_PRESETS = {
    "gaussian": (lambda eps, delta, T, n, L, log: env_bandit_gaussian_sigma(
        eps, delta, T, n, L, log=log),
        "ENV Lemma 5.4's Gaussian sigma (proof gap; docs/errata.md, ENV-2)"),
    "laplace": (lambda eps, delta, T, n, L, log: env_bandit_laplace_scale(eps, T, n, L, log=log),
                "ENV Lemma 5.1's Laplace scale T^(1/2) n L log T / eps (its l1 bound is "
                "T^(1/4) too small; docs/errata.md, ENV-2)"),
}


class PrivateBanditFrankWolfe(BanditFrankWolfeBase):
    """Differentially private bandit convex optimisation with one linear-oracle call per round.

    ENV's PrivateBandit (Algorithm 1), ask/tell: ``x = learner.ask()``, play x, then
    ``learner.tell(f_t(x))``. m = ceil(T/K) batches of K = ceil(sqrt T) rounds; batch R
    plays x~_{R-1} + zeta u_t (u_t uniform on the sphere), sums (n/zeta) f_t(x_t) u_t into
    g~_R, and a counter releases s~_R ~ sum_{j<=R} g~_j, while K Frank-Wolfe steps move
    from x~_{R-1} towards Proj_D(c - eta s~_{R-1}).

    Parameters
    ----------
    domain : object
        D: ``linear_oracle(c) = argmin_{x in D} <c, x>``, ``dim`` and ``diameter`` (an
        upper bound; any :mod:`dpol.sets` set or a ``LinearOracleDomain``).
    horizon : int
        T, known in advance.
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md). ``noise``: Gaussian or Laplace (ENV's two) or
        l2-Gamma, or their secure twins. Counter: ENV's TreeBasedAgg, ``binary_tree``;
        ``counter_options={"padded": True}`` is ENV Alg. 4's padding (the default under
        ``calibration="paper"``). The seed spawns the sphere samples and the noise.
    log : {"log2", "ln"}
        Reading of the printed "log T" in the paper presets (docs/errata.md, ENV-3).
    lipschitz : float
        L, the l2 Lipschitz constant of every f_t (on D + zeta B in extended mode).
    loss_bound : float, optional
        B: observed values are clipped to [-B, B] (``n_clipped_``). Default L (D + zeta)
        (extended) or L D (shrink), exact when every f_t has a zero in D (ENV-3).
    mode : {"extended", "shrink"}
        ``extended``: play x~ + zeta u, up to zeta outside D. ``shrink`` (App. D): shrink
        towards c' so that the played point is in D.
    inner_ball : (array, float), optional
        (c', r) with c' + r B in D; required by ``mode="shrink"``.
    center : array, optional
        c, regulariser centre and x~_0, in D (not checked). Default: c' in shrink mode,
        else the mean of the 2n vertices LOO(+-(e_i - 1/(n+1))).
    batch_size, zeta, eta : optional
        K, zeta, eta; default ceil(sqrt T), D sqrt(n) / T^(1/4) (shrink mode: ENV-3,
        min(that * sqrt(r/(r+D)), r/2)) and D / (T^(3/4) sqrt(n) L) (Alg. 1).

    Privacy
    -------
    Replace-one (ENV Def. 2.1; or add/remove) of one loss function; the whole sequence of
    played points is protected. Sensitivity: neighbours change one batch sum by (n/zeta)
    (F - F') u_t0: Delta_2 = 2 (n/zeta) B (add/remove: half), Delta_1 = sqrt(n) Delta_2
    (ENV-2; secure noise adds its rounding g sqrt(n) to Delta_2). Tight calibration: the
    counter over the m - 1 used sums, h = floor(log2(m - 1)) + 1 levels, gets Gaussian std
    Delta_2 sqrt(h) / mu*(epsilon, delta), Laplace scale h Delta_1 / epsilon or Gamma
    theta h Delta_2 / epsilon. Paper: ENV's Lemmas 5.1, 5.4, with a
    ``PaperCalibrationWarning`` when weaker than ``epsilon``. ``privacy`` is derived from
    the counter's events; a window shorter than the m - 1 sums is refused. Derivation and
    ENV-1 to ENV-3: docs/derivations/bandit_frank_wolfe.md.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.sets import Box
    >>> learner = PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=3), horizon=400, epsilon=1.0,
    ...                                   delta=1e-6, seed=0)
    >>> x = learner.ask(); learner.tell(float(x @ [0.3, -0.2, 0.1]))
    >>> trace = learner.run_linear(np.tile([0.3, -0.2, 0.1], (399, 1)))
    >>> trace.points.shape, learner.privacy.epsilon
    ((399, 3), 1.0)
    >>> from dpol.accounting import mu_star
    >>> delta_2 = 2 * 3 / learner.zeta * learner.loss_bound  # 2 (n/zeta) B
    >>> bool(np.isclose(learner.noise_scale, delta_2 * np.sqrt(5) / mu_star(1.0, 1e-6)))
    True
    """

    _tags = frozenset({"bandit"})
    #: what of a Mechanism it takes (:class:`~dpol.learners.Accepts`): every noise kind
    accepts = Accepts(noises=tuple(KINDS), counter="binary_tree")

    def __init__(self, domain: object, *, horizon: int, log: str = "log2",
                 lipschitz: float = 1.0, loss_bound: float | None = None,
                 mode: str = "extended", inner_ball: tuple | None = None,
                 center: object = None, batch_size: int | None = None,
                 zeta: float | None = None, eta: float | None = None,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        set_mechanism(self, privacy, horizon)  # its checks below read them
        self.log = check_choice("log", log, LOG_READINGS)
        self._counter_cls = resolve_counter(self.counter)
        if self.is_private and self.noise_kind.approximate and self.delta == 0.0:
            raise fail("delta", "be > 0 for Gaussian noise (use noise='laplace' or 'gamma' "
                       "for pure epsilon-DP)", self.delta)
        if self.is_private and self.calibration == "paper":
            if self._counter_cls is not BinaryTreeCounter:
                raise fail("counter", "be 'binary_tree' with calibration='paper' (ENV's "
                           "TreeBasedAgg)", self.counter)
            if self.noise not in _ENV_PRESETS:
                raise fail("noise", "be 'gaussian' or 'laplace' with calibration='paper' "
                           "(ENV's presets: continuous noise, no Gamma)", self.noise)
        if not self.is_private:
            warnings.warn(f"{type(self).__name__} with epsilon=inf plays points computed "
                          "from exact (noise-free) loss sums", NonPrivateWarning, stacklevel=2)
        super().__init__(domain, horizon=horizon, lipschitz=lipschitz, loss_bound=loss_bound,
                         mode=mode, inner_ball=inner_ball, center=center,
                         batch_size=batch_size, zeta=zeta, eta=eta, **privacy)

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    def _build_counter(self) -> Counter | None:
        if self.n_releases == 0:  # one batch: every point is data-independent
            return None
        cls, options = self._counter_cls, {"noise": self.noise, **self.counter_options}
        if not self.is_private:
            return self._make_counter(cls, noise_multiplier=0.0, **options)
        if self.calibration == "tight":  # sized once, by the one calibrator
            z = calibrate(noise_events(self.noise_kind, "replace_one"), self.epsilon,
                          self.delta)
            return self._full_dp(self._make_counter(cls, noise_multiplier=z,
                                                    delta=self.delta, **options))
        options.setdefault("padded", True)
        T, n, L = self.horizon, self.dim, self.lipschitz
        preset, cite = _ENV_PRESETS[self.noise]
        scale = preset(self.epsilon, self.delta, T, n, L, self.log)
        # the counter's noise_multiplier is relative to its own sensitivity: the binary
        # tree's node sensitivity over its floor(log2 T) + 1 levels, l2 (Gaussian) or l1
        # over the levels and the dim coordinates (Laplace; Counter, Privacy)
        levels = float(tree_levels(self.n_releases))
        kind = self.noise_kind
        reference = (self.element_sensitivity * math.sqrt(levels) if kind.approximate
                     else levels * self.element_sensitivity * kind.l1_factor(n))
        counter = self._full_dp(self._make_counter(
            cls, noise_multiplier=scale / reference, delta=self.delta, **options))
        guarantee = counter.privacy
        if guarantee.epsilon > self.epsilon * (1.0 + 1e-9):
            warnings.warn(f"{cite} gives only ({guarantee.epsilon:.4g}, {guarantee.delta:g})"
                          f"-DP at horizon={T}, dim={n} under the per-summand sensitivity "
                          f"2 (n/zeta) B = {self.element_sensitivity:.4g} (ENV-2), not the "
                          f"requested epsilon={self.epsilon:g}; privacy reports the real "
                          "guarantee", PaperCalibrationWarning, stacklevel=4)
        return counter

    def _full_dp(self, counter: Counter) -> Counter:
        """Refuse a counter whose guarantee is window DP over the batch sums (Privacy)."""
        for event in counter.privacy_events():
            if not event.is_full_dp:
                raise fail("counter_options", f"give a window of at least the "
                           f"{self.n_releases} batch sums (ENV's analysis needs full DP of "
                           f"the counter: with window W={event.window} a loss is protected "
                           "in W batch sums only, and every later played point depends on "
                           "it); use counter='binary_tree' or a larger window",
                           self.counter_options)
        return counter
