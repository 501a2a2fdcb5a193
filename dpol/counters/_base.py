"""The Counter: a strategy, a noise kind, a calibration, clipping and state (layer L2).

Every counter here releases ``S_t + noise_t``: ``S_t`` is the exact running sum of the
(clipped) elements and ``noise_t`` the release noise its strategy correlates from i.i.d.
draws (:mod:`dpol.counters.strategies`): for the trees, the sum of the noise of the
nodes whose dyadic decomposition covers the released part. Summing noisy node values
gives the same number in exact arithmetic; keeping the two parts apart needs only the
noise as state (O(d log T) for the trees), makes zero noise return ``np.cumsum``
exactly, and lets the vectorized ``run`` repeat the ``add`` loop's draws and floating
point additions in the same order, so the two agree bit for bit.
"""

from __future__ import annotations

import weakref
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from dpol._clip_warning import note_clipping
from dpol._validation import as_matrix, as_vector, check_choice, check_int, check_real, fail
from dpol.accounting.closed_forms import CALIBRATIONS
from dpol.accounting.events import compose_guarantee
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS
from dpol.clipping import clip_norms, clip_rows_l2, exceeds_l2
from dpol.counters._checkpoint import CounterCheckpoint
from dpol.counters._privacy import CounterPrivacy
from dpol.counters._running_sum import running_sum_rows
from dpol.counters._secure_release import setup_node_grid
from dpol.counters.strategies._participation import parse_participation
from dpol.errors import HorizonExceededError
from dpol.noise.kinds import STRATEGY_NOISES, noise_kind, strategy_noises
from dpol.noise.source import NoiseSource

if TYPE_CHECKING:
    from dpol.counters.strategies import Strategy

__all__ = ["EXACT_TAPS", "Counter"]

#: per counter, a function ``run`` hands each chunk's exact running sums (before noise),
#: their first step and clipped count (:mod:`dpol.learners._shared_sums`): kept outside
#: the counter, so no copy of it and no saved state holds one
EXACT_TAPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

class Counter(CounterPrivacy, CounterCheckpoint, ABC):
    """Base class: private prefix sums of a stream of l2-bounded vectors.

    Subclasses choose the strategy (:meth:`_make_strategy`, one of
    :mod:`dpol.counters.strategies`): its structure, sensitivity, variance and noise
    correlation. The counter adds the noise kind (:mod:`dpol.noise.kinds`), the
    calibration, clipping, grid rounding for secure noise, and the state.

    Privacy
    -------
    Each subclass states its relation, sensitivity and calibration for one participation.
    ``participation=(k, b)`` protects a participant entering at most k steps, b apart:
    sensitivity node_sensitivity * sqrt(max_pi sum_{i,j in pi} |(C^T C)_ij|), exact for
    the Toeplitz family, a bound for trees and the dense factorization
    (:mod:`dpol.counters.strategies._participation`; pure noise: k times the l1
    sensitivity); tight calibration only. Secure noise (discrete Gaussian or Laplace)
    rounds elements to a power-of-two grid and calibrates by zCDP
    (:mod:`dpol.counters._secure_release`; CKS 2020 Theorems 14-15); it cannot be seeded
    (``run`` and ``add`` agree in distribution only; a checkpoint restores all but the
    randomness).

    Examples
    --------
    Any subclass, here :class:`~dpol.counters.BinaryTreeCounter`, through the base
    interface:

    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(8, 2, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run(np.full((3, 2), 0.5)).shape, c.add([3.0, 4.0]).shape  # norm 5 > bound 1
    ((3, 2), (2,))
    >>> c.t, c.n_clipped_, c.privacy.seeded  # seed=0: private only while it stays secret
    (4, 1, True)
    >>> print(c.privacy)  # doctest: +NORMALIZE_WHITESPACE
    (1, 1e-05)-DP, replace_one, unit: one stream element; seeded noise: private only
    while the seed stays secret
    >>> clone = BinaryTreeCounter.from_state(c.get_state())  # continues identically
    >>> bool(np.array_equal(clone.add([0.5, 0.0]), c.add([0.5, 0.0])))
    True
    """

    #: public capability tags (read-only): ``"secure_exact"``: secure noise is sound, the
    #: releases being S_t plus integer combinations of node noises (exact grid values with
    #: grid-rounded elements: the binary and window trees) or post-processing of exact grid
    #: values only (Honaker, Toeplitz, BLT, banded Toeplitz, dense, banded matrix in secure
    #: mode);
    #: ``"bit_identical_run"``: ``run`` repeats the ``add`` loop bit for bit (float
    #: noise); ``"continues_vectorized"``: ``run`` is vectorized from any state, not only
    #: from a fresh counter
    tags: frozenset[str] = frozenset({"bit_identical_run"})
    #: the parameter bounding an element's norm, as the clipping warning names it
    bound_names = ("bound", "")

    #: the class of its strategy: its row of :data:`dpol.noise.kinds.STRATEGY_NOISES` is
    #: the noise kinds the counter takes
    _strategy_class: type[Strategy]

    def __init__(
        self,
        horizon: int | None,
        dim: int = 1,
        *,
        bound: float = 1.0,
        noise_multiplier: float | None = None,
        epsilon: float | None = None,
        delta: float = 0.0,
        neighbouring: str = "replace_one",
        calibration: str = "tight",
        noise: str = "gaussian",
        seed: object = None,
        element_sensitivity: float | None = None,
        participation: object = "single",
    ) -> None:
        # None: a stream without end, for strategies that need no horizon
        self.horizon = None if horizon is None and self._strategy_class.unbounded else \
            check_int("horizon", horizon, low=1)
        self.dim = check_int("dim", dim, low=1)
        self.bound = check_real("bound", bound, low=0.0, low_open=True)
        self.delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        self.neighbouring = check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        self.calibration = check_choice("calibration", calibration, CALIBRATIONS)
        kind = self.noise_kind = noise_kind(noise)
        self.noise = kind.name
        takes = STRATEGY_NOISES[self._strategy_class.name]
        if kind.name not in takes:
            raise fail("noise", f"be {' or '.join(map(repr, takes))} for "
                       f"{self._strategy_class.refusal}", self.noise)
        if kind.secure and "secure_exact" not in self.tags:
            raise fail("noise", f"not be {self.noise!r} for {type(self).__name__}: its "
                       "releases weigh node noises by non-integers, so they are no exact "
                       "grid values and floating point could leak the data", self.noise)
        self.seed = seed
        #: who is protected: one element, or one participant entering up to k steps b apart
        self.participation = parse_participation(participation)
        self.element_sensitivity = element_sensitivity
        default = (2.0 if self.neighbouring == "replace_one" else 1.0) * self.bound
        self._node_sensitivity = default if element_sensitivity is None else check_real(
            "element_sensitivity", element_sensitivity, low=0.0, high=default, low_open=True)
        self.epsilon = epsilon
        self._noise_multiplier_arg = noise_multiplier  # as passed (checkpoints rebuild by it)
        self.strategy: Strategy = self._make_strategy()
        # the epsilon the noise is calibrated for (None: given as a noise multiplier);
        # ``privacy`` is derived from the events of the noise actually added
        self._noise_multiplier, self._target = self._calibrate(epsilon, noise_multiplier)
        self.grid: float | None = None  # the grid of secure noise (None: float noise)
        self._tau = 0.0
        if kind.secure and self._noise_multiplier > 0.0:
            self._setup_grid()
        # secure noise reads the OS generator whatever the seed: nothing to replay
        self._privacy = compose_guarantee(self.privacy_events(), self.delta,
                                          target=self._target,
                                          seeded=seed is not None and not kind.secure)
        self._source = NoiseSource(self.noise, self.dim, self.noise_scale, seed, grid=self.grid)
        self.t = 0
        self.n_clipped_ = 0
        self._sum = np.zeros(self.dim)
        self._state = self.strategy.init_state(self.dim)  # the noise correlation's
        self._prefetched: np.ndarray | None = None  # release noise drawn ahead (prefetch)
        self._reset_secure()

    @classmethod
    def supported_noises(cls, *, secure: bool | None = None) -> tuple[str, ...]:
        """The noise kinds this counter takes (its row of
        :data:`dpol.noise.kinds.STRATEGY_NOISES`; ``secure``: only secure or only float).

        Examples
        --------
        >>> from dpol.counters import ToeplitzCounter
        >>> ToeplitzCounter.supported_noises()
        ('gaussian', 'secure')
        """
        return strategy_noises(cls._strategy_class.name, secure=secure)

    # ------------------------------------------------------------------ structure
    @abstractmethod
    def _make_strategy(self) -> Strategy:
        """The strategy for the constructor's arguments (``self`` holds them validated)."""

    def node_values(self, values: np.ndarray) -> np.ndarray:
        """The noise-free encoder (every value that receives noise) for a whole stream.

        ``values`` has shape (T', dim) with T' <= horizon. Used by sensitivity checks
        and audits; not on the release path.
        """
        return self.strategy.encode(values)

    @property
    def levels(self) -> int:
        """Largest number of noised nodes one element lies in (m of the sensitivity)."""
        return self.strategy.levels

    def _setup_grid(self) -> None:
        """Secure noise: grid, inflated sensitivity, re-certification (_secure_release)."""
        setup_node_grid(self)

    def _to_grid(self, rows: np.ndarray) -> np.ndarray:
        """Secure noise: round clipped elements to the nearest grid point, in place.

        Division and multiplication by a power of two are exact, so the result is an exact
        multiple of the grid; identity for float noise.
        """
        if self.grid is not None:
            np.rint(rows / self.grid, out=rows)
            rows *= self.grid
        return rows

    def _reset_secure(self) -> None:
        """Create the secure-mode state of the subclass (none here)."""

    # ------------------------------------------------------------------ error figures
    def variance(self, t: int | np.ndarray) -> float | np.ndarray:
        """Analytic per-coordinate noise variance of the release at step t (1-based)."""
        arr = np.asarray(t)
        last = np.inf if self.horizon is None else self.horizon
        if arr.dtype.kind not in "iu" or np.any(arr < 1) or np.any(arr > last):
            raise fail("t", f"be an integer step in 1..{last}", t)
        out = self.strategy.variance(arr.astype(np.int64)) * self._source.variance
        return float(out) if out.ndim == 0 else out

    def max_variance(self) -> float:
        """max over t <= horizon of ``variance(t)`` (a public, data-independent figure)."""
        self._check_bounded("max_variance()")
        return self._max_variance_upto(self.horizon)

    def _max_variance_upto(self, last: int) -> float:
        """max over t <= ``last`` of ``variance(t)``, in blocks of 2^16 steps (the max is
        exact in any order; one pass held 3 T-long arrays: 230 MB at T = 10^7)."""
        return max(float(np.max(self.variance(np.arange(lo, min(last, lo + 2**16 - 1) + 1,
                                                        dtype=np.int64))))
                   for lo in range(1, last + 1, 2**16))

    def loss(self, reduction: str = "max") -> float:
        """max (or mean) over t of variance(t) / z^2 at bound=1 under add/remove, for the
        counter's ``participation`` (to compare counters by): the strategy's ``loss()``,
        a property of the structure and the participation pattern alone."""
        self._check_bounded("loss()")
        return self.strategy.loss(reduction, self.participation)

    def _check_bounded(self, what: str) -> None:
        if self.horizon is None:
            raise fail("horizon", f"be an int for {what}, a max over t <= horizon (an "
                       "unbounded counter has variance(t) for every t)", None)

    # ------------------------------------------------------------------ releases
    def add(self, v: object) -> np.ndarray:
        """Add one element and return the private prefix sum (a fresh array).

        Raises ``InvalidInputError`` (a ValueError) for a wrong shape, dtype, NaN or inf,
        and ``HorizonExceededError`` past the horizon; in both cases nothing changes. An
        element of l2 norm above ``bound`` is scaled to ``bound`` and counted in
        ``n_clipped_``.
        """
        vec = as_vector("v", v, self.dim)
        if self.horizon is not None and self.t >= self.horizon:
            raise HorizonExceededError(f"{type(self).__name__} was calibrated for horizon="
                                       f"{self.horizon} elements; all were added")
        rows = vec[None, :]
        # clip_rows_l2's own test (so run() clips identically); skipping the call for the
        # usual in-bound element saves ~6 us per step
        clipped = 0
        if exceeds_l2(vec, self.bound):
            rows, clipped = clip_rows_l2(rows, self.bound)
            self.n_clipped_ += clipped
        rows = self._to_grid(rows)
        self._sum += rows[0]
        self.t += 1
        if clipped:
            note_clipping(self, bounds=f"bound={self.bound:g}", unit="elements")
        if self._prefetched is not None:  # drawn ahead by prefetch: the same draws
            noise, self._prefetched = self._prefetched[0], self._prefetched[1:]
            if not len(self._prefetched):
                self._prefetched = None
            return self._sum + noise
        return self._sum + self._noise(self.t - 1, 1)[0]

    def prefetch(self, n: int) -> None:
        """Draw now, in one vectorized call, the release noise of the next n ``add`` calls.

        The noise does not depend on the data, so this is the same mechanism and draws as a
        ``run`` of n rows, at ``run``'s speed for a caller adding one adaptive element at a
        time. A no-op for secure noise, for step-by-step strategies once started, and while
        drawn rows remain. Checkpoints keep them.

        Examples
        --------
        >>> from dpol.counters import BltCounter
        >>> a, b = (BltCounter(64, noise_multiplier=1.0, seed=3) for _ in range(2))
        >>> a.prefetch(64)
        >>> loop = np.array([a.add([0.5])[0] for _ in range(64)])
        >>> bool(np.allclose(loop, b.run(np.full((64, 1), 0.5)).ravel(), atol=1e-12))
        True
        """
        n = check_int("n", n, low=0)
        left = None if self.horizon is None else self.horizon - self.t
        if left is not None and n > left:
            raise fail("n", f"be at most the {left} steps left before horizon="
                       f"{self.horizon}", n)
        if (self._prefetched is not None or n == 0 or self.grid is not None
                or (self.t > 0 and not self.strategy.continues_vectorized)):
            return
        self._prefetched = self._noise(self.t, n)

    def _noise(self, start: int, n: int) -> np.ndarray:
        """Release noise of steps start+1 .. start+n: the strategy's draws, correlated.

        The one path of ``add`` (n = 1) and ``run``; secure counters that release from
        noisy values alone turn the draws into those values first (``_noisy_values``).
        """
        if self._source.scale == 0.0:  # no noise (a non-private twin): nothing to correlate
            return np.zeros((n, self.dim))  # the strategy's output for zero draws
        return self.strategy.correlate(self._state, self._draws(start, n), start, n)

    def _draws(self, start: int, n: int) -> np.ndarray:
        """What the strategy correlates for steps start+1 .. start+n, drawn now."""
        return self._noisy_values(self._source.draw(self.strategy.draws(start, n)))

    def _noisy_values(self, rows: np.ndarray) -> np.ndarray:
        """What the strategy correlates: the draws themselves (see SecureReleaseMixin)."""
        return rows

    def run(self, values: object) -> np.ndarray:
        """Add a whole block of elements; return the private prefix sums, shape (n, dim).

        Same distribution as calling :meth:`add` on each row, and bit-identical for the
        same seed (to rounding for the matrix factorizations: FFT, lfilter, blocked
        products). Vectorized from any state (the tag ``"continues_vectorized"``); a
        counter without it continues a started stream with the ``add`` loop. Streams in
        chunks of about ``run_chunk_values`` noise values (bounded memory: the input,
        its copy that becomes the output, and one chunk), with the bits of one block; a
        strategy that takes its block whole (Toeplitz: the draws are its state) bounds its
        own working set (``add_correlated``).
        """
        sums = self._run_owned(as_matrix("values", values, self.dim))
        note_clipping(self, bounds=f"bound={self.bound:g}", unit="elements", raw=lambda: (
            clip_norms(np.asarray(values, dtype=float)), None))
        return sums

    def _run_owned(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`run` on elements the caller built: a fresh, finite float64 (n, dim) array,
        which the counter overwrites (PQFTL's svec rows; the learner validated its data).
        The releases come back in ``rows`` itself on the vectorized path.

        Skips ``as_matrix``'s check and copy (4.9 us of PQFTL's ~76 us a row at d = 90).
        Chunks of :meth:`_chunk_rows` rows bound the working set, with the bits of one block.
        """
        n = rows.shape[0]
        if self.horizon is not None and self.t + n > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: adding {n} elements after "
                                       f"{self.t} exceeds horizon={self.horizon}")
        if self._prefetched is not None or (
                self.t > 0 and not self.strategy.continues_vectorized):
            return np.stack([self.add(row) for row in rows])
        step = self._chunk_rows(n)
        for lo in range(0, n, step):
            self._run_chunk(rows[lo:lo + step])
        return rows

    #: float64 values per chunk of ``run`` (2 MiB: ~26000 rows at d = 10)
    run_chunk_values = 2**18

    def _chunk_rows(self, n: int) -> int:
        """Rows per chunk of ``run``: ``run_chunk_values`` over the values a step draws
        (dim x the strategy's ``draws_per_step``; at least 64 rows), or the whole block
        for a strategy whose blocks are cheaper whole (``run_chunks``)."""
        if not self.strategy.run_chunks:
            return max(n, 1)
        return max(64, int(self.run_chunk_values / (self.dim * self.strategy.draws_per_step)))

    def _run_chunk(self, rows: np.ndarray) -> None:
        """Clip, sum and noise one chunk of ``run``, in place (``rows`` becomes releases)."""
        n, start = rows.shape[0], self.t
        _, clipped = clip_rows_l2(rows, self.bound)
        self._to_grid(rows)
        # zero noise is skipped, not added: S_t + 0.0 is S_t bit for bit, since a running
        # sum from +0.0 is never -0.0
        draws = None if self._source.scale == 0.0 else self._draws(start, n)
        rows[0] += self._sum  # continue the running sum with the same additions as add()
        running_sum_rows(rows)  # in place (rows is our copy): one pass less
        tap = EXACT_TAPS.get(self)
        if tap is not None:  # a non-private twin's sums: these, before noise
            tap(rows, start, clipped)
        self.n_clipped_ += clipped
        self._sum = rows[-1].copy()
        self.t += n
        if draws is not None:  # in place, as above (profiled at T = 2^20, d = 10: 0.06 s of 0.26 s)
            self.strategy.add_correlated(self._state, draws, start, n, rows)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(horizon={self.horizon}, dim={self.dim}, "
                f"noise={self.noise!r}, privacy={self.privacy})")
