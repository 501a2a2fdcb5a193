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
    (:mod:`dpol.counters.strategies.banded_matrix_optimizer`), the banded matrix
    mechanism of Choquette-Choo et al. 2023 and McKenna 2024. Participations at least b
    steps apart touch disjoint columns, so a record in k epochs costs exactly sqrt(k)
    in noise: at T = 256 with 16 epochs of 16 steps its mean loss is below the banded
    Toeplitz band's and far below the square root's (``benchmarks/participation.py``).
    O(b d) state, the band (T x b) in memory; horizon at most 2048 (the optimiser's T x T
    matrices), built once per (T, b) and cached.

    Parameters
    ----------
    horizon, dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity, participation
        See :class:`dpol.counters.Counter`. Gaussian noise: ``"gaussian"`` or its exact
        discrete twin ``"secure"`` (with any ``participation``).
    bands : int, optional
        b >= 1 (default 64, capped at the horizon and, with several participations, at
        their minimum separation).

    Privacy
    -------
    Neighbouring relation: replace-one (Delta = 2 bound; add/remove: bound). Changing
    element i by delta (||delta|| <= Delta) changes C x by column i of C times delta, of
    norm ||C e_i|| ||delta|| <= Delta (unit columns; the strategy reads the norms off
    the band). A participant entering k steps at least b' >= b apart changes k columns
    with disjoint supports: sensitivity Delta sqrt(k) (exactly: the largest sum of k
    column norms^2 b' apart); for b' < b the generic bound on |C^T C| (tested by brute
    force on tiny streams). C x + z is one Gaussian mechanism; the releases A C^-1 (C x
    + z) are post-processing, and for adaptively chosen elements a lower-triangular
    factorization keeps the guarantee (Denisov, McMahan, Rush, Smith, Thakurta 2022,
    Theorem 2.1). Tight calibration (the base class); no paper of ours publishes this
    counter, so ``calibration="paper"`` is refused. Laplace noise (float or discrete) is
    refused: the l1 column norms grow with the bands.

    Secure noise (``noise="secure"``): C x is real, so C x + z on a grid would give
    neighbours disjoint supports. The noisy encoder is w_t = round_g(E_t) + z_t instead,
    E_t = sum_{j < b} C[t, t-j] x_{t-j} computed in float64 from the grid-rounded
    elements (row t of the band times the last b kept: O(b d) memory), z_t discrete
    Gaussian on g Z^d: an exact grid value. The release is A C^-1 w, streamed by the
    strategy's inverse recursion from the noisy encoder alone (post-processing; A C^-1 w
    = A x + A C^-1 z up to rounding). Sensitivity of round_g(E): Delta'' = (Delta + half
    g sqrt(d)) ||C||_k + sqrt(T d) (g + 2 e), half = 1 under replace-one and 1/2 under
    add/remove. First term: each of the k elements of a participant moves by at most
    Delta + half g sqrt(d) once rounded (rounding moves one by at most g sqrt(d)/2; zero
    is on the grid), and ||C||_k^2 is the bound above (max_i ||C e_i||^2 for k = 1),
    with the column norms read off the float64 band that E is computed from (unit to
    about 1e-12 for the optimised band; not assumed 1). Second term: each of the T d
    coordinates adds at most g + 2 e (two roundings of g/2, two float errors e of E_t,
    bounded from the band's largest absolute row sum; derivation in
    :func:`~dpol.counters._secure_release.setup_encoder_grid`). The (much finer) grid
    keeps Delta'' within (1 + 2^-10) of the float sensitivity. Calibration: the discrete
    Gaussian of std s on g Z^(T d) is (Delta''^2 / (2 s^2))-zCDP (Canonne, Kamath,
    Steinke 2020, Theorem 14), through the base class's RDP route with CKS Theorem 15's
    slack; under adaptive inputs the per-step shifts, conditioned on the past releases,
    have squared norms summing to at most that sensitivity squared, so Renyi composition
    (Feldman and Zrnic 2021, Theorem 3.1) gives the same zCDP. ``run`` is the ``add``
    loop in secure mode.

    Examples
    --------
    >>> c = BandedMatrixCounter(64, bands=8, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run([[0.5]] * 64).shape, round(c.sensitivity, 6)
    ((64, 1), 2.0)
    >>> s = BandedMatrixCounter(64, bands=8, epsilon=1.0, delta=1e-5, noise="secure")
    >>> s.grid, bool(c.sensitivity < s.sensitivity <= (1 + 2**-10) * c.sensitivity)
    (6.103515625e-05, True)
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
