"""scikit-learn estimators around dpol's learners (layer L5; the ``sklearn`` extra).

:class:`OnlineRegressor` and :class:`OnlineClassifier` stream the rows of ``fit`` (or of
successive ``partial_fit`` calls) through a learner of :data:`dpol.adapters.LEARNERS`,
in order, one element at a time. ``coef_`` is the last released iterate and ``predict``
is post-processing of it, so everything the fitted estimator exposes is covered by
``privacy_``. Parameters are stored as passed and checked in ``fit`` (scikit-learn's
convention); learned state ends in ``_``.

Privacy
-------
``privacy_`` is the learner's guarantee over the whole sequence of released iterates
(replace-one neighbouring streams unless ``learner_options`` says otherwise), for a
stream of at most ``horizon`` rows: ``fit`` calibrates for its own number of rows,
``partial_fit`` for ``horizon`` (default :data:`DEFAULT_STREAM_HORIZON`); more rows raise
:class:`~dpol.errors.HorizonExceededError`. The declared bounds are public: rows with
``||x|| > x_bound`` (and labels with ``|y| > y_bound``) are clipped, as the proof needs,
and counted in ``n_clipped_``. Scale features with public constants, not with statistics
of the private data (a fitted scaler is not private).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dpol.adapters.registry import LEARNERS, make_learner
from dpol.learners import PrivateKernelRegression

__all__ = ["DEFAULT_STREAM_HORIZON", "OnlineClassifier", "OnlineRegressor"]

#: horizon of a stream started by ``partial_fit`` when ``horizon`` is None
DEFAULT_STREAM_HORIZON = 2**16


class _OnlineEstimator(BaseEstimator):
    """Shared parameters, learner construction, streaming and prediction."""

    def _store(self, params: dict) -> None:
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    @property
    def _learner_name(self) -> str:
        return self.learner

    def _seed(self) -> object:
        if isinstance(self.random_state, Integral) and not isinstance(self.random_state, bool):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

    def _start(self, n_features: int, horizon: int) -> None:
        self.learner_ = make_learner(
            self._learner_name, n_features, horizon=horizon, epsilon=self.epsilon,
            delta=self.delta, counter=self.counter, x_bound=self.x_bound,
            y_bound=self.y_bound, calibration=self.calibration, seed=self._seed(),
            options=None if self.learner_options is None else dict(self.learner_options))

    def _stream(self, X: np.ndarray, y: np.ndarray) -> None:
        self.learner_.run(X, y)
        self.coef_ = self.learner_.weights
        self.privacy_ = self.learner_.privacy
        self.n_clipped_ = self.learner_.n_clipped_
        self.t_ = self.learner_.t

    def _margin(self, X: object) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if isinstance(self.learner_, PrivateKernelRegression):
            return np.array([self.learner_.predict_one(x) for x in X])
        return X @ self.coef_


class OnlineRegressor(RegressorMixin, _OnlineEstimator):
    """A private online regressor with ``fit``, ``partial_fit`` and ``predict``.

    Parameters
    ----------
    learner : str, default "pqftl"
        A regression learner of :data:`dpol.adapters.LEARNERS`.
    epsilon, delta : float
        The target guarantee (``epsilon=inf``: the non-private twin, with a warning).
    horizon : int, optional
        The stream length the noise is calibrated for (see the module docstring).
    counter : str, optional
        The counter of learners that use one.
    x_bound, y_bound : float
        Declared bounds on ``||x||`` and ``|y|``.
    calibration : {"tight", "paper"}
    random_state : int, RandomState or None
        Seeds the noise.
    learner_options : dict, optional
        Constructor keywords of the learner.

    Attributes
    ----------
    learner_ : OnlineLearner
    coef_ : array (n_features,)
        The last released iterate (feature weights for ``learner="kernel"``).
    privacy_ : PrivacyGuarantee
    n_clipped_, t_ : int
        Rows clipped to the bounds, rows streamed.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) / 2; y = X @ [0.5, -0.3, 0.2]
    >>> reg = OnlineRegressor(epsilon=1.0, random_state=0).fit(X, y)
    >>> str(reg.privacy_), np.round(reg.coef_, 2)
    ('(1, 1e-05)-DP, replace_one, unit: one stream element', array([ 0.09, -0.03,  0.04]))
    """

    def __init__(self, learner: str = "pqftl", *, epsilon: float = 1.0, delta: float = 1e-5,
                 horizon: int | None = None, counter: str | None = None,
                 x_bound: float = 1.0, y_bound: float = 1.0, calibration: str = "tight",
                 random_state: object = None, learner_options: dict | None = None) -> None:
        self._store(locals())

    def fit(self, X: object, y: object) -> OnlineRegressor:
        """Stream the rows of X, y in order through a fresh learner (horizon: the rows)."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self._start(X.shape[1], self.horizon if self.horizon is not None else X.shape[0])
        self._stream(X, y)
        return self

    def partial_fit(self, X: object, y: object) -> OnlineRegressor:
        """Stream more rows; the first call starts a learner calibrated for ``horizon``."""
        first = not hasattr(self, "learner_")
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, reset=first)
        if first:
            self._start(X.shape[1], self.horizon or DEFAULT_STREAM_HORIZON)
        self._stream(X, y)
        return self

    def predict(self, X: object) -> np.ndarray:
        """Predictions of the last released model (post-processing: no privacy cost)."""
        return self._margin(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # noise for privacy, by design
        return tags


def _has_proba(estimator: OnlineClassifier) -> bool:
    name = estimator._learner_name
    return name in LEARNERS and LEARNERS[name].task == "classification"


class OnlineClassifier(ClassifierMixin, _OnlineEstimator):
    """A private online binary classifier; labels become -1 / +1 for the learner.

    Parameters are those of :class:`OnlineRegressor`, with ``learner`` defaulting to
    ``"igd"`` (logistic). ``predict_proba`` is the logistic link of the released margin,
    for the logistic learners (``igd``, ``pol``).

    Attributes
    ----------
    classes_ : array (2,)
        ``classes_[1]`` is the +1 class.
    learner_, coef_, privacy_, n_clipped_, t_
        As :class:`OnlineRegressor`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2)) / 2; y = np.where(X[:, 0] > X[:, 1], "a", "b")
    >>> clf = OnlineClassifier(epsilon=10.0, random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), round(clf.score(X, y), 2)
    (['a', 'b'], 0.89)
    """

    def __init__(self, learner: str = "igd", *, epsilon: float = 1.0, delta: float = 1e-5,
                 horizon: int | None = None, counter: str | None = None,
                 x_bound: float = 1.0, y_bound: float = 1.0, calibration: str = "tight",
                 random_state: object = None, learner_options: dict | None = None) -> None:
        self._store(locals())

    def _labels(self, y: np.ndarray) -> np.ndarray:
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y holds labels not in classes_ {self.classes_.tolist()}: "
                             f"{unknown.tolist()}")
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _set_classes(self, classes: object) -> None:
        classes = np.unique(classes)
        if classes.size > 2:
            raise ValueError("Only binary classification is supported. The target has "
                             f"{classes.size} classes.")
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of 2 classes; the data "
                             "holds only one class")
        self.classes_ = classes

    def fit(self, X: object, y: object) -> OnlineClassifier:
        """Stream the rows of X, y in order through a fresh learner (horizon: the rows)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self._set_classes(y)
        self._start(X.shape[1], self.horizon if self.horizon is not None else X.shape[0])
        self._stream(X, self._labels(y))
        return self

    def partial_fit(self, X: object, y: object, classes: object = None) -> OnlineClassifier:
        """Stream more rows; the first call needs ``classes`` unless y shows both."""
        first = not hasattr(self, "learner_")
        X, y = validate_data(self, X, y, dtype=np.float64, reset=first)
        check_classification_targets(y)
        if first:
            self._set_classes(y if classes is None else classes)
        labels = self._labels(y)
        if first:
            self._start(X.shape[1], self.horizon or DEFAULT_STREAM_HORIZON)
        self._stream(X, labels)
        return self

    def decision_function(self, X: object) -> np.ndarray:
        """The released margin x . w (positive: ``classes_[1]``)."""
        return self._margin(X)

    def predict(self, X: object) -> np.ndarray:
        """``classes_[1]`` where the margin is positive, else ``classes_[0]``."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    @available_if(_has_proba)
    def predict_proba(self, X: object) -> np.ndarray:
        """[1 - p, p] with p = 1 / (1 + exp(-margin)) (logistic learners only)."""
        p = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X: object) -> np.ndarray:
        """Log of :meth:`predict_proba`, computed stably."""
        m = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, m), -np.logaddexp(0.0, -m)])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # noise for privacy, by design
        tags.classifier_tags.multi_class = False
        return tags
