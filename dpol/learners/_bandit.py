"""Shared machinery of the projection-free bandit learners (ENV Algorithm 1; layer L4).

The algorithm is :class:`~dpol.learners.PrivateBanditFrankWolfe`'s (ENV Algorithm 1, the
Frank-Wolfe step of Lemma C.4, Appendix D's shrunk domain; docs/errata.md, ENV-1 to
ENV-3): only D's linear oracle is ever called. :class:`BanditFrankWolfeBase` implements
it; subclasses build the counter (exact sums, or a calibrated private counter).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from dpol._clip_warning import note_clipping
from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, as_vector, check_bound, check_choice, check_int, check_real
from dpol.accounting.events import MechanismEvent, compose_dp_event, derived_guarantee
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.accounting.mechanism import Mechanism
from dpol.counters import Counter, make_counter
from dpol.errors import HorizonExceededError, NonPrivateWarning, fail
from dpol.learners._api import LearnerAPI, set_mechanism
from dpol.learners._bandit_geometry import (
    LinearOracleDomain,
    frank_wolfe_step,
    one_point_gradient,
    sample_sphere,
)
from dpol.learners._bandit_trace import BanditTrace
from dpol.learners._base import Checkpointable
from dpol.noise._dp_accounting import dp_accounting
from dpol.sets import ConvexSet

__all__ = [
    "MODES",
    "BanditFrankWolfeBase",
    "BanditTrace",
    "LinearOracleDomain",
    "frank_wolfe_step",
    "one_point_gradient",
    "sample_sphere",
]

MODES = ("extended", "shrink")
#: what one neighbouring change replaces: one round's loss function
UNIT = "one loss function f_t (one round)"


class BanditFrankWolfeBase(LearnerAPI, Checkpointable, ABC):
    """ENV Algorithm 1 (PrivateBandit) with ask/tell; subclasses build the counter.

    See :class:`~dpol.learners.PrivateBanditFrankWolfe` for the parameters.

    Examples
    --------
    Any subclass, here :class:`~dpol.learners.PrivateBanditFrankWolfe`, through ask/tell:

    >>> from dpol.learners import PrivateBanditFrankWolfe
    >>> from dpol.sets import Box
    >>> box = Box(0.0, 1.0, dim=2)
    >>> m = PrivateBanditFrankWolfe(box, horizon=100, epsilon=1.0, delta=1e-5, seed=0)
    >>> x = m.ask()  # one oracle call, one sphere sample
    >>> m.tell(float(x @ [0.5, -0.5]))  # only the loss value is observed
    >>> m.t, m.n_oracle_calls_, box.contains(m.iterate), m.privacy.epsilon
    (1, 1, True, 1.0)
    """

    #: the parameter bounding the loss values, as the clipping warning names it
    bound_names = ("", "loss_bound")

    def __init__(self, domain: object, *, horizon: int, lipschitz: float = 1.0,
                 loss_bound: float | None = None, mode: str = "extended",
                 inner_ball: tuple | None = None, center: object = None,
                 batch_size: int | None = None, zeta: float | None = None,
                 eta: float | None = None, mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        if not callable(getattr(domain, "linear_oracle", None)):
            raise fail("domain", "provide linear_oracle(c)", domain)
        self.domain = domain
        self.dim = n = check_int("domain.dim", getattr(domain, "dim", None), low=1)
        self.horizon = T = check_int("horizon", horizon, low=1)
        self.lipschitz = check_real("lipschitz", lipschitz, low=0.0, low_open=True)
        self.diameter = D = check_real("domain.diameter", getattr(domain, "diameter", None),
                                       low=0.0, low_open=True)
        self.mode = check_choice("mode", mode, MODES)
        set_mechanism(self, privacy, self.horizon)  # neighbouring, seed (and the target)
        self.batch_size = K = (math.isqrt(T - 1) + 1 if batch_size is None  # ceil(sqrt T), ENV-3
                               else check_int("batch_size", batch_size, low=1))
        self.n_batches = -(-T // K)
        self.eta = (D / (T**0.75 * math.sqrt(n) * self.lipschitz) if eta is None  # Alg. 1
                    else check_real("eta", eta, low=0.0, low_open=True))
        zeta_paper = D * math.sqrt(n) / T**0.25
        if self.mode == "shrink":
            if inner_ball is None or len(inner_ball) != 2:
                raise fail("inner_ball", "be (center, r) with center + r B in D for "
                           "mode='shrink'", inner_ball)
            self.ball_center = as_vector("inner_ball[0]", inner_ball[0], n)
            self.ball_radius = r = check_real("inner_ball[1]", inner_ball[1], low=0.0,
                                              low_open=True)
            # not in the paper (ENV-3): balance sqrt(T) L D^2 n / zeta against T zeta L (2 + D/r)
            self.zeta = (min(zeta_paper * math.sqrt(r / (r + D)), r / 2) if zeta is None
                         else check_real("zeta", zeta, low=0.0, low_open=True, high=r,
                                         high_open=True))  # zeta >= r leaves D (ENV-3)
            self.shrink = 1.0 - self.zeta / r
            default_bound = self.lipschitz * D  # played points lie in D
        else:
            self.ball_center, self.ball_radius, self.shrink = None, None, 1.0
            self.zeta = zeta_paper if zeta is None else check_real("zeta", zeta, low=0.0,
                                                                   low_open=True)
            if self.zeta > D:
                warnings.warn(f"zeta={self.zeta:.4g} exceeds the diameter {D:.4g} (T < n^2 "
                              "with the paper's zeta; docs/errata.md, ENV-3): the "
                              "exploration sphere is larger than the set", UserWarning,
                              stacklevel=3)
            default_bound = self.lipschitz * (D + self.zeta)  # queries reach zeta outside D
        self.loss_bound = (default_bound if loss_bound is None else
                           check_bound("loss_bound", loss_bound))
        if center is not None:
            self.center = as_vector("center", center, n)
        elif self.ball_center is not None:
            self.center = self.ball_center.copy()
        else:  # data-independent point of D: mean of 2n oracle vertices (exact centre of a box)
            dirs = np.eye(n) - 1.0 / (n + 1)
            self.center = np.mean([self._oracle(s) + self._oracle(-s) for s in dirs],
                                  axis=0) / 2.0
        # the counter sees batch sums of K vectors of norm <= (n/zeta) B: never clipped
        self.estimate_bound = n / self.zeta * self.loss_bound
        self._tree_seed, sphere_seed = spawn_seeds(self.seed, 2)
        self._rng = np.random.default_rng(sphere_seed)
        self._counter = self._build_counter()
        self.t_ = 0
        self.n_clipped_ = 0
        self.n_oracle_calls_ = 0
        self._batch, self._batch_start = 1, 0
        self._iterate = self.center.copy()  # x~_0 = c (ENV-3)
        self._fw_x = self.center.copy()
        self._y = np.zeros(n)  # eta * s~_0, s~_0 = 0 (ENV-3)
        self._buf_u: list[np.ndarray] = []
        self._buf_v: list[np.ndarray] = []
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self._released: list[np.ndarray] = []

    # ------------------------------------------------------------------ counter
    @abstractmethod
    def _build_counter(self) -> Counter | None:
        """The counter of the n_batches - 1 used batch sums (None if there are none)."""

    @property
    def n_releases(self) -> int:
        """Batch sums sent to the counter: the last batch's is never used (ENV-3)."""
        return self.n_batches - 1

    @property
    def element_sensitivity(self) -> float:
        """l2 change of one batch sum when one loss changes: 2 (n/zeta) B (1x for add/remove)."""
        return (2.0 if self.neighbouring == "replace_one" else 1.0) * self.estimate_bound

    def _make_counter(self, cls: object, **kwargs) -> Counter:
        """The counter of the used batch sums."""
        with warnings.catch_warnings():  # the learner warns itself where it must
            warnings.simplefilter("ignore", NonPrivateWarning)
            return make_counter(cls, self.n_releases, self.dim,
                                bound=self.batch_size * self.estimate_bound * (1.0 + 1e-6),
                                element_sensitivity=self.element_sensitivity,
                                # removing a loss leaves the batch's other summands: the
                                # counter sees one element replaced by another, never by 0
                                # (secure noise then rounds both; the learner reports its
                                # own relation)
                                neighbouring="replace_one",
                                seed=self._tree_seed, **kwargs)

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The counter's event, protecting one loss function under the learner's relation.

        The counter is told replace-one with the learner's per-summand sensitivity (see
        ``_make_counter``): neighbouring loss sequences under the learner's relation give
        batch sums within that sensitivity, so its event protects one loss function under
        the learner's relation. Its window (if any) and horizon are kept.
        """
        if self._counter is None:  # one batch: every point is data-independent
            return ()
        return tuple(dataclasses.replace(e, neighbouring=self.neighbouring, unit=UNIT)
                     for e in self._counter.privacy_events())

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The guarantee of the whole sequence of played points, derived from
        :meth:`privacy_events` (the points are post-processing of the counter's releases
        and of data-free sphere directions)."""
        return derived_guarantee(self, getattr(self, "delta", 0.0),
                                 getattr(self, "epsilon", None))

    @property
    def noise_scale(self) -> float:
        """Per-node noise scale of the counter (Gaussian std, Laplace scale, Gamma theta)."""
        return 0.0 if self._counter is None else self._counter.noise_scale

    def dp_event(self) -> dp_accounting.DpEvent:
        """The counter's dp-accounting event (the played points are post-processing)."""
        return compose_dp_event(self.privacy_events())

    # ------------------------------------------------------------------ one round
    @property
    def iterate(self) -> np.ndarray:
        """x~_{R-1}, the centre of the current batch (a Frank-Wolfe iterate, in D)."""
        return self._iterate.copy()

    def _oracle(self, c: np.ndarray) -> np.ndarray:
        if isinstance(self.domain, (ConvexSet, LinearOracleDomain)):  # c is already clean
            return self.domain._linear_oracle(c)
        return np.asarray(self.domain.linear_oracle(c), dtype=np.float64)

    def _fw_iterations(self, k: int) -> None:
        """k Frank-Wolfe iterations towards x~_R; none in the last batch (x~_m is unused)."""
        if self._batch >= self.n_batches:
            return
        for _ in range(k):
            self._fw_x, _ = frank_wolfe_step(self._oracle, self._fw_x, self.center, self._y)
            self.n_oracle_calls_ += 1

    def _play(self, u: np.ndarray) -> np.ndarray:
        x = self._iterate + self.zeta * u
        if self.mode == "shrink":  # phi(x) = c + (1 - zeta/r)(x - c) lies in D (App. D)
            x = self.ball_center + self.shrink * (x - self.ball_center)
        return x

    def _record(self, u: np.ndarray, values: np.ndarray) -> None:
        """Store clipped values of rounds t.. (already validated); close the batch if full."""
        clipped = np.clip(values, -self.loss_bound, self.loss_bound)
        self.n_clipped_ += int(np.count_nonzero(np.abs(values) > self.loss_bound))
        self._buf_u.append(u)
        self._buf_v.append(clipped)
        self.t_ += len(values)
        note_clipping(self, bounds=f"loss_bound={self.loss_bound:g}", unit="loss values",
                      raw=lambda: (None, values), stacklevel=4)
        if self.t_ - self._batch_start == min(self.batch_size, self.horizon - self._batch_start):
            self._close_batch()

    def _close_batch(self) -> np.ndarray | None:
        g = one_point_gradient(np.concatenate(self._buf_v), np.vstack(self._buf_u),
                               self.zeta).sum(axis=0)
        self._buf_u, self._buf_v = [], []
        released = None
        if self._batch < self.n_batches:
            released = self._counter.add(g)
            self._y = self.eta * released
            self._iterate = self._fw_x.copy()
            self._released.append(released.copy())
        self._batch += 1
        self._batch_start = self.t_
        return released

    def ask(self) -> np.ndarray:
        """The point x_t to play next (a fresh array); call :meth:`tell` with f_t(x_t).

        One Frank-Wolfe iteration (one linear-oracle call) and one sphere sample. Raises
        ``HorizonExceededError`` after ``horizon`` rounds and ``InvalidInputError`` when
        the previous point has not been told yet; then nothing changes.
        """
        if self._pending is not None:
            raise fail("ask", "be followed by tell(loss_value) before the next ask()",
                       "a second ask() while x_t is pending")
        if self.t_ >= self.horizon:
            raise HorizonExceededError(f"{type(self).__name__} was built for horizon="
                                       f"{self.horizon} rounds; all were played")
        self._fw_iterations(1)
        u = sample_sphere(self._rng, 1, self.dim)
        x = self._play(u)
        self._pending = (u, x)
        return x[0].copy()

    def tell(self, loss_value: object) -> None:
        """Report f_t(x_t) for the point of the last :meth:`ask`.

        A value outside [-loss_bound, loss_bound] is clipped (and counted in
        ``n_clipped_``): the privacy proof depends on it. NaN, inf, a non-number or a
        tell without a pending ask raise ``InvalidInputError``; nothing changes.
        """
        value = check_real("loss_value", loss_value)
        if self._pending is None:
            raise fail("tell", "follow ask() (one tell per asked point)",
                       "tell() with no pending ask()")
        u, _ = self._pending
        self._pending = None
        self._record(u, np.array([value]))

    # ------------------------------------------------------------------ whole runs
    def run(self, loss_fn: Callable, n_steps: int | None = None, *,
            comparator: object = None) -> BanditTrace:
        """Play ``n_steps`` rounds (default: to the horizon), one batch at a time.

        ``loss_fn(X, steps)`` gets the points of a block of rounds, X of shape (k, n), and
        their 0-based round indices, and returns the k values f_t(X[i]). Same draws, oracle
        calls and arithmetic as the ask/tell loop (equal for the same seed). With a
        ``comparator`` point the trace holds the cumulative regret against it. If
        ``loss_fn`` fails or returns bad values, the learner is left as it was before that
        block (earlier blocks were played and stay played).
        """
        if self._pending is not None:
            raise fail("run", "not start between ask() and tell()", "a pending ask()")
        n_steps = self.horizon - self.t_ if n_steps is None else check_int("n_steps", n_steps,
                                                                        low=0)
        if self.t_ + n_steps > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: {n_steps} rounds after "
                                       f"{self.t_} exceed horizon={self.horizon}")
        u_star = None if comparator is None else as_vector("comparator", comparator, self.dim)
        first_release = len(self._released)
        points, iterates, values, start = [], [], [], self.t_
        while self.t_ < start + n_steps:
            size = min(self.batch_size, self.horizon - self._batch_start)
            k = min(self._batch_start + size, start + n_steps) - self.t_
            saved = (copy.deepcopy(self._rng.bit_generator.state), self._fw_x,
                     self.n_oracle_calls_)
            try:
                self._fw_iterations(k)
                u = sample_sphere(self._rng, k, self.dim)
                x = self._play(u)
                v = as_vector("loss_fn(X, steps)", loss_fn(x.copy(), np.arange(
                    self.t_, self.t_ + k)), k)
            except Exception:
                self._rng.bit_generator.state, self._fw_x, self.n_oracle_calls_ = saved
                raise
            points.append(x)
            iterates.append(np.broadcast_to(self._iterate, x.shape))
            values.append(v)
            self._record(u, v)
        n = self.dim
        losses = np.concatenate(values) if values else np.zeros(0)
        X = np.vstack(points) if points else np.zeros((0, n))
        regret = None
        if u_star is not None:
            ref = as_vector("loss_fn(comparator)", loss_fn(
                np.broadcast_to(u_star, X.shape).copy(), np.arange(start, self.t_)), len(X))
            regret = np.cumsum(losses - ref)
        sums = self._released[first_release:]
        return BanditTrace(points=X, iterates=np.vstack(iterates) if iterates else X.copy(),
                           losses=losses, noisy_sums=np.array(sums).reshape(len(sums), n),
                           privacy=self.privacy, n_clipped=self.n_clipped_, regret=regret,
                           comparator=u_star)

    def run_linear(self, C: object, offsets: object = None) -> BanditTrace:
        """Play the linear losses f_t(x) = <C[t], x> + offsets[t] (vectorized :meth:`run`).

        The trace's regret is against the best fixed point in hindsight, one linear-oracle
        call: argmin_D <sum_t C[t], x> (not counted in ``n_oracle_calls_``).

        Examples
        --------
        >>> from dpol.learners.bandit_frank_wolfe import BanditFrankWolfe
        >>> from dpol.sets import Box
        >>> C = np.tile([0.5, -0.5], (400, 1))
        >>> trace = BanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=400, seed=0).run_linear(C)
        >>> trace.comparator, bool(trace.regret[-1] < 0.5 * 400)
        (array([0., 1.]), True)
        """
        C = as_matrix("C", C, self.dim)
        b = np.zeros(len(C)) if offsets is None else as_vector("offsets", offsets, len(C))
        start = self.t_
        best = self._oracle(C.sum(axis=0))

        def loss_fn(X: np.ndarray, steps: np.ndarray) -> np.ndarray:
            rows = steps - start
            return np.einsum("ij,ij->i", C[rows], X) + b[rows]

        return self.run(loss_fn, len(C), comparator=best)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(dim={self.dim}, horizon={self.horizon}, "
                f"batch_size={self.batch_size}, mode={self.mode!r}, privacy={self.privacy}, "
                f"t={self.t_})")
