"""DP-MF / DP-FTRL mini-batch training over several epochs of a data set (layer L4).

Kairouz et al. 2021 (DP-FTRL, Algorithm 1 without momentum) and Choquette-Choo et al.
2023 (DP-MF: a factorisation calibrated for k epochs of b steps). This module holds the
private step and the public batch schedule; the engines that compute the gradient sums
where the data live are in :mod:`dpol.experiments.training`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, as_vector, check_choice, check_int, check_real, fail
from dpol.accounting import calibrate, derived_guarantee, noise_events
from dpol.accounting.mechanism import Mechanism
from dpol.clipping import clip_rows_l2
from dpol.counters import Participation, make_counter, resolve_counter
from dpol.errors import NonPrivateWarning
from dpol.learners._api import Accepts, set_mechanism
from dpol.losses import LogisticLoss, SquaredLoss
from dpol.noise.kinds import noise_kind

__all__ = ["LOSSES", "PrivateMiniBatchFTRL", "StepIndex", "batch_steps", "gradient_sum"]

#: the losses by name: phi(<theta, x>, y) with phi' the data gradient's coefficient
LOSSES = {"squared": SquaredLoss(), "logistic": LogisticLoss()}

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def batch_steps(row_ids: object, steps_per_epoch: int, shuffle_seed: int = 0) -> np.ndarray:
    """The step of every row within an epoch: splitmix64(shuffle_seed, row id) mod b.

    A public function of the seed and the row id alone, so every worker computes its rows'
    steps without seeing any other row, and a row is in the same step s of every epoch
    (steps s, s + b, ..., the participation (k, b) exactly). Batches have random sizes
    around n / b (a multinomial split: public, since the ids are).

    Examples
    --------
    >>> batch_steps(np.arange(6), 3).tolist()
    [1, 2, 1, 0, 1, 2]
    """
    ids = np.asarray(row_ids, dtype=np.uint64)
    b = check_int("steps_per_epoch", steps_per_epoch, low=1)
    key = 0x9E3779B97F4A7C15 * (check_int("shuffle_seed", shuffle_seed, low=0) + 1)
    with np.errstate(over="ignore"):  # splitmix64: arithmetic modulo 2^64 by design
        z = ids + np.uint64(key & 0xFFFFFFFFFFFFFFFF)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9) & _MASK
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB) & _MASK
    return ((z ^ (z >> np.uint64(31))) % np.uint64(b)).astype(np.int64)


class StepIndex:
    """Rows grouped by their step once, so a step reads only its own rows.

    Examples
    --------
    >>> idx = StepIndex(np.arange(10, 16), 3)
    >>> idx.rows(1).tolist(), idx.counts.tolist()  # positions in the partition
    ([0, 3], [2, 2, 2])
    """

    def __init__(self, row_ids: np.ndarray, steps_per_epoch: int, shuffle_seed: int = 0):
        steps = batch_steps(row_ids, steps_per_epoch, shuffle_seed)
        self.order = np.argsort(steps, kind="stable")  # rows of a step keep their order
        self.counts = np.bincount(steps, minlength=steps_per_epoch)
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)])

    def rows(self, step: int) -> np.ndarray:
        """Positions (in the partition) of the rows of ``step`` (within the epoch)."""
        return self.order[self.offsets[step]:self.offsets[step + 1]]


def gradient_sum(X: np.ndarray, y: np.ndarray, theta: np.ndarray, loss: str,
                 clip: float) -> tuple[np.ndarray, int]:
    """The sum of the per-example gradients at ``theta``, each clipped to l2 norm ``clip``.

    Returns the sum and the number of rows clipped. No BLAS call: a worker's thread count
    must not change the bits (every sum is numpy's own reduction, in row order).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 3.0]]); y = np.array([2.0, 0.0])
    >>> s, n = gradient_sum(X, y, np.zeros(2), "squared", 1.0)  # -2 e1 clipped to -e1
    >>> s.tolist(), n
    ([-1.0, 0.0], 1)
    """
    margins = (X * theta).sum(axis=1)
    grads = np.asarray(LOSSES[loss]._dphi(margins, y), dtype=float)[:, None] * X
    grads, clipped = clip_rows_l2(grads, clip)
    return grads.sum(axis=0), clipped


class PrivateMiniBatchFTRL:
    """DP-FTRL over E epochs of n rows: theta_{t+1} = theta_0 - lr G_hat_t / batch_size.

    The n rows are split into b = n // batch_size steps per epoch by the public schedule
    :func:`batch_steps`; step t's sum g_t of per-example gradients clipped to ``clip`` at
    the released theta_t (:func:`gradient_sum`) goes to a counter for T = E b steps and
    participation (E, b), whose release G_hat_t gives the next iterate (theta_0 = 0; no
    momentum: with zero noise, mini-batch gradient descent). :meth:`step` takes g_t
    however computed (one process, or partition sums added by an engine).

    Parameters
    ----------
    dim : int
        Features d.
    n_rows : int
        n, the rows of the data set (public under replace-one).
    batch_size : int
        Expected rows per step (1 <= batch_size <= n); b = n // batch_size.
    epochs : int
        E >= 1 passes.
    loss : {"logistic", "squared"}
        Logistic takes labels in {-1, 1}; squared any real label.
    clip : float
        C, the l2 bound of one per-example gradient.
    lr : float
        The step size.
    mechanism, **privacy
        The privacy arguments (:class:`~dpol.accounting.Mechanism`,
        docs/privacy_conventions.md): replace-one only (adding a row would shift the
        schedule's ids), tight calibration, Gaussian noise, counter ``blt`` by default.
    shuffle_seed : int
        The public seed of the batch schedule (not the noise's).

    Privacy
    -------
    Relation: replace-one of a record, i.e. of its E participations. Sensitivity: record
    i is in step s(i) of every epoch (:func:`batch_steps`, a function of the id), so it
    enters the steps s, s + b, ..., s + (E - 1) b, a pattern of participation (E, b);
    replacing it changes each of those g_t by at most 2 C (gradients at public iterates),
    and the counter's ``sensitivity`` with ``participation=(E, b)``,
    ``element_sensitivity=2 C`` bounds the encoder's change
    (:mod:`dpol.counters.strategies._participation`). Adaptivity is free (Denisov et al.
    2022, Theorem 2.1; Choquette-Choo et al. 2023). Calibration: z*(epsilon, delta) of
    :func:`dpol.accounting.calibrate` times that sensitivity. ``privacy`` is the
    counter's event, the unit one record.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)) / 2; y = np.sign(X[:, 0] + 0.1)
    >>> m = PrivateMiniBatchFTRL(3, n_rows=400, batch_size=50, epochs=2, epsilon=1.0,
    ...                          delta=1e-5, seed=0).fit(X, y)
    >>> m.t_, m.participation, m.weights.shape
    (16, Participation(max_participations=2, min_separation=8), (3,))
    >>> str(m.privacy).split(";")[0]
    '(1, 1e-05)-DP, replace_one, unit: one record (2 epochs of 8 steps over 400 rows)'
    """

    #: what of a Mechanism it takes: the Gaussian, tight, replace-one (an added row would
    #: shift the row ids, so the whole public schedule), any counter (default BLT)
    accepts = Accepts(noises=("gaussian",), calibrations=("tight",), counter="blt",
                      neighbourings=("replace_one",))

    def __init__(self, dim: int, *, n_rows: int, batch_size: int, epochs: int = 1,
                 loss: str = "logistic", clip: float = 1.0, lr: float = 1.0,
                 shuffle_seed: int = 0, mechanism: Mechanism | None = None,
                 **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        self.dim = check_int("dim", dim, low=1)
        self.n_rows = check_int("n_rows", n_rows, low=1)
        self.batch_size = check_int("batch_size", batch_size, low=1)
        if self.batch_size > self.n_rows:
            raise fail("batch_size", f"be at most the {self.n_rows} rows of the data",
                       batch_size)
        self.epochs = check_int("epochs", epochs, low=1)
        self.loss = check_choice("loss", loss, tuple(LOSSES))
        self.clip = check_real("clip", clip, low=0.0, low_open=True)
        self.lr = check_real("lr", lr, low=0.0, low_open=True)
        self.steps_per_epoch = self.n_rows // self.batch_size
        self.horizon = self.epochs * self.steps_per_epoch
        set_mechanism(self, privacy, self.n_rows)  # delta's default from the n records
        self.shuffle_seed = check_int("shuffle_seed", shuffle_seed, low=0)
        #: each record enters E steps, exactly b apart
        self.participation = Participation(self.epochs, self.steps_per_epoch)
        if not self.is_private:
            warnings.warn("PrivateMiniBatchFTRL with epsilon=inf releases without noise",
                          NonPrivateWarning, stacklevel=2)
        self._counter = self._build_counter()
        self.t_ = 0
        self.n_clipped_ = 0
        self._w = np.zeros(self.dim)
        #: the released iterates theta_1 .. theta_t (theta_0 = 0 is public)
        self.iterates_: list[np.ndarray] = []

    @property
    def is_private(self) -> bool:
        """Whether noise is added (epsilon finite)."""
        return math.isfinite(self.epsilon)

    def _build_counter(self):
        cls = resolve_counter(self.counter)
        for key in ("participation", "noise_multiplier", "epsilon", "neighbouring",
                    "element_sensitivity", "bound"):
            if key in self.counter_options:
                raise fail("counter_options", f"not set {key} (the learner sets it)",
                           self.counter_options)
        kind = noise_kind(self.noise)
        z = calibrate(noise_events(kind, self.neighbouring), self.epsilon,
                      self.delta) if self.is_private else 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)  # the learner warned already
            # bound n C: no batch sum reaches it, so the counter never clips; the
            # sensitivity of one participation is 2 C (Privacy)
            return make_counter(cls, self.horizon, self.dim, bound=self.n_rows * self.clip,
                                element_sensitivity=2.0 * self.clip, noise_multiplier=z,
                                delta=self.delta, neighbouring=self.neighbouring,
                                noise=self.noise, participation=self.participation,
                                seed=spawn_seeds(self.seed, 1)[0], **self.counter_options)

    # ------------------------------------------------------------------ privacy
    def privacy_events(self) -> tuple:
        """The gradient-sum counter's event, its unit one record (Privacy)."""
        unit = (f"one record ({self.epochs} epochs of {self.steps_per_epoch} steps over "
                f"{self.n_rows} rows)")
        return tuple(dataclasses.replace(e, unit=unit)
                     for e in self._counter.privacy_events())

    @property
    def privacy(self):
        """The guarantee of all the releases, derived from :meth:`privacy_events`."""
        return derived_guarantee(self, self.delta, self.epsilon)

    @property
    def noise_std(self) -> float:
        """Per-node Gaussian std of the counter: z times its participation sensitivity."""
        return self._counter.noise_scale

    def iterate_std(self, t: int) -> float:
        """The per-coordinate std of the noise in theta_t (t >= 1): lr / batch_size times
        the std of the counter's release t (public)."""
        return self.lr / self.batch_size * math.sqrt(self._counter.variance(t))

    # ------------------------------------------------------------------ steps
    @property
    def weights(self) -> np.ndarray:
        """The last released iterate theta_t (a copy)."""
        return self._w.copy()

    def batch(self, t: int | None = None) -> int:
        """The batch (step within the epoch) of step t (default: the next step)."""
        return (self.t_ if t is None else t) % self.steps_per_epoch

    def step(self, gradient_sum: object, n_clipped: int = 0) -> np.ndarray:
        """Release theta_{t+1} from g_t, the clipped gradient sum of batch ``batch()`` at
        ``weights`` (``n_clipped``: its rows clipped, counted)."""
        g = as_vector("gradient_sum", gradient_sum, self.dim)
        released = self._counter.add(g)
        self._w = -self.lr * released / self.batch_size
        self.t_ += 1
        self.n_clipped_ += int(n_clipped)
        self.iterates_.append(self._w.copy())
        return self.weights

    def fit(self, X: object, y: object) -> PrivateMiniBatchFTRL:
        """All T steps over the n rows (X, y) in memory (row ids 0..n-1): one partition."""
        X = as_matrix("X", X, self.dim)
        y = as_vector("y", y, X.shape[0])
        if X.shape[0] != self.n_rows:
            raise fail("X", f"have n_rows = {self.n_rows} rows", X.shape[0])
        index = StepIndex(np.arange(self.n_rows), self.steps_per_epoch, self.shuffle_seed)
        while self.t_ < self.horizon:
            rows = index.rows(self.batch())
            self.step(*gradient_sum(X[rows], y[rows], self._w, self.loss, self.clip))
        return self

    # ------------------------------------------------------------------ state
    def get_state(self) -> dict:
        """Everything needed to continue identically: the counter's state (its noise
        position included), the iterate and the releases (keep it like the raw data)."""
        return {"counter": self._counter.get_state(), "t": self.t_,
                "n_clipped": self.n_clipped_, "w": self._w.copy(),
                "iterates": [w.copy() for w in self.iterates_]}

    def set_state(self, state: dict) -> None:
        """Continue from :meth:`get_state` (built with the same arguments)."""
        self._counter = type(self._counter).from_state(state["counter"])
        self.t_, self.n_clipped_ = int(state["t"]), int(state["n_clipped"])
        self._w = np.array(state["w"], dtype=float)
        self.iterates_ = [np.array(w, dtype=float) for w in state["iterates"]]
