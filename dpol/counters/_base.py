"""Shared machinery of the continual-release counters (layer L2).

Every counter here releases ``S_t + noise_t``: ``S_t`` is the exact running sum of the
(clipped) elements and ``noise_t`` is the sum of the noise of the tree nodes whose
dyadic decomposition covers the released part. Summing noisy node values gives the
same number in exact arithmetic; keeping the two parts apart needs only the node
*noise* as state (O(d log T) for the trees), makes zero noise return ``np.cumsum``
exactly, and lets the vectorized ``run`` repeat the ``add`` loop's draws and floating
point additions in the same order, so the two agree bit for bit.
"""

from __future__ import annotations

import copy
import math
import warnings
from abc import ABC, abstractmethod

import dp_accounting
import numpy as np

from dpol._clip_warning import note_clipping
from dpol._validation import (
    as_matrix,
    as_vector,
    check_choice,
    check_int,
    check_real,
    clip_norms,
    clip_rows_l2,
    exceeds_l2,
    fail,
)
from dpol.accounting import calibration as calibrations
from dpol.accounting.calibration import gaussian_epsilon
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS, PrivacyGuarantee
from dpol.errors import HorizonExceededError, NonPrivateWarning, PaperCalibrationWarning
from dpol.noise.discrete import discrete_gaussian_tau, grid_spacing
from dpol.noise.kinds import STRATEGY_NOISES, noise_kind, strategy_noises
from dpol.noise.source import NoiseSource

__all__ = ["Counter"]

CALIBRATIONS = ("tight", "paper")


def running_sum_rows(rows: np.ndarray) -> np.ndarray:
    """``np.cumsum(rows, axis=0)`` in place, with the same additions (row i += row i-1).

    numpy accumulates along axis 0 column by column, striding through memory; from 128
    columns on a loop over rows is faster (measured, one core: 4096 x 1024 55 ms against
    6 ms, 517 x 8100 15 ms against 3 ms; 2^18 x 64 110 ms against 161 ms).

    Examples
    --------
    >>> rows = np.arange(6.0).reshape(3, 2)
    >>> running_sum_rows(rows) is rows, rows.tolist()
    (True, [[0.0, 1.0], [2.0, 4.0], [6.0, 9.0]])
    >>> wide = np.random.default_rng(0).normal(size=(5, 128))  # the row loop: same floats
    >>> bool(np.array_equal(running_sum_rows(wide.copy()), np.cumsum(wide, axis=0)))
    True
    """
    if rows.shape[1] < 128:
        return np.cumsum(rows, axis=0, out=rows)
    for i in range(1, rows.shape[0]):
        rows[i] += rows[i - 1]
    return rows


class Counter(ABC):
    """Base class: private prefix sums of a stream of l2-bounded vectors.

    Subclasses define the tree structure through ``_levels`` (how many noised nodes one
    element can lie in), ``_node_counts`` (how many node noises a release at t sums),
    ``_step_noise`` (streaming) and ``_fresh_run_noise`` (vectorized).

    Privacy
    -------
    Secure noise (``noise="secure"``: discrete Gaussian, the twin of "gaussian";
    ``noise="secure_laplace"``: discrete Laplace, the twin of "laplace"). Exact integer
    samplers on OS randomness (:mod:`dpol.noise.discrete`, CKS 2020 Algorithms 1-3) put
    the noise on a grid g Z, g a power of two: g = the largest power of two <=
    min(s, Delta / sqrt(d)) / 2^10, s the per-node noise scale, Delta the node
    sensitivity, d = dim. Noise on g Z added to real sums would give neighbours disjoint
    supports (infinite privacy loss, Mironov 2012), so every clipped element is rounded
    to the nearest point of g Z^d first; the noise-free nodes are then exact grid sums
    and, in counters whose releases add node noises with integer weights
    (the binary and window trees), every release is an exact grid value (float64 sums
    of multiples of g are exact below 2^53 g, checked at construction with a 2^20 s
    margin for the noise). Counters with real weights (Honaker, Toeplitz, BLT) compute
    each release from exact grid noisy values only (``counters._secure_release``;
    their Privacy sections). Subclasses declare soundness by the tag ``"secure_exact"``.
    Rounding moves an element by at most g sqrt(d)/2 in l2, so the node sensitivity
    becomes Delta' = Delta + g sqrt(d) under replace-one (both elements rounded) and
    Delta + g sqrt(d)/2 under add/remove (zero is on the grid); the grid choice keeps
    this within a factor 1 + 2^-10. The l1
    sensitivity of the Laplace twin is sqrt(d) Delta', as for float noise. Calibration:
    the discrete Gaussian of std s on a lattice the sensitivity respects is
    (Delta'^2 m / (2 s^2))-zCDP over the m nodes one element touches (CKS Theorem 14,
    the continuous Gaussian's Renyi curve), so z is the smallest noise multiplier that
    dp-accounting's RDP accountant certifies for (epsilon, delta) (4-11% above the
    analytic Gaussian's z for epsilon in [0.1, 10]; CKS Theorem 15's slack tau, computed
    and carried as the zCDP xi, is 0.0 in float64 at s >= 2^10 g). The discrete Laplace
    of scale b with integer l1 sensitivity Delta_1 / g is (Delta_1 / b)-DP, so z = 1 /
    epsilon as for float Laplace. Secure sources cannot be seeded: ``seed`` is validated
    and ignored for the noise, ``run`` and the ``add`` loop agree in distribution only,
    and a checkpoint restores everything but the randomness.

    Examples
    --------
    Any subclass, here :class:`~dpol.counters.BinaryTreeCounter`, through the base
    interface:

    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(8, 2, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run(np.full((3, 2), 0.5)).shape, c.add([3.0, 4.0]).shape  # norm 5 > bound 1
    ((3, 2), (2,))
    >>> c.t, c.n_clipped_, str(c.privacy)
    (4, 1, '(1, 1e-05)-DP, replace_one, unit: one stream element')
    >>> clone = BinaryTreeCounter.from_state(c.get_state())  # continues identically
    >>> bool(np.array_equal(clone.add([0.5, 0.0]), c.add([0.5, 0.0])))
    True
    >>> with warnings.catch_warnings():  # zero noise warns
    ...     warnings.simplefilter("ignore", NonPrivateWarning)
    ...     exact = BinaryTreeCounter(4, noise_multiplier=0.0)
    >>> exact.run([0.5, 0.25, 1.0]).ravel().tolist(), exact.privacy.epsilon  # np.cumsum
    ([0.5, 0.75, 1.75], inf)
    """

    #: noise kinds for which ``calibration="paper"`` has a published formula
    _paper_noises: tuple[str, ...] = ()

    #: public capability tags (read-only): ``"secure_exact"``: secure noise is sound, the
    #: releases being S_t plus integer combinations of node noises (exact grid values with
    #: grid-rounded elements: the binary and window trees) or post-processing of exact grid
    #: values only (Honaker, Toeplitz, BLT in secure mode); ``"bit_identical_run"``: ``run``
    #: repeats the ``add`` loop bit for bit (float noise); ``"continues_vectorized"``:
    #: ``run`` is vectorized from any state, not only from a fresh counter
    tags: frozenset[str] = frozenset({"bit_identical_run"})

    #: the row of :data:`dpol.noise.kinds.STRATEGY_NOISES`: the noise kinds it takes, and
    #: why it refuses the others
    _strategy = ""
    _refusal = ""

    def __init__(
        self,
        horizon: int,
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
    ) -> None:
        self.horizon = check_int("horizon", horizon, low=1)
        self.dim = check_int("dim", dim, low=1)
        self.bound = check_real("bound", bound, low=0.0, low_open=True)
        self.delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        self.neighbouring = check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        self.calibration = check_choice("calibration", calibration, CALIBRATIONS)
        kind = self.noise_kind = noise_kind(noise)
        self.noise = kind.name
        takes = STRATEGY_NOISES[self._strategy]
        if kind.name not in takes:
            raise fail("noise", f"be {' or '.join(map(repr, takes))} for {self._refusal}",
                       self.noise)
        if kind.secure and "secure_exact" not in self.tags:
            raise fail("noise", f"not be {self.noise!r} for {type(self).__name__}: its "
                       "releases weigh node noises by non-integers, so they are no exact "
                       "grid values and floating point could leak the data", self.noise)
        self.seed = seed
        self.element_sensitivity = element_sensitivity
        default = (2.0 if self.neighbouring == "replace_one" else 1.0) * self.bound
        self._node_sensitivity = default if element_sensitivity is None else check_real(
            "element_sensitivity", element_sensitivity, low=0.0, high=default, low_open=True)
        self.epsilon = epsilon
        self._noise_multiplier_arg = noise_multiplier  # as passed (checkpoints rebuild by it)
        self._setup_structure()
        # the epsilon the noise is calibrated for (None: given as a noise multiplier);
        # ``privacy`` is derived from the events of the noise actually added
        self._noise_multiplier, self._target = self._calibrate(epsilon, noise_multiplier)
        self.grid: float | None = None  # the grid of secure noise (None: float noise)
        self._tau = 0.0
        if kind.secure and self._noise_multiplier > 0.0:
            self._setup_grid()
        self._privacy = compose_guarantee(self.privacy_events(), self.delta,
                                          target=self._target)
        self._source = NoiseSource(self.noise, self.dim, self.noise_scale, seed, grid=self.grid)
        self.t = 0
        self.n_clipped_ = 0
        self._sum = np.zeros(self.dim)
        self._reset_structure()

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
        return strategy_noises(cls._strategy, secure=secure)

    # ------------------------------------------------------------------ structure
    @abstractmethod
    def _setup_structure(self) -> None:
        """Derive constants of the structure from the constructor arguments."""

    @abstractmethod
    def _reset_structure(self) -> None:
        """Create the empty noise state."""

    @property
    @abstractmethod
    def _levels(self) -> int:
        """Largest number of noised encoder nodes one element lies in."""

    @abstractmethod
    def _node_counts(self, t: np.ndarray) -> np.ndarray:
        """Node noises (weighted, for variance-reduced trees) summed by the release at t."""

    @abstractmethod
    def _step_noise(self) -> np.ndarray:
        """Draw what step ``self.t`` needs and return its release noise (shape (dim,))."""

    @abstractmethod
    def _fresh_run_noise(self, n: int) -> np.ndarray:
        """Release noise of the next n steps, same draws as ``_step_noise``: from a fresh
        state, or from any state with the tag ``"continues_vectorized"``."""

    @abstractmethod
    def node_values(self, values: np.ndarray) -> np.ndarray:
        """The noise-free encoder (every value that receives noise) for a whole stream.

        ``values`` has shape (T', dim) with T' <= horizon. Used by sensitivity checks
        and audits; not on the release path.
        """

    @abstractmethod
    def _state_arrays(self) -> dict:
        """Structure state to checkpoint."""

    @abstractmethod
    def _set_state_arrays(self, state: dict) -> None:
        """Restore :meth:`_state_arrays`."""

    def _setup_grid(self) -> None:
        """Secure noise: pick the grid, inflate the sensitivity, re-certify (class Privacy)."""
        delta_node = self._node_sensitivity
        g = grid_spacing(min(self.noise_scale, delta_node / math.sqrt(self.dim)))
        # add/remove: the neighbour's element is 0, on the grid, so only one side is rounded.
        # A caller whose neighbours differ in two nonzero elements (the bandit's batch sums
        # with and without one loss) must say replace_one here, with its element_sensitivity
        half = 1.0 if self.neighbouring == "replace_one" else 0.5
        inflated = delta_node + half * g * math.sqrt(self.dim)
        scale = self.noise_scale * inflated / delta_node
        largest = self.horizon * self.bound + 2.0**20 * scale * self._levels
        if largest >= 2.0**52 * g:
            raise fail("noise", f"not be {self.noise!r} at this noise level: sums up to "
                       f"{largest:.3g} exceed 2^52 grid steps of {g:g}, where float64 sums "
                       "stop being exact (use more noise or float noise)", self.noise)
        self.grid, self._node_sensitivity = g, inflated
        if self.noise_kind.approximate and self.delta > 0.0:  # the discrete Gaussian
            coords = self.horizon * self._levels * self.dim  # >= the noised values
            self._tau = discrete_gaussian_tau(self.noise_scale / g, coords)

    def _to_grid(self, rows: np.ndarray) -> np.ndarray:
        """Secure noise: round clipped elements to the nearest grid point, in place.

        Division and multiplication by a power of two are exact, so the result is an exact
        multiple of the grid; identity for float noise.
        """
        if self.grid is not None:
            np.rint(rows / self.grid, out=rows)
            rows *= self.grid
        return rows

    # ------------------------------------------------------------------ calibration
    @property
    def node_sensitivity(self) -> float:
        """l2 change of one node value when one element changes.

        2*bound under replace-one and bound under add/remove (clipping guarantees both),
        or ``element_sensitivity`` when the caller proves a smaller one: for instance
        PQFTL's V elements svec(v v^T) with ||v|| <= R differ by at most sqrt(2) R^2, not
        2 R^2, and a logistic gradient at a public iterate by 1.100, not 2 L = 1.462, on the
        unit ball (``LogisticLoss.gradient_sensitivity``). Secure noise
        adds the grid rounding, g sqrt(d) (replace-one) or g sqrt(d)/2 (add/remove: the
        neighbour of an element is 0, already on the grid).
        """
        return self._node_sensitivity

    @property
    def _encoder_norm_sq(self) -> float:
        """Squared l2 norm of the largest column of the encoder (one element's weights).

        Trees: every node holds an element with weight 1, so it is the level count;
        matrix-factorization counters override it.
        """
        return float(self._levels)

    @property
    def sensitivity(self) -> float:
        """l2 sensitivity of the encoder: node_sensitivity * sqrt(encoder column norm^2).

        For the trees: one element lies in at most ``levels`` noised nodes and changes
        each by at most ``node_sensitivity``, so the stacked node vector moves by at most
        node_sensitivity * sqrt(levels) (attained by the first element, which lies in a
        node at every level).
        """
        return self.node_sensitivity * math.sqrt(self._encoder_norm_sq)

    @property
    def _pure_sensitivity(self) -> float:
        """What one pure-DP noise multiplier is relative to: sum of per-node sensitivities.

        Laplace: l1 norm over all nodes, levels * sqrt(dim) * node_sensitivity (an l2 ball
        of radius r lies in the l1 ball of radius sqrt(dim) r). Gamma: the privacy loss of
        each node is at most ||change||_2 / theta, summed over levels nodes.
        """
        return self._levels * self.node_sensitivity * self.noise_kind.l1_factor(self.dim)

    def _calibrate(
        self, epsilon: float | None, noise_multiplier: float | None
    ) -> tuple[float, float | None]:
        """(noise multiplier, the epsilon it was calibrated for or None)."""
        if (epsilon is None) == (noise_multiplier is None):
            raise fail("epsilon / noise_multiplier", "be given exactly one of the two",
                        (epsilon, noise_multiplier))
        gaussian = self.noise_kind.approximate
        if noise_multiplier is not None:
            if self.calibration == "paper":
                raise fail("calibration", "be 'tight' when noise_multiplier is given", "paper")
            z = check_real("noise_multiplier", noise_multiplier, low=0.0)
            if z == 0.0:
                warnings.warn(f"{type(self).__name__} with noise_multiplier=0 adds no noise: "
                              "its releases are not private", NonPrivateWarning, stacklevel=3)
                return 0.0, None
            return z, None
        eps = check_real("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True)
        if math.isinf(eps):
            warnings.warn(f"{type(self).__name__} with epsilon=inf adds no noise: its releases "
                          "are not private", NonPrivateWarning, stacklevel=3)
            return 0.0, None
        if gaussian and self.delta == 0.0:
            raise fail("delta", "be > 0 for Gaussian noise (use noise='laplace', 'gamma' or "
                       "'secure_laplace' for pure epsilon-DP)", self.delta)
        if self.calibration == "tight":  # the noise kind names its calibration
            to_z = getattr(calibrations, self.noise_kind.calibration)
            return (to_z(eps, self.delta) if gaussian else to_z(eps)), eps
        return self._calibrate_paper(eps)

    def _calibrate_paper(self, eps: float) -> tuple[float, float]:
        """The published scale for this counter and noise; the real guarantee is recomputed."""
        if self.noise not in self._paper_noises:
            raise fail("calibration", f"be 'tight': {type(self).__name__} has no published "
                       f"calibration for noise={self.noise!r}", "paper")
        scale, citation = self._paper_scale(eps)
        if scale <= 0.0:
            raise fail("calibration", f"not be 'paper' here: {citation} adds no noise at "
                       f"horizon={self.horizon}", "paper")
        gaussian = self.noise_kind.approximate  # paper noises: gaussian, laplace, gamma
        z = scale / (self.sensitivity if gaussian else self._pure_sensitivity)
        real = gaussian_epsilon(z, self.delta) if gaussian else 1.0 / z
        if real > eps * (1.0 + 1e-9):
            warnings.warn(
                f"{citation} gives only ({real:.4g}, {self.delta:g})-DP under {self.neighbouring}"
                f" at horizon={self.horizon}, not the requested epsilon={eps:g}; "
                "privacy reports the real guarantee", PaperCalibrationWarning, stacklevel=4)
        return z, eps

    def _paper_scale(self, eps: float) -> tuple[float, str]:
        """(noise scale, citation) of the published calibration (subclasses with presets)."""
        raise NotImplementedError

    def _window(self) -> int | None:
        return None

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The guarantee of the whole sequence of releases, derived from
        :meth:`privacy_events` (exact for the noise added)."""
        return self._privacy

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The one mechanism this counter runs, with its relation, window and horizon.

        The l2 Gamma mechanism and the discrete Laplace are pure DP at ``1 /
        noise_multiplier`` (class Privacy); ``pure_epsilon`` carries it.
        """
        return (MechanismEvent(self.dp_event(), self.neighbouring, window=self._window(),
                               horizon=self.horizon,
                               pure_epsilon=self.noise_kind.pure_epsilon(self._noise_multiplier),
                               name=type(self).__name__),)

    @property
    def noise_scale(self) -> float:
        """Per-node scale: Gaussian std, Laplace scale, or theta of the Gamma mechanism."""
        ref = self.sensitivity if self.noise_kind.approximate else self._pure_sensitivity
        return self._noise_multiplier * ref

    def dp_event(self) -> dp_accounting.DpEvent:
        """The dp-accounting event of the whole release sequence.

        Noise multipliers are relative to this counter's encoder sensitivity under its
        own neighbouring relation, so account the event with sensitivity one
        (dp-accounting's ADD_OR_REMOVE_ONE convention). The Gamma mechanism has no
        dp-accounting event (UnsupportedDpEvent); its guarantee is pure DP, see ``privacy``.
        Secure noise gives a ``ZCDpEvent`` that the RDP accountant accounts and the PLD
        accountant refuses: (tau, 1/(2 z^2))-zCDP for the discrete Gaussian (CKS Theorem
        14), and epsilon^2/2 = 1/(2 z^2) for the pure epsilon-DP discrete Laplace (Bun &
        Steinke 2016, Proposition 1.4).
        """
        return self.noise_kind.dp_event(self._noise_multiplier, self._tau)

    @property
    def noise_multiplier(self) -> float:
        """The noise multiplier in use: as given, or calibrated from ``epsilon`` (0.0 for
        ``epsilon=inf``); never None. The per-node scale is this times the sensitivity
        (Gaussian kinds) or the summed per-node sensitivity (pure kinds)."""
        return self._noise_multiplier

    @property
    def levels(self) -> int:
        """Largest number of noised nodes one element lies in (m of the sensitivity)."""
        return self._levels

    # ------------------------------------------------------------------ error figures
    def variance(self, t: int | np.ndarray) -> float | np.ndarray:
        """Analytic per-coordinate noise variance of the release at step t (1-based)."""
        arr = np.asarray(t)
        if arr.dtype.kind not in "iu" or np.any(arr < 1) or np.any(arr > self.horizon):
            raise fail("t", f"be an integer step in 1..{self.horizon}", t)
        out = self._node_counts(arr.astype(np.int64)) * self._source.variance
        return float(out) if out.ndim == 0 else out

    def max_variance(self) -> float:
        """max over t <= horizon of ``variance(t)`` (a public, data-independent figure)."""
        return float(np.max(self.variance(np.arange(1, self.horizon + 1, dtype=np.int64))))

    def loss(self) -> float:
        """max_t variance(t) / z^2 at bound=1 under add/remove (to compare counters by).

        A property of the structure alone: max_t node_counts(t) * encoder column norm^2.
        """
        counts = self._node_counts(np.arange(1, self.horizon + 1, dtype=np.int64))
        return float(np.max(counts)) * self._encoder_norm_sq

    # ------------------------------------------------------------------ releases
    def add(self, v: object) -> np.ndarray:
        """Add one element and return the private prefix sum (a fresh array).

        Raises ``InvalidInputError`` (a ValueError) for a wrong shape, dtype, NaN or inf,
        and ``HorizonExceededError`` past the horizon; in both cases nothing changes. An
        element of l2 norm above ``bound`` is scaled to ``bound`` and counted in
        ``n_clipped_``.
        """
        vec = as_vector("v", v, self.dim)
        if self.t >= self.horizon:
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
        return self._sum + self._step_noise()

    def run(self, values: object) -> np.ndarray:
        """Add a whole block of elements; return the private prefix sums, shape (n, dim).

        Same distribution as calling :meth:`add` on each row, and bit-identical for the
        same seed. Vectorized from a fresh counter (and from any state for the binary
        tree); the other counters continue a started stream with the ``add`` loop.
        """
        sums = self._run_owned(as_matrix("values", values, self.dim))
        note_clipping(self, bounds=f"bound={self.bound:g}", unit="elements", raw=lambda: (
            clip_norms(np.asarray(values, dtype=float)), None))
        return sums

    def _run_owned(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`run` on elements the caller built: a fresh, finite float64 (n, dim) array,
        which the counter overwrites (PQFTL's svec rows; the learner validated its data).
        The releases come back in ``rows`` itself on the vectorized path.

        Skips ``as_matrix``'s finiteness pass and copy: 4.9 us of PQFTL's ~76 us a row in
        the process that draws the noise, at d(d+1)/2 = 4095 (profiled, issue 8).
        """
        n = rows.shape[0]
        if self.t + n > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: adding {n} elements after "
                                       f"{self.t} exceeds horizon={self.horizon}")
        if self.t > 0 and "continues_vectorized" not in self.tags:
            return np.stack([self.add(row) for row in rows])
        rows, clipped = clip_rows_l2(rows, self.bound)
        rows = self._to_grid(rows)
        noise = self._fresh_run_noise(n)
        rows[0] += self._sum  # continue the running sum with the same additions as add()
        sums = running_sum_rows(rows)  # in place (rows is our copy): one pass less
        self.n_clipped_ += clipped
        self._sum = sums[-1].copy()
        self.t += n
        sums += noise  # in place, as above (profiled at T = 2^20, d = 10: 0.06 s of 0.26 s)
        return sums

    # ------------------------------------------------------------------ state
    def get_state(self) -> dict:
        """A deep copy of everything needed to continue identically (see :meth:`from_state`)."""
        return copy.deepcopy({
            "class": type(self).__name__,
            "params": self._params(),
            "t": self.t,
            "n_clipped_": self.n_clipped_,
            "sum": self._sum,
            "noise": self._source.get_state(),
            "structure": self._state_arrays(),
        })

    def _params(self) -> dict:
        return {
            "horizon": self.horizon, "dim": self.dim, "bound": self.bound,
            "noise_multiplier": self._noise_multiplier_arg, "epsilon": self.epsilon,
            "delta": self.delta, "neighbouring": self.neighbouring,
            "calibration": self.calibration, "noise": self.noise, "seed": None,
            "element_sensitivity": self.element_sensitivity,
        }

    @classmethod
    def from_state(cls, state: dict) -> Counter:
        """Rebuild a counter from :meth:`get_state`; its releases continue identically."""
        if state.get("class") != cls.__name__:
            raise fail("state", f"come from {cls.__name__}.get_state()", state.get("class"))
        state = copy.deepcopy(state)
        with warnings.catch_warnings():  # the original already warned when it was built
            warnings.simplefilter("ignore", NonPrivateWarning)
            warnings.simplefilter("ignore", PaperCalibrationWarning)
            obj = cls(**state["params"])
        obj.t = state["t"]
        obj.n_clipped_ = state["n_clipped_"]
        obj._sum = state["sum"]
        obj._source.set_state(state["noise"])
        obj._set_state_arrays(state["structure"])
        return obj

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(horizon={self.horizon}, dim={self.dim}, "
                f"noise={self.noise!r}, privacy={self.privacy})")
