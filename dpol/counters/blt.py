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
    _optimized,
    blt_loss,
    check_blt_parameters,
    optimal_blt_parameters,
)
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
    :class:`~dpol.counters.ToeplitzCounter`'s O(T d), for the same error: with the
    default b = 5 buffers optimized for the horizon, ``loss()`` is within 1.0085x of the
    square-root figure up to T = 2^20 (10.71, 21.16, 30.27 against 10.71, 21.13, 30.02
    at T = 2^10, 2^16, 2^20). Per-coordinate noise variance at t is
    sigma^2 sum_{k < t} h_k^2 with h = cumsum(g) (the squared row t of B = A G).

    ``run`` filters each buffer along time with ``scipy.signal.lfilter`` started from the
    current buffers, so it continues vectorized from any state; it draws the same noise
    as the ``add`` loop and agrees with it to rounding (bit for bit from ``dim`` 512,
    where it steps through time on whole rows, faster there).

    Parameters
    ----------
    horizon : int or None
        T; None for a stream without end (then ``thetas`` and ``omegas`` are required,
        float Gaussian noise only, and the sensitivity sums every column norm: Privacy).
    dim, bound, noise_multiplier, epsilon, delta, neighbouring, calibration, seed,
    element_sensitivity
        See :class:`dpol.counters.Counter`. Gaussian noise: ``"gaussian"`` or its exact
        discrete twin ``"secure"``.
    buffers : int, optional
        Number b of buffers to optimize for ``horizon`` (default 5; see
        :func:`optimal_blt_parameters`). Leave unset when giving ``thetas``.
    objective : {"max", "mean"}, optional
        What the buffers are optimized for: the largest release variance (default) or
        its mean over the stream, the error that adds up into regret (at T = 2^10 mean
        loss 9.35 against 9.67 for the default and the square root, max loss 11.24
        against 10.71). Leave unset when giving ``thetas``.
    thetas, omegas : array-like of shape (b,), optional
        Explicit BLT parameters instead of the optimized ones: 0 < theta_i < 1,
        omega_i < 0 and sum_i -omega_i / (1 - theta_i) < 1.

    Attributes
    ----------
    thetas_, omegas_ : np.ndarray
        The parameters in use (optimized or given); read-only.

    Privacy
    -------
    Neighbouring relation: replace-one (Delta = 2 bound; add/remove: bound). Changing
    element i by delta (||delta|| <= Delta) changes the encoder C x by the outer product
    of column i of C and delta; that column holds c_0..c_{T-i}, so its norm is
    sqrt(sum_{k <= T - i} c_k^2), a prefix of the same sum and largest for i = 1:
    sensitivity Delta sqrt(sum_{k < T} c_k^2) (the strategy's ``column_norm_sq``; tested by
    brute force and against the column norms of the dense inverse). C x + z is one Gaussian
    mechanism; the release B (C x + z) is post-processing, and for adaptively chosen
    elements a lower-triangular factorization keeps the guarantee (Denisov, McMahan,
    Rush, Smith, Thakurta 2022, Theorem 2.1). Tight: std z Delta ||C e_1|| with
    z = 1/mu*(epsilon, delta) from dp-accounting (the base class). No paper of ours
    publishes this counter, so ``calibration="paper"`` is refused.

    ``horizon=None`` (an endless stream; every finite prefix of releases has the
    guarantee): the column of element i holds c_0, c_1, ... up to the current step, so
    every column norm is at most sqrt(sum_{k >= 0} c_k^2), and that series converges:
    c_k = -omega^T M^(k-1) 1 with M = diag(theta) - 1 omega^T, whose spectral radius is
    below 1 for a stable C = G^{-1} (checked), so sum_{k >= 1} c_k^2 = omega^T X omega
    with X = sum_j M^j 1 1^T (M^j)^T, the solution of the Stein equation X = M X M^T +
    1 1^T (``infinite_column_norm_sq``): sensitivity Delta sqrt(1 + omega^T X omega),
    fixed by the parameters, no horizon. The same Gaussian mechanism, calibration and
    adaptive argument then hold for every prefix. The price is the error: variance(t)
    = sigma^2 sum_{k < t} h_k^2 grows like sigma^2 (1 - sum_i s_i)^2 t once t passes the
    horizon the parameters were optimized for (at T0 = 2^10: a squared column norm
    3.52 against 3.27 bounded; variance(t) / (z Delta)^2 = 3.52 x 18.7 = 66 at t = 2^16
    and 3.52 x 254 = 894 at t = 2^20, where :class:`~dpol.counters.UnboundedTreeCounter`
    has 231 at 2^20 and at most 1.5 log2(t)^2 = 630 before 2^21).

    Secure noise (``noise="secure"``): C x is real, so C x + z on a grid would give
    neighbours disjoint supports. The noisy encoder is w_t = round_g(E_t) + z_t instead,
    E_t = sum_k c_k x_{t-k} computed in float64 from the grid-rounded elements (a direct
    dot product over the kept history: O(t d) time and O(T d) memory in this mode), z_t
    discrete Gaussian on g Z^d: an exact grid value. The release is cumsum(G w), streamed
    by the buffers from the noisy encoder alone (post-processing). Sensitivity of
    round_g(E): (Delta + half g sqrt(d)) ||C e_1|| + sqrt(T d) (g + 2 e) (every coordinate
    may round differently, e the float error bound of one coordinate; derivation in
    :func:`~dpol.counters._secure_release.setup_encoder_grid`), within (1 + 2^-10) of the
    float sensitivity by the choice of the (much finer) grid. Calibration: zCDP of the
    discrete Gaussian (CKS 2020 Theorem 14) through the base class's RDP route; under
    adaptive inputs the per-step shifts, conditioned on the past releases, have squared
    norms summing to at most that sensitivity squared, so Renyi composition (Feldman and
    Zrnic 2021, Theorem 3.1) gives the same zCDP. ``run`` is the ``add`` loop here.

    Examples
    --------
    >>> c = BltCounter(2**10, epsilon=1.0, delta=1e-5, seed=0)
    >>> round(c.loss(), 2), c.thetas_.shape
    (10.71, (5,))
    >>> c.run(np.ones(2**10)).shape
    (1024, 1)
    """

    # secure mode rounds the encoder itself (Privacy); FFT / lfilter: run agrees to rounding
    tags = frozenset({"secure_exact", "continues_vectorized"})
    _strategy_class = BltStrategy

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

    def _make_strategy(self) -> BltStrategy:
        if self._given is None:
            b = DEFAULT_BUFFERS if self.buffers is None else self.buffers
            objective = "max" if self.objective is None else self.objective
            self._given = check_blt_parameters(*_optimized(self.horizon, b, objective))
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
