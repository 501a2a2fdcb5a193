"""river-compatible models on dict features around dpol's learners (layer L5).

:class:`RiverRegressor` and :class:`RiverClassifier` follow river's conventions:
``learn_one(x, y)`` and ``predict_one(x)`` (``predict_proba_one(x)`` for the classifier)
on ``x`` a dict of numeric features, randomness through ``seed``. With river installed
(the ``river`` extra) they are ``river.base.Regressor`` / ``river.base.Classifier``
subclasses and pass ``river.checks.check_estimator``; without it they work alone.

The features are fixed at first sight: the keys of the first ``x`` learned from, in
sorted order, make the learner's dimension (the noise is calibrated for it). Later, a
missing feature counts as 0 and a new one is ignored (counted in
``n_unknown_features_``). The classifier is binary in river's way: a truthy label is
+1, a falsy one -1, and ``predict_proba_one`` returns ``{False: 1 - p, True: p}``.

Privacy
-------
``privacy`` is the guarantee of the built learner over the whole sequence of released
iterates, for at most ``horizon`` calls of ``learn_one`` (more raise
:class:`~dpol.errors.HorizonExceededError`). Predictions are post-processing of the last
release. The bounds are public: ``||x|| > x_bound`` and ``|y| > y_bound`` are clipped and
counted (``n_clipped_``).
"""

from __future__ import annotations

import math

import numpy as np

from dpol.adapters.registry import make_learner

try:  # river is optional: without it the adapters are plain classes
    from river import base as _river_base

    _Regressor: type = _river_base.Regressor
    _Classifier: type = _river_base.Classifier
except ImportError:  # pragma: no cover - exercised only without the extra
    _Regressor = _Classifier = object

__all__ = ["RiverClassifier", "RiverRegressor"]


class _DictFeatures:
    """Parameters, the lazily built learner and the dict -> vector map."""

    def __init__(self, learner: str, epsilon: float = 1.0, delta: float = 1e-5,
                 horizon: int = 10_000, counter: str | None = None, x_bound: float = 1.0,
                 y_bound: float = 1.0, calibration: str = "tight", seed: int | None = None,
                 learner_options: dict | None = None) -> None:
        self.learner = learner
        self.epsilon = epsilon
        self.delta = delta
        self.horizon = horizon
        self.counter = counter
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.calibration = calibration
        self.seed = seed
        self.learner_options = learner_options
        self.features_: tuple | None = None
        self.learner_ = None
        self.n_unknown_features_ = 0

    def _vector(self, x: dict) -> np.ndarray:
        return np.array([float(x.get(k, 0.0)) for k in self.features_], dtype=np.float64)

    def _learn(self, x: dict, y: float) -> None:
        if self.learner_ is None:
            features = tuple(sorted(x, key=lambda k: (type(k).__name__, str(k))))
            learner = make_learner(
                self.learner, max(len(features), 1),
                horizon=self.horizon, epsilon=self.epsilon, delta=self.delta,
                counter=self.counter, x_bound=self.x_bound, y_bound=self.y_bound,
                calibration=self.calibration, seed=self.seed,
                options=None if self.learner_options is None else dict(self.learner_options))
            self.features_ = features if features else ("__bias__",)
            self.learner_ = learner
        vec = self._vector(x)
        self.learner_.learn_one(vec, y)
        self.n_unknown_features_ += sum(1 for k in x if k not in self.features_)

    def _margin(self, x: dict) -> float:
        if self.learner_ is None:
            return 0.0  # the data-independent start: nothing learned, nothing released
        return self.learner_.predict_one(self._vector(x))

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
    learner : str, default "pqftl"
        A learner of :data:`dpol.adapters.LEARNERS`.
    epsilon, delta : float
    horizon : int, default 10000
        Largest number of ``learn_one`` calls; the noise is calibrated for it.
    counter : str, optional
    x_bound, y_bound : float
    calibration : {"tight", "paper"}
    seed : int, optional
        Seeds the noise (river's convention).
    learner_options : dict, optional
        Constructor keywords of the learner.

    Examples
    --------
    >>> model = RiverRegressor(horizon=1000, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> for _ in range(1000):
    ...     a, b = rng.normal(size=2) / 2
    ...     model.learn_one({"a": a, "b": b}, 0.5 * a - 0.3 * b)
    >>> round(model.predict_one({"a": 0.5, "b": 0.0}), 3), model.features_
    (0.05, ('a', 'b'))
    """

    def __init__(self, learner: str = "pqftl", epsilon: float = 1.0, delta: float = 1e-5,
                 horizon: int = 10_000, counter: str | None = None, x_bound: float = 1.0,
                 y_bound: float = 1.0, calibration: str = "tight", seed: int | None = None,
                 learner_options: dict | None = None) -> None:
        super().__init__(learner, epsilon, delta, horizon, counter, x_bound, y_bound,
                         calibration, seed, learner_options)

    def learn_one(self, x: dict, y: float) -> None:
        """Learn from one element; the released iterate moves on."""
        self._learn(x, float(y))

    def predict_one(self, x: dict) -> float:
        """The prediction of the last released model."""
        return self._margin(x)


class RiverClassifier(_DictFeatures, _Classifier):
    """A private online binary classifier on dict features (river API, bool labels).

    Parameters are those of :class:`RiverRegressor`, with ``learner`` defaulting to
    ``"igd"`` (logistic).

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

    def __init__(self, learner: str = "igd", epsilon: float = 1.0, delta: float = 1e-5,
                 horizon: int = 10_000, counter: str | None = None, x_bound: float = 1.0,
                 y_bound: float = 1.0, calibration: str = "tight", seed: int | None = None,
                 learner_options: dict | None = None) -> None:
        super().__init__(learner, epsilon, delta, horizon, counter, x_bound, y_bound,
                         calibration, seed, learner_options)

    def learn_one(self, x: dict, y: object) -> None:
        """Learn from one element; a truthy label is +1, a falsy one -1."""
        self._learn(x, 1.0 if y else -1.0)

    def predict_proba_one(self, x: dict) -> dict:
        """``{False: 1 - p, True: p}``, p the logistic link of the released margin."""
        p = 0.5 * (1.0 + math.tanh(0.5 * self._margin(x)))
        return {False: 1.0 - p, True: p}

    def predict_one(self, x: dict) -> bool:
        """True where the released margin is positive."""
        return self._margin(x) > 0.0
