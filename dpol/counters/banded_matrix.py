"""The banded matrix counter: a general b-banded encoder optimised for the mean loss."""

from __future__ import annotations

from dpol._validation import check_int, fail
from dpol.counters._base import Counter
from dpol.counters.strategies.banded_matrix import BandedMatrixStrategy
from dpol.counters.strategies.banded_matrix_optimizer import MAX_HORIZON, optimal_banded_matrix

__all__ = ["BandedMatrixCounter"]

#: default number of bands (as the banded Toeplitz counter)
DEFAULT_BANDS = 64


class BandedMatrixCounter(Counter):
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
        See :class:`dpol.counters.Counter`. Float Gaussian noise only.
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
    counter, so ``calibration="paper"`` is refused.

    Examples
    --------
    >>> c = BandedMatrixCounter(64, bands=8, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run([[0.5]] * 64).shape, round(c.sensitivity, 6)
    ((64, 1), 2.0)
    """

    # one recursion for add and run: the same arithmetic, bit for bit
    tags = frozenset({"bit_identical_run", "continues_vectorized"})
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
        return BandedMatrixStrategy(self.horizon, optimal_banded_matrix(self.horizon, b))

    def _params(self) -> dict:
        return {**super()._params(), "bands": self.bands}
