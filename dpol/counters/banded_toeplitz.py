"""The banded Toeplitz counter: b bands of the square root, or a band re-optimised."""

from __future__ import annotations

import numpy as np

from dpol._validation import _as_float_array, check_choice, check_int, fail
from dpol.counters._base import Counter
from dpol.counters._secure_release import SecureReleaseMixin, setup_encoder_grid
from dpol.counters.strategies import BandedToeplitzStrategy
from dpol.counters.strategies.banded_toeplitz_optimizer import optimal_band
from dpol.counters.strategies.blt_optimizer import OBJECTIVES
from dpol.counters.strategies.toeplitz_strategy import sqrt_toeplitz_coefficients

__all__ = ["BandedToeplitzCounter"]

#: default number of bands
DEFAULT_BANDS = 64


class BandedToeplitzCounter(SecureReleaseMixin, Counter):
    """Private prefix sums by a banded Toeplitz encoder C (b bands) and B = A C^-1.

    One element enters b encoder values; the release noise A C^-1 z streams from the last
    b - 1 values of C^-1 z (O(b d) state;
    :class:`~dpol.counters.strategies.BandedToeplitzStrategy`). The band is the first b
    square-root coefficients (Kalinin and Lampert 2024) or, with ``objective``, re-optimised
    (:mod:`dpol.counters.strategies.banded_toeplitz_optimizer`). At one participation few
    bands cost accuracy (T = 1024, b = 64: mean loss 19.15 against the square root's 9.67);
    its use is memory O(b d) and several participations: with b at most their separation,
    k participations cost only sqrt(k) in noise (``benchmarks/participation.py``).

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity
        See :class:`dpol.counters.Counter`. Noise ``"gaussian"`` or ``"secure"``.
    bands : int, optional
        b >= 1 (default 64, capped at the horizon; with several participations, their
        minimum separation).
    objective : {"max", "mean"}, optional
        Re-optimise the band for this loss; unset: the square-root band.
    coefficients : array-like of shape (b,), optional
        An explicit band c_0..c_{b-1}, finite with c_0 > 0 (``bands`` is its length).

    Attributes
    ----------
    coefficients_ : np.ndarray
        The band in use (read-only).

    Privacy
    -------
    Replace-one (Delta = 2 bound; add/remove: bound), one stream element. Sensitivity:
    Delta sqrt(sum_k c_k^2), a full column's norm (``column_norm_sq``); k participations
    at least b apart: sqrt(k) times that. C x + z is one Gaussian mechanism and
    A C^-1 (C x + z) post-processing, adaptive inputs included (Denisov et al. 2022,
    Theorem 2.1). Tight: std z Delta sqrt(sum_k c_k^2), z = 1/mu*(epsilon, delta);
    ``calibration="paper"`` and Laplace noise are refused. Secure noise: the encoder is
    rounded to a grid (sensitivity within 1 + 2^-10), zCDP (CKS 2020, Theorem 14).
    Derivation: docs/derivations/matrix_counters.md.

    Examples
    --------
    >>> c = BandedToeplitzCounter(2**10, bands=64, epsilon=1.0, delta=1e-5, seed=0)
    >>> round(c.strategy.loss("mean"), 2), c.run([[1.0]] * 2**10).shape
    (19.15, (1024, 1))
    """

    # lfilter for blocks, the recursion for one step: run agrees with add to rounding;
    # secure mode rounds the encoder itself (Privacy)
    tags = frozenset({"secure_exact", "continues_vectorized"})
    _strategy_class = BandedToeplitzStrategy

    def __init__(self, horizon: int, dim: int = 1, *, bands: int | None = None,
                 objective: str | None = None, coefficients: object = None,
                 **kwargs) -> None:
        if objective is not None:
            check_choice("objective", objective, OBJECTIVES)
        given = None
        if coefficients is not None:
            given = _as_float_array("coefficients", coefficients)
            if given.ndim != 1 or given.size == 0 or not given[0] > 0.0:
                raise fail("coefficients", "be a non-empty 1-d band with c_0 > 0",
                           coefficients)
            if objective is not None:
                raise fail("objective", "be left unset when coefficients are given",
                           objective)
            if bands is not None and bands != given.size:
                raise fail("bands", f"equal len(coefficients) = {given.size} or be left "
                           "unset", bands)
        if bands is not None:
            check_int("bands", bands, low=1)
        self.bands, self.objective, self.coefficients = bands, objective, coefficients
        self._given = given
        super().__init__(horizon, dim, **kwargs)

    def _make_strategy(self) -> BandedToeplitzStrategy:
        if self._given is None:
            b = min(DEFAULT_BANDS if self.bands is None else self.bands, self.horizon)
            if self.bands is None and not self.participation.single:
                # participations b' apart: b' bands keep their columns apart, and the
                # widest such band has the least loss (benchmarks/participation.py)
                b = min(self.participation.min_separation, self.horizon)
            self._given = (sqrt_toeplitz_coefficients(b) if self.objective is None
                           else optimal_band(self.horizon, b, self.objective))
        self.coefficients_ = self._given[: self.horizon].copy()
        self.coefficients_.flags.writeable = False
        self._kept_elements = self.coefficients_.size  # secure mode: E_t reads the last b
        return BandedToeplitzStrategy(self.horizon, self.coefficients_.size,
                                      self.coefficients_)

    def _setup_grid(self) -> None:
        setup_encoder_grid(self, float(np.sum(np.abs(self.strategy.coefficients))))

    def _encoder_weights(self) -> np.ndarray:
        band = self.strategy.coefficients
        return band[: min(self.t, band.size)][::-1]  # c_{k}, k < b, oldest element first

    def _params(self) -> dict:
        # the band in use, not re-optimised: a checkpoint continues identically
        return {**super()._params(), "bands": None, "objective": None,
                "coefficients": self.coefficients_.tolist()}
