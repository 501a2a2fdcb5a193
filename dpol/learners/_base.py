"""Shared machinery of the full-information private online learners (layer L4).

A learner publishes an iterate w_t, then receives (x_t, y_t), suffers f_t(w_t) and
publishes w_{t+1}. ``learn_one`` is the step; ``run`` replays a whole stream and returns
a :class:`Trace`. Inputs are validated before anything changes and clipped to the
declared bounds (counted in ``n_clipped_``), because every sensitivity below assumes them.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from dpol._clip_warning import note_clipping
from dpol._validation import as_matrix, as_vector, check_bound, check_int, check_real
from dpol.accounting.events import MechanismEvent, compose_dp_event, derived_guarantee
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.accounting.mechanism import Mechanism
from dpol.clipping import clip_examples, clip_norms, exceeds_l2
from dpol.errors import HorizonExceededError, NonPrivateWarning, fail
from dpol.learners._api import LearnerAPI, set_mechanism
from dpol.learners._checkpoint import Checkpointable
from dpol.learners.postprocess import (
    ReleaseAverage,
    model_weights,
    predict,
    record_release,
    record_releases,
    release_weights,
    row_dot,
)
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["Checkpointable", "OnlineLearner", "Trace"]


@dataclass(frozen=True)
class Trace:
    """What a learner released and suffered over a stream.

    Attributes
    ----------
    weights : array (T, d), or (T, d, K) for K outputs
        ``weights[t]`` is the released iterate used at step t+1, before seeing its element.
    losses : array (T,)
        Loss suffered at each step, f_t(weights[t]) (on the clipped element).
    predictions : array (T,), or (T, K)
        ``x_t . weights[t]`` (x_t clipped), made before the label was seen.
    regret : array (T,) or None
        Cumulative regret against ``comparator`` when one was given.
    final_weights : array (d,), or (d, K)
        The iterate released after the last step.
    privacy : PrivacyGuarantee
    n_clipped : int
    model_predictions : array (T,) or None
        The post-processed model's prequential predictions of each row *as given*
        (unclipped: a prediction spends no privacy); None without such a model.

    Examples
    --------
    >>> from dpol.learners import PrivateIGD
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2)) / 4; y = X @ np.array([0.5, -0.5])
    >>> m = PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2, 1.0),
    ...                horizon=50, epsilon=1.0, delta=1e-5, seed=0)
    >>> trace = m.run(X, y, comparator=np.zeros(2))
    >>> trace.weights.shape, trace.regret.shape, trace.final_weights.shape
    ((50, 2), (50,), (2,))
    >>> bool(np.allclose(trace.predictions, np.einsum("ij,ij->i", X, trace.weights)))
    True
    """

    weights: np.ndarray
    losses: np.ndarray
    predictions: np.ndarray
    final_weights: np.ndarray
    privacy: PrivacyGuarantee
    n_clipped: int
    regret: np.ndarray | None = None
    model_predictions: np.ndarray | None = None

    @property
    def prequential_predictions(self) -> np.ndarray:
        """The model's predictions before each step: ``predict_one``'s, not the raw release's."""
        return self.predictions if self.model_predictions is None else self.model_predictions

    @property
    def average_regret(self) -> np.ndarray:
        """regret_t / t, the figure JKT's Appendix G plots."""
        if self.regret is None:
            raise fail("comparator", "be given to run() to compute regret", None)
        return self.regret / np.arange(1, len(self.regret) + 1)


class OnlineLearner(LearnerAPI, Checkpointable, ABC):
    """Base class of the full-information learners: validation, clipping, state, run.

    Subclasses implement ``_learn(x, y)`` (one clean step and one release on a validated,
    clipped element), ``_loss_value(w, X, y)`` and, where the algorithm allows,
    ``_run(X, y)`` returning the released iterates of a whole stream.

    ``weights`` is the last release (the papers' iterate); ``predict_one`` predicts with
    ``model_weights``, by default the s^2-weighted mean of the releases, clipped to
    y_bound for least squares (:mod:`dpol.learners.postprocess`): post-processing of the
    releases, covered by ``privacy``; ``predict_one(x, raw=True)`` uses ``weights``.

    Examples
    --------
    Any subclass, here :class:`~dpol.learners.PrivateIGD`, through the base interface:

    >>> from dpol.learners import PrivateIGD
    >>> from dpol.losses import Regularized, SquaredLoss
    >>> from dpol.sets import L2Ball
    >>> m = PrivateIGD(2, loss=Regularized(SquaredLoss(), 0.1), domain=L2Ball(2, 1.0),
    ...                horizon=3, epsilon=1.0, delta=1e-5, seed=0)
    >>> m.learn_one([0.6, 0.8], 1.0)
    >>> m.learn_one([3.0, 4.0], 1.0)  # norm 5 > x_bound 1: clipped and counted
    >>> m.t, m.n_clipped_, m.weights.shape, m.privacy.seeded  # seed=0: private while secret
    (2, 1, (2,), True)
    >>> m.learn_one([1.0, np.nan], 1.0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: x must contain only finite values (no NaN or inf);
    got array([ 1. nan], dtype=float64)
    >>> m.t  # a refused element changes nothing
    2
    """

    def __init__(self, dim: int, *, horizon: int, x_bound: float = 1.0, y_bound: float = 1.0,
                 mechanism: Mechanism | None = None, **privacy) -> None:
        privacy = self.accepts.resolve(type(self).__name__, mechanism, privacy)
        self.dim = check_int("dim", dim, low=1)
        self.horizon = check_int("horizon", horizon, low=1)
        set_mechanism(self, privacy, self.horizon)  # epsilon, delta, neighbouring, ...
        self.x_bound = check_bound("x_bound", x_bound)
        self.y_bound = check_bound("y_bound", y_bound)
        if not self.is_private:
            warnings.warn(f"{type(self).__name__} with epsilon=inf releases without noise",
                          NonPrivateWarning, stacklevel=3)
        self.t_ = 0
        self.n_clipped_ = 0
        self._average = ReleaseAverage(self.dim)  # the model's state (postprocess)

    #: how ``predict_one`` builds the model from the releases: "average" (default),
    #: "shrink" or "last" (:mod:`dpol.learners.postprocess`; set on an instance)
    postprocess = "average"
    #: the coordinate holding the intercept (set by ``WithIntercept``; shrinkage skips it)
    _intercept_index: int | None = None
    #: the parameters bounding ||x|| and |y|, as warnings name them
    bound_names = ("x_bound", "y_bound")

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.epsilon)

    @property
    def replace_factor(self) -> float:
        """2 under replace-one (an element swapped for any other), 1 under add/remove."""
        return 2.0 if self.neighbouring == "replace_one" else 1.0

    # ------------------------------------------------------------------ to implement
    @property
    @abstractmethod
    def weights(self) -> np.ndarray:
        """The released (private) iterate, a fresh array."""

    @abstractmethod
    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """The events of every mechanism this learner runs: each counter, the output
        noise, every noisy statistic (empty when nothing data-dependent is released)."""

    @property
    def privacy(self) -> PrivacyGuarantee:
        """The guarantee of the whole sequence of released iterates, derived from
        :meth:`privacy_events` (window, relation and unit included) by
        :func:`dpol.accounting.compose_guarantee`; never typed by hand."""
        return derived_guarantee(self, self.delta, self.epsilon)

    def dp_event(self) -> dp_accounting.DpEvent:
        """The dp-accounting event of all the mechanisms this learner runs."""
        return compose_dp_event(self.privacy_events())

    @abstractmethod
    def _learn(self, x: np.ndarray, y: float) -> None:
        """One step on a validated, clipped element (``self.t_`` is already advanced)."""

    @abstractmethod
    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """f_t(w) for rows of X, y (the learner's own loss, regulariser included)."""

    def _run(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Released iterates before each step, shape (n, d); vectorized by subclasses."""
        out = np.empty_like(X)
        for i in range(X.shape[0]):
            out[i] = self.weights
            self.t_ += 1
            self._learn(X[i], float(y[i]))
        return out

    # ------------------------------------------------------------------ validation
    def _clip(self, X: np.ndarray, y: np.ndarray, *, copy: bool = True
              ) -> tuple[np.ndarray, np.ndarray, int]:
        """Clip rows of X to l2 norm x_bound and y to [-y_bound, y_bound]; count the rows
        (``copy=False``: X is ours, clipped in place; see ``clip_examples``)."""
        return clip_examples(X, y, self.x_bound, self.y_bound, copy=copy)

    def _bounds_text(self) -> str:
        return f"{self.bound_names[0]}={self.x_bound:g}, {self.bound_names[1]}={self.y_bound:g}"

    def _check_label(self, y: object, name: str = "y") -> float:
        return check_real(name, y)

    # label hooks: a learner with vector labels (PQFTL's ``outputs``) overrides them
    def _check_labels(self, y: object, n: int) -> np.ndarray:
        """The labels of n rows, validated (a fresh array)."""
        return as_vector("y", y, n)

    def _label_over(self, y: float) -> bool:
        """Whether ``_clip`` would clip the label of one element."""
        return abs(y) > self.y_bound

    def _labels_over(self, y: np.ndarray) -> np.ndarray:
        """Which of the labels of n rows ``_clip`` would clip (bool, (n,))."""
        return np.abs(y) > self.y_bound

    def _label_sizes(self, y: object) -> object:
        """The labels' sizes the clipping advice reads (raw labels as given)."""
        return y

    def _check_weights(self, name: str, w: object) -> np.ndarray:
        """A point of the weights' space (a comparator), validated."""
        return as_vector(name, w, self.dim)

    # ------------------------------------------------------------------ the model
    @classmethod
    def _model_kinds(cls) -> tuple[bool, bool]:
        """(keeps a post-processed model, enters releases with the default weights): a
        learner with its own ``predict_one`` (kernel regression, not x . w) keeps none."""
        return (cls.predict_one is OnlineLearner.predict_one,
                cls._release_weights is OnlineLearner._release_weights
                and cls._release_noise_variance is OnlineLearner._release_noise_variance)

    def _release_weights(self, steps: np.ndarray) -> np.ndarray:
        """Weights a_s of the releases after steps s in the model's average."""
        return release_weights(steps)

    def _release_noise_variance(self, steps: np.ndarray) -> np.ndarray:
        """A public bound on the per-coordinate noise variance of the releases after
        steps s, independent across releases (nan: none stated; needed by shrinkage)."""
        return np.full(np.shape(steps), np.nan)

    @property
    def model_weights(self) -> np.ndarray:
        """The post-processed model ``predict_one`` uses (``postprocess``; by default the
        s^2-weighted mean of the releases): a function of the releases only, covered by
        ``privacy`` (:mod:`dpol.learners.postprocess`). ``weights`` is the raw release."""
        return model_weights(self, self.postprocess)

    def predict_one(self, x: object, *, raw: bool = False) -> float | np.ndarray:
        """The model's prediction x . w (no state change; K outputs: an array (K,)).

        By default w is :attr:`model_weights` and a least-squares learner's prediction is
        clipped to [-y_bound, y_bound]; ``raw=True``: the last release ``weights``
        unclipped, the papers' model. Both are post-processing of the releases.
        """
        xv = as_vector("x", x, self.dim)
        out = xv @ self.weights if raw else predict(self, xv[None, :])[0]
        return float(out) if np.ndim(out) == 0 else out

    def learn_one(self, x: object, y: object) -> None:
        """Observe one element; the next released iterate is ``weights``.

        Raises ``InvalidInputError`` for bad input and ``HorizonExceededError`` past the
        horizon; in both cases nothing changes.
        """
        xv = as_vector("x", x, self.dim)
        yv = self._check_label(y)
        if self.t_ >= self.horizon:
            raise HorizonExceededError(f"{type(self).__name__} was calibrated for horizon="
                                       f"{self.horizon} elements; all were seen")
        # _clip's own test (run() clips identically); an in-bound element skips it (~10 us)
        clipped = 0
        if exceeds_l2(xv, self.x_bound) or self._label_over(yv):
            X, Y, clipped = self._clip(xv[None, :], np.array([yv]))
            xv, yv = X[0], (Y[0] if Y.ndim > 1 else float(Y[0]))
            self.n_clipped_ += clipped
        self.t_ += 1
        self._learn(xv, yv)
        if clipped:
            note_clipping(self, bounds=self._bounds_text())
        record_release(self)

    def run(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """Learn from a whole stream; same distribution as the ``learn_one`` loop.

        Parameters
        ----------
        X : array (n, d)
        y : array (n,), or (n, K) for K outputs
        comparator : array (d,) (or (d, K)), optional
            A fixed point (e.g. :func:`dpol.evaluation.best_fixed_point`); when given the
            trace holds the cumulative regret against it.
        """
        return self._run_stream(X, y, comparator)

    def _run_stream(self, X: object, y: object, comparator: object,
                    rows: np.ndarray | None = None) -> Trace:
        """``run``; the model's prequential predictions are of ``rows`` (default: X as
        given; :class:`~dpol.learners.intercept.WithIntercept` passes its lifted rows)."""
        raw_X, raw_y = X, y  # the caller's arrays, untouched: for the clipping advice
        X = as_matrix("X", X, self.dim)
        y = self._check_labels(y, X.shape[0])
        u = None if comparator is None else self._check_weights("comparator", comparator)
        if self.t_ + X.shape[0] > self.horizon:
            raise HorizonExceededError(f"{type(self).__name__}: {X.shape[0]} elements after "
                                       f"{self.t_} exceed horizon={self.horizon}")
        # X is as_matrix's fresh copy, the rows as given: clipped into a second copy only
        # when a row is out of bounds and the rows are predicted on (a copy of a 515,345 x
        # 90 stream cost 0.4-0.8 s in a fresh process, most of it first touches of pages)
        if rows is None:
            rows = X
        X, y, clipped = self._clip(X, y, copy=rows is X)
        self.n_clipped_ += clipped
        weights = self._run(X, y)
        # stacklevel 4: at run's caller
        note_clipping(self, bounds=self._bounds_text(), stacklevel=4, raw=lambda: (
            clip_norms(np.asarray(raw_X, dtype=float)), self._label_sizes(raw_y)))
        model_predictions = record_releases(self, rows, weights)
        losses = self._losses_along(weights, X, y)
        regret = None
        if u is not None:
            regret = np.cumsum(losses - self._loss_value(u, X, y))
        return Trace(weights=weights, losses=losses, predictions=row_dot(X, weights),
                     final_weights=self.weights, privacy=self.privacy,
                     n_clipped=self.n_clipped_, regret=regret,
                     model_predictions=model_predictions)

    def _losses_along(self, weights: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """f_t(weights[t]) for every t, evaluated row by row in one vectorized pass."""
        out = np.empty(X.shape[0])
        for start in range(0, X.shape[0], 65536):
            sl = slice(start, start + 65536)
            out[sl] = self._pointwise_loss(weights[sl], X[sl], y[sl])
        return out

    def _pointwise_loss(self, W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Loss of row i's own iterate on row i (subclasses may vectorize further)."""
        return np.array([self._loss_value(w, x[None, :], np.array([v]))[0]
                         for w, x, v in zip(W, X, y, strict=True)])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(dim={self.dim}, horizon={self.horizon}, "
                f"privacy={self.privacy}, t={self.t_})")
