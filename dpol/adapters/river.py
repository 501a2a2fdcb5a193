"""river-compatible models on dict features around dpol's learners (layer L5).

:class:`RiverRegressor` and :class:`RiverClassifier` follow river's conventions
(``learn_one``, ``predict_one``, ``predict_proba_one`` on dict features; ``seed``); with
the ``river`` extra they subclass river's bases and pass its ``check_estimator``.

The features are the sorted keys of the first ``x`` learned from (the noise is
calibrated for their number); later a missing feature counts as 0 and a new one is
ignored (``n_unknown_features_``). The classifier is binary in river's way by default
(truthy label: +1). The learner fits an intercept by default and predicts with its
post-processed model (:mod:`dpol.learners.postprocess`).

Privacy
-------
``privacy`` is the built learner's guarantee over all its releases, for at most
``horizon`` calls of ``learn_one`` (more raise :class:`~dpol.errors.HorizonExceededError`),
composed with the label centre's and the fallback's Gaussian releases where used.
Predictions are post-processing; rows and labels beyond the public bounds are clipped.
Not covered, for the data holder: the exact counts ``n_clipped_``,
``n_unknown_features_`` and ``centre_.centre.n_clipped``, the rows a centre holds until
its release, and ``features_`` (name features from the schema, not from the data).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._validation import fail
from dpol.adapters._fallback import check_fallback, fallback_seed, with_fallback
from dpol.adapters._multi_class import MULTI_CLASS_LEARNERS
from dpol.adapters._private_prep import label_range
from dpol.adapters._river_centre import CENTRE_ROWS, FirstBlockCentre, check_centre
from dpol.adapters._surface import speak_as, surfaced
from dpol.adapters.registry import (
    DEFAULT_LEARNERS,
    LEARNER_ALIASES,
    LEARNERS,
    check_regression_learner,
    make_learner,
)
from dpol.errors import UnknownFeatureWarning
from dpol.learners._wrapper import innermost
from dpol.learners.intercept import INTERCEPT_SCALING
from dpol.learners.postprocess import label_bound
from dpol.learners.random_features import BANDWIDTH

try:  # river is optional: without it the adapters are plain classes
    from river import base as _river_base

    _Regressor: type = _river_base.Regressor
    _Classifier: type = _river_base.Classifier
except ImportError:  # pragma: no cover - exercised only without the extra
    _Regressor = _Classifier = object

__all__ = ["RiverClassifier", "RiverRegressor"]


class _DictFeatures:
    """Parameters, the lazily built learner and the dict -> vector map."""

    _regression = False

    def __init__(self, learner: str, epsilon: float = 1.0, delta: float | None = None,
                 horizon: int = 10_000, counter: str | None = None, x_bound: float = 1.0,
                 y_bound: float = 1.0, calibration: str = "tight", seed: int | None = None,
                 learner_options: dict | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", random_features: int | None = None,
                 bandwidth: float = BANDWIDTH) -> None:
        self.learner = learner
        self.random_features = random_features
        self.bandwidth = bandwidth
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.postprocess = postprocess
        self.epsilon = epsilon
        self.delta = delta
        self.horizon = horizon
        self.counter = counter
        self.x_bound = x_bound
        self.y_bound = y_bound
        # checked once here, not per row: (c, h), labels within h of the public centre c
        self._label_shift, self._label_half = label_range(y_bound,
                                                          regression=self._regression)
        self.calibration = calibration
        self.seed = seed
        self.learner_options = learner_options
        self.features_: tuple | None = None
        self.learner_ = None
        self.n_unknown_features_ = 0

    def _vector(self, x: dict) -> np.ndarray:
        return np.array([float(x.get(k, 0.0)) for k in self.features_], dtype=np.float64)

    def _build(self, x: dict, epsilon: float, y_bound: float) -> None:
        """The learner on ``epsilon`` and labels within ``y_bound``, its features the keys
        of ``x`` (the first x learned from)."""
        if self._regression:
            check_regression_learner(self.learner, type(self).__name__)
        features = tuple(sorted(x, key=lambda k: (type(k).__name__, str(k))))
        learner = with_fallback(
            lambda share, seed: make_learner(
                self.learner, max(len(features), 1),
                horizon=self.horizon, epsilon=share, delta=self.delta,
                counter=self.counter, x_bound=self.x_bound, y_bound=y_bound,
                calibration=self.calibration, seed=seed, options=self._options(),
                fit_intercept=self.fit_intercept and LEARNERS[self.learner].linear
                if self.learner in LEARNERS else self.fit_intercept,
                intercept_scaling=self.intercept_scaling,
                postprocess=self.postprocess, random_features=self.random_features,
                bandwidth=self.bandwidth),
            fallback=getattr(self, "fallback", False), epsilon=epsilon,
            delta=self.delta, horizon=self.horizon, seed=fallback_seed(self.seed),
            learner_seed=self.seed)
        self.features_ = features if features else ("__bias__",)
        speak_as(learner, type(self).__name__)
        self.learner_ = learner

    def _learn(self, x: dict, y: float) -> None:
        if self.learner_ is None:
            self._build(x, self.epsilon, self._label_half)
        vec = self._vector(x)
        self.learner_.learn_one(vec, y)
        unknown = [k for k in x if k not in self.features_]
        if unknown and not self.n_unknown_features_:  # once: the first time any is left out
            warnings.warn(f"{type(self).__name__} leaves out features it did not see in its "
                          f"first x ({', '.join(map(repr, unknown[:3]))}"
                          f"{', ...' if len(unknown) > 3 else ''}): its dimension and noise "
                          "were fixed then; give every feature in the first x (0 where "
                          "absent)", UnknownFeatureWarning, stacklevel=3)
        self.n_unknown_features_ += len(unknown)

    def _options(self) -> dict | None:
        """The learner's constructor keywords (``learner_options``, a copy)."""
        return None if self.learner_options is None else dict(self.learner_options)

    def _margin(self, x: dict) -> float | np.ndarray:
        if self.learner_ is None:
            return 0.0  # the data-independent start: nothing learned, nothing released
        return self.learner_.predict_one(self._vector(x))  # the post-processed model

    @property
    def privacy(self):
        """The guarantee of the released iterates (None before the first ``learn_one``)."""
        return None if self.learner_ is None else self.learner_.privacy

    @property
    def n_clipped_(self) -> int:
        """Elements clipped to the declared bounds."""
        return 0 if self.learner_ is None else self.learner_.n_clipped_


class RiverRegressor(_DictFeatures, _Regressor):
    """A private online regressor on dict features (river API).

    Parameters
    ----------
    learner : str, default "ridge"
        A learner of :data:`dpol.adapters.LEARNERS`.
    epsilon, delta : float
        ``delta=None``: :func:`dpol.accounting.default_delta` of the horizon.
    horizon : int, default 10000
        Largest number of ``learn_one`` calls; the noise is calibrated for it.
    counter : str, optional
        The counter of learners that use one (default: the learner's own).
    x_bound, y_bound : float
        Bounds on ``||x||`` and ``|y|``; ``y_bound=(lo, hi)``: the labels' public range,
        as :class:`~dpol.adapters.OnlineRegressor`'s (learnt as y - (lo + hi) / 2).
    calibration : {"tight", "paper"}
    seed : int, optional
        Seeds the noise (river's convention; ``privacy`` then says it is private only
        while the seed stays secret). None: fresh OS entropy.
    learner_options : dict, optional
        Constructor keywords of the learner.
    fit_intercept, intercept_scaling, postprocess
        The intercept (linear learners) and the model built from the releases.
    random_features, bandwidth
        As in :class:`~dpol.adapters.OnlineRegressor`.
    centre_budget : float in [0, 1), default 0
        Share of the Gaussian budget spent on the labels' private mean b from the first
        ``centre_rows`` rows, which wait for it (:mod:`dpol.adapters._river_centre`).
    centre_rows : int, default 1000
        The block's rows, enough and representative enough to keep b.

    Examples
    --------
    >>> model = RiverRegressor(horizon=1000, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(1000):
    ...     a, b = rng.normal(size=2) / 2
    ...     model.learn_one({"a": a, "b": b}, 0.5 * a - 0.3 * b)
    >>> round(model.predict_one({"a": 0.5, "b": 0.0}), 3), model.features_
    (0.173, ('a', 'b'))
    """

    _regression = True  # refuses the classification learners

    def __init__(self, learner: str = DEFAULT_LEARNERS["regression"], epsilon: float = 1.0,
                 delta: float | None = None, horizon: int = 10_000, counter: str | None = None,
                 x_bound: float = 1.0, y_bound: float = 1.0, calibration: str = "tight",
                 seed: int | None = None, learner_options: dict | None = None,
                 fit_intercept: bool = True, intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", random_features: int | None = None,
                 bandwidth: float = BANDWIDTH, centre_budget: float = 0.0,
                 centre_rows: int = CENTRE_ROWS) -> None:
        super().__init__(learner, epsilon, delta, horizon, counter, x_bound, y_bound,
                         calibration, seed, learner_options, fit_intercept,
                         intercept_scaling, postprocess, random_features, bandwidth)
        self.centre_budget, self.centre_rows = check_centre(centre_budget, centre_rows,
                                                            learner_options)
        self.centre_ = None  # the FirstBlockCentre, from the first learn_one on

    @surfaced
    def learn_one(self, x: dict, y: float) -> None:
        """Learn from one element; the released iterate moves on (with a centre: the
        first block's rows are held until their mean is released)."""
        y = float(y) - self._label_shift  # a declared range: labels around its centre
        if not self.centre_budget:  # no centre
            self._learn(x, y)
            return
        if self.centre_ is None:
            self.centre_ = FirstBlockCentre(
                self.centre_budget, self.centre_rows, horizon=self.horizon,
                epsilon=self.epsilon, delta=self.delta, y_bound=self._label_half,
                seed=self.seed)
        centre = self.centre_
        if centre.centre is not None:
            self._learn(x, y - centre.centre.value)
        elif centre.hold(x, y):  # the block is whole: release, build, stream it
            rest = centre.release()
            try:
                self._build(centre.held[0][0], rest, centre.learner_bound)
            except BaseException:  # a learner refused: nothing kept, nothing shown
                self.centre_ = None
                raise
            for row, label in centre.held:
                self._learn(row, label - centre.centre.value)
            centre.held = []

    def predict_one(self, x: dict) -> float:
        """The prediction of the model (post-processed releases; plus the centre)."""
        margin = self._margin(x)
        centre = self.centre_
        margin = margin if centre is None or centre.centre is None else centre.predict(margin)
        return margin + self._label_shift  # plus a declared range's centre

    @property
    def privacy(self):
        """The guarantee of the released iterates, with the centre's (None before the
        first release)."""
        if self.centre_ is None or self.learner_ is None:
            return super().privacy
        return self.centre_.guarantee(self.learner_)


class RiverClassifier(_DictFeatures, _Classifier):
    """A private online classifier on dict features (river API).

    Parameters are those of :class:`RiverRegressor`, with ``learner`` defaulting to
    ``"ridge_classifier_rff"`` (least squares on -1 / +1 on x and random features from a
    horizon of 2,000 rows in few dimensions, x alone elsewhere, as
    :class:`~dpol.adapters.OnlineClassifier`),
    and ``classes``: None for bool
    labels (truthy: +1), else the K >= 2 labels, declared up front (K fixes the noise).
    K > 2 classes stream one-hot rows through one Gram matrix (PQFTL's ``outputs=K``).
    ``fallback`` (True, False or ``"auto"``, the default): as
    :class:`~dpol.adapters.OnlineClassifier`'s.

    Notes
    -----
    The fallback runs the learner inside
    :class:`~dpol.learners.trivial_fallback.WithTrivialFallback` on 70% of the Gaussian
    budget, 40% on a short two-class stream, the prior alone on a very short one (any K)
    (``fallback_plan``: a ``PriorOnlyWarning`` says so; ``"auto"``: wherever the
    learner allows it, for K > 2 classes only there); ``learner_.uses_model`` says
    whether the model or the prior predicts, ``learner_.learner_from`` after which row the
    learner learns (the rows before feed the prior alone, on the whole budget).
    ``privacy`` includes the fallback's share (docs/benchmarks/trivial_fallback.md).

    Examples
    --------
    >>> model = RiverClassifier(epsilon=10.0, horizon=2000, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(2000):
    ...     a, b = rng.normal(size=2) / 2
    ...     model.learn_one({"a": a, "b": b}, a > b)
    >>> model.predict_one({"a": 0.5, "b": -0.5}), model.predict_one({"a": -0.5, "b": 0.5})
    (True, False)
    """

    def __init__(self, learner: str = DEFAULT_LEARNERS["classification"],
                 epsilon: float = 1.0, delta: float | None = None, horizon: int = 10_000,
                 counter: str | None = None, x_bound: float = 1.0, y_bound: float = 1.0,
                 calibration: str = "tight", seed: int | None = None,
                 learner_options: dict | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", random_features: int | None = None,
                 bandwidth: float = BANDWIDTH, classes: tuple | None = None,
                 fallback: bool | str = "auto") -> None:
        super().__init__(learner, epsilon, delta, horizon, counter, x_bound, y_bound,
                         calibration, seed, learner_options, fit_intercept,
                         intercept_scaling, postprocess, random_features, bandwidth)
        self.fallback = check_fallback(fallback)
        if classes is not None:
            classes = tuple(classes)
            if len(classes) < 2 or len(set(classes)) != len(classes):
                raise fail("classes", "be at least 2 distinct labels", classes)
            name = LEARNER_ALIASES.get(learner, learner) if isinstance(learner, str) else None
            if len(classes) > 2 and name not in MULTI_CLASS_LEARNERS:
                raise fail("learner", f"fit {len(classes)} classes: a ridge classifier "
                           "(PQFTL's outputs)", learner)
        self.classes = classes

    @property
    def _multiclass(self) -> bool:  # river's tag
        return self.classes is not None and len(self.classes) > 2

    def _options(self) -> dict | None:
        options = super()._options()
        if self._multiclass:  # K outputs on one Gram matrix
            options = {**(options or {}), "outputs": len(self.classes)}
        return options

    @surfaced
    def learn_one(self, x: dict, y: object) -> None:
        """Learn from one element; a truthy label is +1, a falsy one -1 (with
        ``classes``: ``classes[1]`` +1, or the one-hot row of y for K > 2)."""
        if self.classes is None:
            self._learn(x, 1.0 if y else -1.0)
            return
        if y not in self.classes:
            raise fail("y", f"be one of classes {list(self.classes)}", y)
        if self._multiclass:
            self._learn(x, np.array([float(y == c) for c in self.classes]))
        else:
            self._learn(x, 1.0 if y == self.classes[1] else -1.0)

    def predict_proba_one(self, x: dict) -> dict:
        """``{False: 1 - p, True: p}`` (``classes[0]``, ``classes[1]`` with ``classes``):
        p the logistic link of the model's margin m, or for a least-squares learner (m
        estimates E[y | x] = 2 p - 1) p = (1 + m) / 2, m clipped to [-1, 1]. For K > 2
        classes, the K margins (least squares on one-hot rows estimates P(k | x)) clipped
        to [0, 1] and normalised (uniform where all are 0)."""
        m = self._margin(x)
        if self._multiclass:
            p = np.clip(np.broadcast_to(m, (len(self.classes),)), 0.0, 1.0)
            p = p / p.sum() if p.sum() > 0 else np.full(len(self.classes),
                                                          1.0 / len(self.classes))
            return dict(zip(self.classes, p.tolist(), strict=True))
        inner = innermost(self.learner_)
        if inner is not None and label_bound(inner) is not None:
            p = 0.5 * (1.0 + min(1.0, max(-1.0, m)))
        else:
            p = 0.5 * (1.0 + math.tanh(0.5 * m))
        no, yes = (False, True) if self.classes is None else self.classes
        return {no: 1.0 - p, yes: p}

    def predict_one(self, x: dict) -> object:
        """True where the released margin is positive (``classes[1]`` with ``classes``;
        for K > 2 the class of the largest margin, the first before any learning)."""
        m = self._margin(x)
        if self._multiclass:
            return self.classes[int(np.argmax(np.broadcast_to(m, (len(self.classes),))))]
        positive = m > 0.0
        return positive if self.classes is None else self.classes[int(positive)]
