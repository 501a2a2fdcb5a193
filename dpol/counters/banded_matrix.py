"""The banded matrix counter: a general b-banded encoder optimised for the mean loss."""

from __future__ import annotations

import numpy as np

from dpol._validation import check_int, fail
from dpol.counters._base import Counter
from dpol.counters._secure_release import (
    SecureReleaseMixin,
    largest_abs_row_sum,
    setup_encoder_grid,
)
from dpol.counters.strategies.banded_matrix_optimizer import MAX_HORIZON, optimal_banded_matrix
from dpol.counters.strategies.banded_matrix_strategy import BandedMatrixStrategy

__all__ = ["BandedMatrixCounter"]

#: default number of bands (as the banded Toeplitz counter)
DEFAULT_BANDS = 64


class BandedMatrixCounter(SecureReleaseMixin, Counter):
    """Private prefix sums by a lower-triangular b-banded encoder with unit columns.

    Unlike :class:`~dpol.counters.BandedToeplitzCounter` the band may change along the
    stream: it is optimised for the mean loss under unit column norms
    (:mod:`dpol.counters.strategies.banded_matrix_optimizer`; Choquette-Choo et al. 2023,
    McKenna 2024). Participations at least b steps apart touch disjoint columns, so k
    epochs cost exactly sqrt(k) in noise (``benchmarks/participation.py``). O(b d) state;
    horizon at most 2048, built once per (T, b) and cached.

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity, participation
        See :class:`dpol.counters.Counter`. Noise ``"gaussian"`` or ``"secure"``.
    bands : int, optional
        b >= 1 (default 64, capped at the horizon and, with several participations, at
        their minimum separation).

    Privacy
    -------
    Replace-one (Delta = 2 bound; add/remove: bound), one stream element. Sensitivity:
    Delta (unit columns); a participant entering k steps at least b apart: Delta sqrt(k),
    closer: the generic bound on |C^T C|. C x + z is one Gaussian mechanism, adaptive
    inputs included (Denisov et al. 2022, Theorem 2.1). Tight: std z times that, z =
    1/mu*(epsilon, delta); ``calibration="paper"`` and Laplace noise are refused. Secure
    noise: the encoder is rounded to a grid (sensitivity within 1 + 2^-10), zCDP (CKS
    2020, Theorem 14). Derivation: docs/derivations/matrix_counters.md.

    Examples
    --------
    >>> c = BandedMatrixCounter(64, bands=8, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run([[0.5]] * 64).shape, round(c.sensitivity, 6)
    ((64, 1), 2.0)
    """

    # one recursion for add and run: the same arithmetic, bit for bit; secure mode
    # rounds the encoder itself (Privacy)
    tags = frozenset({"bit_identical_run", "secure_exact", "continues_vectorized"})
    _strategy_class = BandedMatrixStrategy

    def __init__(self, horizon: int, dim: int = 1, *, bands: int | None = None,
                 **kwargs) -> None:
        if check_int("horizon", horizon, low=1) > MAX_HORIZON:
            raise fail("horizon", f"be at most {MAX_HORIZON} for the banded matrix "
                       "optimiser's T x T matrices (use BandedToeplitzCounter beyond)",
                       horizon)
        self.bands = None if bands is None else check_int("bands", bands, low=1)
        super().__init__(horizon, dim, **kwargs)

    def _make_strategy(self) -> BandedMatrixStrategy:
        b = min(DEFAULT_BANDS if self.bands is None else self.bands, self.horizon)
        if self.bands is None and not self.participation.single:
            b = min(b, self.participation.min_separation)  # keep participations apart
        self._kept_elements = b  # secure mode: E_t reads the last b elements
        return BandedMatrixStrategy(self.horizon, optimal_banded_matrix(self.horizon, b))

    def _setup_grid(self) -> None:
        setup_encoder_grid(self, largest_abs_row_sum(self.strategy.band))

    def _encoder_weights(self) -> np.ndarray:
        # row t of C over its last min(t, b) elements, oldest first
        return self.strategy.band[self.t - 1, : self.t][::-1]

    def _params(self) -> dict:
        return {**super()._params(), "bands": self.bands}
