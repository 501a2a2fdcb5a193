"""The buffered linear Toeplitz (BLT) counter: O(b d) streaming matrix factorization.

The strategy (:class:`~dpol.counters.strategies.BltStrategy`) and its optimiser
(:mod:`dpol.counters.strategies.blt_optimizer`, re-exported here) live with the other
strategies; this module adds the noise, calibration, clipping and state.
"""

from __future__ import annotations

import weakref

import numpy as np

from dpol._validation import check_choice, check_int, fail
from dpol.counters._base import Counter
from dpol.counters._secure_release import SecureReleaseMixin, setup_encoder_grid
from dpol.counters.strategies import BltStrategy
from dpol.counters.strategies.blt_optimizer import (
    DEFAULT_BUFFERS,
    OBJECTIVES,
    blt_loss,
    check_blt_parameters,
    optimal_blt_parameters,
)
from dpol.counters.strategies.blt_strategy import BLOCK_ROWS
from dpol.noise.kinds import SECURE_NOISE_KINDS

__all__ = ["DEFAULT_BUFFERS", "BltCounter", "blt_loss", "optimal_blt_parameters"]


#: the strategies alive, by (horizon, thetas, omegas): immutable, so counters of the same
#: parameters share one (and its two T-long tables) while any of them lives
_STRATEGIES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class BltCounter(SecureReleaseMixin, Counter):
    """Private prefix sums by a buffered linear Toeplitz factorization A = B C.

    The encoder is C x (C = G^{-1}, lower-triangular Toeplitz); the release is
    B (C x + z) = A x + A G z, i.e. S_t + n_t with n_t = n_{t-1} + (G z)_t. G z streams
    in O(b d) per step from b buffers: (G z)_t = z_t + sum_i omega_i u_i, then
    u_i <- theta_i u_i + z_t. Memory O(b d) against the square-root
    :class:`~dpol.counters.ToeplitzCounter`'s O(T d), for about the same error (figures:
    docs/benchmarks/defaults.md). Per-coordinate noise variance at t is sigma^2
    sum_{k < t} h_k^2, h = cumsum(g).

    Parameters
    ----------
    horizon : int or None
        T; None for a stream without end (then ``thetas`` and ``omegas`` are required,
        float Gaussian noise only).
    dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity, participation
        See :class:`dpol.counters.Counter`. Noise ``"gaussian"`` or ``"secure"``. With
        ``participation=(k, b)`` and no ``thetas``, the buffers are optimised for the loss
        under that participation (:func:`optimal_blt_parameters`).
    buffers : int, optional
        Number b of buffers to optimise for ``horizon`` (default 5).
    objective : {"max", "mean"}, optional
        Optimise the largest release variance or its mean over the stream (the error that
        adds up into regret).
    thetas, omegas : array-like of shape (b,), optional
        Explicit BLT parameters: 0 < theta_i < 1, omega_i < 0 and
        sum_i -omega_i / (1 - theta_i) < 1.

    Attributes
    ----------
    thetas_, omegas_ : np.ndarray
        The parameters in use (optimised or given); read-only.

    Privacy
    -------
    Replace-one (Delta = 2 bound; add/remove: bound), one stream element. Sensitivity:
    Delta ||C e_1|| (the longest column; ``column_norm_sq``); ``horizon=None``: Delta
    sqrt(1 + omega^T X omega), X from a Stein equation (``infinite_column_norm_sq``).
    C x + z is one Gaussian mechanism and B (C x + z) post-processing, adaptive inputs
    included (Denisov et al. 2022, Theorem 2.1). Tight: std z Delta ||C e_1||, z =
    1/mu*(epsilon, delta); ``calibration="paper"`` is refused (none published). Secure
    noise: the encoder is rounded to a grid (sensitivity within 1 + 2^-10), zCDP (CKS
    2020, Theorem 14). Participation (k, b): BLT coefficients are non-negative and
    non-increasing, so the pattern 0, b, .., (k' - 1) b is the worst and its sum the exact
    squared sensitivity. Derivations: docs/derivations/matrix_counters.md.

    Examples
    --------
    >>> c = BltCounter(2**10, epsilon=1.0, delta=1e-5, seed=0)
    >>> round(c.loss(), 2), c.thetas_.shape
    (10.71, (5,))
    >>> c.run(np.ones(2**10)).shape
    (1024, 1)
    """

    # secure mode rounds the encoder itself (Privacy); blocked products: run agrees with
    # add to rounding
    tags = frozenset({"secure_exact", "continues_vectorized"})
    _strategy_class = BltStrategy
    #: 512 KiB chunks, not 2 MiB: a chunk's passes then stay in cache (ridge's V counter,
    #: 66 values a step: 8.3 -> 7.3 us a row of the learner when it was filtered); the
    #: chunks have the bits of one block (tests/counters/test_counters_memory.py)
    run_chunk_values = 2**16

    def __init__(self, horizon: int | None, dim: int = 1, *, buffers: int | None = None,
                 thetas: object = None, omegas: object = None, objective: str | None = None,
                 **kwargs) -> None:
        if (thetas is None) != (omegas is None):
            raise fail("thetas / omegas", "be given both or neither", (thetas, omegas))
        if horizon is None and thetas is None:
            raise fail("horizon", "be an int unless thetas and omegas are given (for an "
                       "endless stream: parameters optimized for a design horizon T0, "
                       "optimal_blt_parameters(T0))", None)
        if horizon is None and kwargs.get("noise") in SECURE_NOISE_KINDS:
            raise fail("noise", "not be secure for horizon=None (secure mode keeps every "
                       "element: O(t d) memory)", kwargs["noise"])
        if buffers is not None:
            check_int("buffers", buffers, low=1)
        if objective is not None:
            check_choice("objective", objective, OBJECTIVES)
            if thetas is not None:
                raise fail("objective", "be left unset when thetas are given", objective)
        given = None if thetas is None else check_blt_parameters(thetas, omegas)
        if given is not None and buffers is not None and buffers != given[0].size:
            raise fail("buffers", f"equal len(thetas) = {given[0].size} or be left unset",
                       buffers)
        self.buffers, self.thetas, self.omegas = buffers, thetas, omegas
        self.objective = objective
        self._given = given
        super().__init__(horizon, dim, **kwargs)

    def _chunk_rows(self, n: int) -> int:
        # whole blocks of the strategy's noise: a chunk cut inside one copies its draws
        return max(BLOCK_ROWS, super()._chunk_rows(n) // BLOCK_ROWS * BLOCK_ROWS)

    def _make_strategy(self) -> BltStrategy:
        if self._given is None:
            b = DEFAULT_BUFFERS if self.buffers is None else self.buffers
            objective = "max" if self.objective is None else self.objective
            self._given = check_blt_parameters(*optimal_blt_parameters(
                self.horizon, b, objective, self.participation))
        self.thetas_, self.omegas_ = (a.copy() for a in self._given)
        self.thetas_.flags.writeable = self.omegas_.flags.writeable = False
        key = (self.horizon, tuple(self.thetas_.tolist()), tuple(self.omegas_.tolist()))
        try:  # a learner's counters (PQFTL's V and u) share one: its tables are O(T)
            return _STRATEGIES.get(key) or _STRATEGIES.setdefault(
                key, BltStrategy(self.horizon, self.thetas_, self.omegas_))
        except ValueError as err:  # horizon None with an unstable inverse
            raise fail("thetas / omegas", f"give a stable C = G^-1 ({err})",
                       (self.thetas, self.omegas)) from None

    def _setup_grid(self) -> None:
        setup_encoder_grid(self, float(np.sum(np.abs(self.strategy.coefficients))))

    def _params(self) -> dict:
        # the parameters in use, not re-optimized: a checkpoint continues identically
        # even where another scipy would stop the optimizer elsewhere
        return {**super()._params(), "buffers": None, "objective": None,
                "thetas": self.thetas_.tolist(), "omegas": self.omegas_.tolist()}
