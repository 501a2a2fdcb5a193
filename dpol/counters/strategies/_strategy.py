"""What every strategy offers: a factorisation of the prefix-sum workload (layer L2).

A strategy writes the prefix-sum matrix A as A = B C: the encoder C maps the stream to
the noised values, the decoder B maps them back to prefix sums, so the release at t is
S_t + (B z)_t. It states ``encode``, ``levels``, the column norms of C per participation
(``column_norm_sq``, :mod:`._participation`), ``variance(t)`` (row t of B squared),
``loss()`` (max or mean variance x column norm^2) and the streaming correlation
(``draws`` feeding ``correlate`` for one step or a block). The correlation state lives
in the dict :meth:`init_state` returns, which the counter owns and checkpoints.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dpol._validation import check_choice, fail
from dpol.counters.strategies._participation import (
    Participation,
    gram_sensitivity_sq,
    parse_participation,
)

__all__ = ["GRAM_LIMIT", "Strategy"]

#: the largest horizon whose Gram matrix C^T C (T x T) the generic multi-participation
#: bound builds (128 MiB of float64)
GRAM_LIMIT = 4096


class Strategy(ABC):
    """A factorisation A = B C of the prefix-sum workload over ``horizon`` steps.

    Parameters
    ----------
    horizon : int or None
        T, validated by the counter (None for an ``unbounded`` strategy).

    Examples
    --------
    >>> from dpol.counters.strategies import TreeStrategy
    >>> s = TreeStrategy(8)
    >>> s.variance(np.arange(1, 9)).tolist(), s.column_norm_sq(), s.loss(), s.loss("mean")
    ([1.0, 1.0, 2.0, 1.0, 2.0, 2.0, 3.0, 1.0], 4.0, 12.0, 6.5)
    """

    #: the row of :data:`dpol.noise.kinds.STRATEGY_NOISES`
    name = ""
    #: why the strategy refuses the kinds its row lacks (for the error message)
    refusal = ""
    #: whether ``correlate`` runs blocks of n > 1 steps from any state (else from a fresh
    #: state only; the counter then continues a started stream step by step)
    continues_vectorized = False
    #: whether the strategy needs no horizon (``horizon=None``: column norms bounded over
    #: an infinite stream, ``variance(t)`` for every t)
    unbounded = False
    #: whether the counter's ``run`` feeds ``correlate`` chunk by chunk (bounded memory);
    #: a strategy whose chunks would redo the history's work (Toeplitz) takes the block
    #: whole and bounds its working set in ``add_correlated``
    run_chunks = True

    def __init__(self, horizon: int | None) -> None:
        self.horizon = horizon

    # ------------------------------------------------------------------ structure
    @property
    @abstractmethod
    def levels(self) -> int:
        """Largest number of noised encoder values one element enters (the m of the
        trees' basic composition for pure noise)."""

    @abstractmethod
    def encode(self, values: np.ndarray) -> np.ndarray:
        """C x: every value that receives noise, for a stream of shape (T', d), T' <= T."""

    def column_norm_sq(self, participation: object = "single") -> float:
        """Squared l2 sensitivity of the encoder C to one participant, per unit change.

        ``"single"``: the largest squared column norm of C (one element). A
        :class:`~dpol.counters.strategies.Participation` (k steps, b apart):
        max_pi sum_{i, j in pi} |(C^T C)_ij| over the patterns pi, exact or an upper bound
        as the strategy states (:mod:`dpol.counters.strategies._participation`).
        """
        p = parse_participation(participation)
        return self._single_norm_sq() if p.single else self._participation_norm_sq(p)

    def _single_norm_sq(self) -> float:
        """Largest squared column norm. Trees: every node holds an element with weight 1,
        so it is the level count; matrix factorizations override it."""
        return float(self.levels)

    def _participation_norm_sq(self, participation: Participation) -> float:
        """Several participations: by default the generic bound on C^T C (any C), built
        from ``encode`` of the identity for T <= GRAM_LIMIT."""
        if self.horizon is None:
            raise fail("participation", f"be 'single' for {type(self).__name__} with "
                       "horizon=None: no horizon bounds a participant's steps in an endless "
                       "stream", participation)
        if self.horizon > GRAM_LIMIT:
            raise fail("participation", f"be 'single' for {type(self).__name__} with "
                       f"horizon={self.horizon}: its sensitivity to several participations "
                       f"is computed for horizons up to {GRAM_LIMIT}", participation)
        encoder = self.encode(np.eye(self.horizon))
        return gram_sensitivity_sq(encoder.T @ encoder, participation)

    # ------------------------------------------------------------------ error figures
    @abstractmethod
    def variance(self, t: np.ndarray) -> np.ndarray:
        """Noise variance of the release at steps t (int64 array, 1-based) per unit of
        one draw's variance: the number (or weighted count) of draws the release sums."""

    def loss(self, reduction: str = "max", participation: object = "single") -> float:
        """max (or mean) over t <= T of ``variance(t)`` x ``column_norm_sq(participation)``:
        the release variance at noise multiplier 1 and unit sensitivity of one node."""
        check_choice("reduction", reduction, ("max", "mean"))
        counts = self.variance(np.arange(1, self.horizon + 1, dtype=np.int64))
        worst = np.max(counts) if reduction == "max" else np.mean(counts)
        return float(worst) * self.column_norm_sq(participation)

    # ------------------------------------------------------------------ noise correlation
    @abstractmethod
    def init_state(self, dim: int) -> dict:
        """The correlation state before the first step (arrays, checkpointed as is)."""

    @property
    def draws_per_step(self) -> float:
        """About how many rows of noise a step draws on average (sizes ``run``'s chunks)."""
        return 1.0

    def draws(self, start: int, n: int) -> int:
        """Rows of noise that steps start+1 .. start+n draw, in the order they draw them."""
        return n

    @abstractmethod
    def correlate(self, state: dict, rows: np.ndarray, start: int, n: int) -> np.ndarray:
        """Release noise of steps start+1 .. start+n from their ``draws`` rows; updates
        ``state`` in place. ``n = 1`` is the ``add`` step; larger blocks need a fresh
        state unless ``continues_vectorized``."""

    def add_correlated(self, state: dict, rows: np.ndarray, start: int, n: int,
                       out: np.ndarray) -> None:
        """``out += correlate(state, rows, start, n)`` (``run``'s path): a strategy that
        can add its noise piece by piece overrides it to hold no (n x d) noise array."""
        out += self.correlate(state, rows, start, n)

    def restore_state(self, state: dict, dim: int) -> dict:
        """A checkpointed state as float arrays of the shapes of :meth:`init_state`."""
        out = {}
        for key, template in self.init_state(dim).items():
            value = state[key]
            if value is not None:
                value = np.array(value, dtype=np.float64)
                if template is not None:
                    value = value.reshape(-1, *template.shape[1:])
            out[key] = value
        return out
