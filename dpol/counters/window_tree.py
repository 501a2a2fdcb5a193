"""The window tree mechanism of WDP (Section III): window DP with two block trees."""

from __future__ import annotations

import numpy as np  # noqa: F401 (doctests)

from dpol._validation import check_int, fail
from dpol.counters._base import Counter
from dpol.counters.strategies import WindowTreeStrategy

__all__ = ["WindowTreeCounter"]


class WindowTreeCounter(Counter):
    """Private prefix sums under window DP: only the last W elements are protected.

    Aligned blocks of W' = 2^ceil(log2 W) elements, each a complete binary tree (WDP
    Section III; layout: docs/errata.md, WDP-8). The release at t is the exact sum up to
    t - W' plus the noisy dyadic decomposition of the window (t - W', t], at most
    log2 W' + 1 noisy nodes, each drawn once. With W' >= T the draws and releases are the
    :class:`BinaryTreeCounter`'s. Memory O(W d).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, noise, seed
        See :class:`dpol.counters.Counter`.
    window : int, optional
        W, the number of most recent elements protected (rounded up to a power of two:
        docs/errata.md, WDP-4). Default: the horizon, i.e. DP over the whole stream.

    Privacy
    -------
    Window DP (WDP Definition 6, off-by-one fixed: WDP-4): element i is protected at
    (epsilon, delta) in the releases at times i .. i+W-1; later releases contain it
    exactly, so **expired elements are not protected**. Replace-one (Δ = 2*bound; the
    paper's L + μD: WDP-1). Sensitivity: element i lies in m = min(log2 W', floor(log2 T))
    + 1 noisy nodes: Δ sqrt(m). Gaussian, tight: std z Δ sqrt(m), z = 1/mu*(epsilon,
    delta) (exactly window (epsilon, delta)-DP: WDP-2). Gamma (window epsilon-DP, Lemma
    1): theta = m Δ / epsilon. ``calibration="paper"``: WDP Lemma 1 theta (c1 = 4, WDP-8)
    or Lemma 3 sigma, verbatim; sound but 5-20x more noise (WDP-2). Derivation:
    docs/derivations/tree_counters.md.

    Examples
    --------
    >>> c = WindowTreeCounter(16, window=4, epsilon=1.0, delta=1e-5, seed=0)
    >>> out = c.run(np.ones(16))
    >>> c.privacy.window, round(c.sensitivity**2, 9)  # (2 bound)^2 * (log2 4 + 1)
    (4, 12.0)
    """

    _paper_noises = ("gaussian", "gamma")  # WDP Lemmas 3 and 1
    # releases add node noises with integer weights (secure noise is exact)
    tags = frozenset({"bit_identical_run", "secure_exact", "continues_vectorized"})
    _strategy_class = WindowTreeStrategy

    def __init__(self, horizon: int, dim: int = 1, *, window: int | None = None,
                 **kwargs) -> None:
        if window is None and horizon is None:
            raise fail("window", "be given for an endless stream (horizon=None)", None)
        self.window = check_int("window", horizon if window is None else window, low=1)
        super().__init__(horizon, dim, **kwargs)

    def _make_strategy(self) -> WindowTreeStrategy:
        return WindowTreeStrategy(self.horizon, self.window)

    def _window(self) -> int | None:
        return self.window

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        from dpol.accounting import presets

        delta_2 = self.node_sensitivity
        if self.noise_kind.approximate:  # gaussian (paper noises: gaussian, gamma)
            sigma = presets.wdp_gaussian_sigma(eps, self.delta, delta_2, self.window)
            return sigma, "WDP Lemma 3 sigma"
        return presets.wdp_gamma_theta(eps, delta_2, self.window), "WDP Lemma 1 theta"

    def _params(self) -> dict:
        return {**super()._params(), "window": self.window}

