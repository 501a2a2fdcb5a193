"""scikit-learn estimators around dpol's learners (layer L5; the ``sklearn`` extra).

:class:`OnlineRegressor` and :class:`OnlineClassifier` stream the rows of ``fit`` (or of
``partial_fit`` calls) in order through a learner of :data:`dpol.adapters.LEARNERS`, with
an intercept by default (:class:`~dpol.learners.intercept.WithIntercept`). ``coef_`` /
``intercept_`` are its post-processed model (:mod:`dpol.learners.postprocess`); the raw
last release stays in ``learner_.weights``. Parameters are stored as passed and checked
in ``fit``; learned state ends in ``_``. A regressor first releases the labels' mean b
(``centre_budget``) and fits y - b, so a noisy model shrinks towards the trivial one
(:mod:`dpol.adapters._private_prep`). The defaults were chosen on held-out scores
(:mod:`dpol.adapters.registry`).

Privacy
-------
``privacy_`` composes the learner's guarantee over all its releases with the releases
made before it (the labels' mean, a Gaussian of sensitivity 2 y_bound, or hi - lo for a
declared range (lo, hi): a public shift; ``"auto"`` bounds;
``"private"`` scaling), exactly (:func:`dpol.accounting.events.compose_guarantee`;
replace-one unless ``learner_options`` says otherwise), for at most ``horizon`` rows
(``fit``: its own rows; more raise :class:`~dpol.errors.HorizonExceededError`). Rows and
labels beyond the public bounds are clipped. The intercept and random features are public
maps inside the norm bound; the model and predictions are post-processing. Not covered,
for the data holder only: ``n_clipped_`` and the clipping warning, ``classes_`` (treated
as public), and a regressor's refusal of labels mostly above ``y_bound``. Each ``fit`` is
one guarantee: refits, folds and grid searches spend it again, uncomposed. Scale features
with public constants, not with a fitted scaler.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from dpol.adapters._multi_class import MULTI_CLASS_LEARNERS
from dpol.adapters._online_estimator import OnlineEstimator, has_proba
from dpol.adapters._private_prep import CENTRE_BUDGET, CLASSIFIER_CENTRE_BUDGET
from dpol.adapters._surface import surfaced
from dpol.adapters.registry import DEFAULT_LEARNERS
from dpol.errors import InvalidInputError
from dpol.learners.intercept import INTERCEPT_SCALING
from dpol.learners.random_features import BANDWIDTH

__all__ = ["DEFAULT_STREAM_HORIZON", "OnlineClassifier", "OnlineRegressor"]

#: horizon of a stream started by ``partial_fit`` when ``horizon`` is None
DEFAULT_STREAM_HORIZON = 2**16


class OnlineRegressor(RegressorMixin, OnlineEstimator):
    """A private online regressor with ``fit``, ``partial_fit`` and ``predict``.

    Parameters
    ----------
    learner : str, default "ridge"
        A regression learner of :data:`dpol.adapters.LEARNERS`.
    epsilon, delta : float
        The target guarantee (``epsilon=inf``: the non-private twin, with a warning;
        ``delta=None``: :func:`dpol.accounting.default_delta`).
    horizon : int, optional
        The stream length the noise is calibrated for (see the module docstring).
    counter : str, optional
        The counter of learners that use one (default: the learner's own).
    x_bound, y_bound : float or "auto"
        Bounds on ``||x||`` and ``|y|``, or ``"auto"``: their 0.95 quantiles released
        privately (:mod:`dpol.datasets.private_bounds`; the ``opendp`` extra).
        ``y_bound=(lo, hi)`` declares the labels' public range instead: the learner fits
        y - (lo + hi) / 2 within (hi - lo) / 2, far less noise than ``|y| <= hi`` for
        labels far from 0 (a fit refused for labels mostly beyond ``y_bound`` names one).
    calibration : {"tight", "paper"}
    random_state : int, RandomState or None
        None: fresh OS entropy. A seed makes ``privacy_`` private only while it stays
        secret (OpenDP's quantiles are never seeded).
    learner_options : dict, optional
        Constructor keywords of the learner.
    fit_intercept : bool, default True
        A constant feature inside the norm bound, for the linear learners (not ``kernel``).
    intercept_scaling : float
        The constant feature, in units of ``x_bound`` (:class:`WithIntercept`).
    random_features : int, optional
        D random Fourier features of x
        (:class:`~dpol.learners.random_features.WithRandomFeatures`); None: the learner's.
    bandwidth : float
        The kernel's bandwidth with ``random_features``, in units of ``x_bound``.
    postprocess : {"average", "shrink", "last"}
        The model built from the releases (:mod:`dpol.learners.postprocess`).
    scaling : {None, "private"}
        ``"private"``: centre and scale features (and label) by private quantiles
        (:func:`dpol.datasets.private_scaling.private_scaling`; needs ``"auto"`` bounds).
    bounds_budget : float in (0, 1)
        Share of ``epsilon`` spent on ``"auto"`` bounds and ``"private"`` scaling;
        ``privacy_`` composes both. Too few rows for such an estimate is refused.
    centre_budget : float in [0, 1)
        Share of the Gaussian budget spent on the labels' private mean b, which the
        learner fits around (:mod:`dpol.adapters._private_prep`); 0: none.

    Attributes
    ----------
    learner_ : OnlineLearner
        Its ``weights`` is the raw last release (with the intercept's coordinate last).
    coef_ : array (n_features,)
        The post-processed model's weights.
    intercept_ : float
        The post-processed intercept plus the labels' released mean.
    privacy_ : PrivacyGuarantee
    n_clipped_, t_ : int
        Rows clipped to the bounds (of those the learner learnt: a classifier's trivial
        fallback gives its first rows to the class prior alone), rows streamed.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) / 2; y = X @ [0.5, -0.3, 0.2] + 0.3
    >>> reg = OnlineRegressor(epsilon=1.0, random_state=0).fit(X, y)
    >>> print(reg.privacy_)  # doctest: +NORMALIZE_WHITESPACE
    (1, 1e-05)-DP, replace_one, unit: one stream element; seeded noise: private only
    while the seed stays secret
    >>> np.round(reg.coef_, 2), round(reg.intercept_, 2)
    (array([ 0.33, -0.13,  0.11]), 0.29)
    >>> grams = 200 + 100 * y  # labels far from 0: declare their range
    >>> reg = OnlineRegressor(epsilon=1.0, y_bound=(100, 300), random_state=0).fit(X, grams)
    >>> round(reg.score(X, grams), 2)
    0.83
    """

    def __init__(self, learner: str = DEFAULT_LEARNERS["regression"], *,
                 epsilon: float = 1.0, delta: float | None = None, horizon: int | None = None,
                 counter: str | None = None, x_bound: float | str = 1.0, y_bound: float | str = 1.0,
                 calibration: str = "tight", random_state: object = None,
                 learner_options: dict | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", scaling: str | None = None,
                 bounds_budget: float = 0.1, random_features: int | None = None,
                 bandwidth: float = BANDWIDTH, centre_budget: float = CENTRE_BUDGET) -> None:
        self._store(locals())

    @surfaced
    def fit(self, X: object, y: object) -> OnlineRegressor:
        """Stream the rows of X, y in order through a fresh learner (horizon: the rows)."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self._start(X, y, self.horizon if self.horizon is not None else X.shape[0], True,
                    True)
        self._stream(X, y)
        return self

    @surfaced
    def partial_fit(self, X: object, y: object) -> OnlineRegressor:
        """Stream more rows; the first call starts a learner calibrated for ``horizon``."""
        first = not hasattr(self, "learner_")
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, reset=first)
        if first:
            self._start(X, y, self.horizon or DEFAULT_STREAM_HORIZON, True, False)
        self._stream(X, y)
        return self

    def predict(self, X: object) -> np.ndarray:
        """X @ coef_ + intercept_, clipped to ``y_bound`` for a least-squares learner
        (post-processing: no privacy cost)."""
        margin = self._margin(X)  # checks that the estimator is fitted
        return self.prep_.inverse_y(margin)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # noise for privacy, by design
        return tags


class OnlineClassifier(ClassifierMixin, OnlineEstimator):
    """A private online classifier: two classes become -1 / +1 for the learner, K > 2
    classes one-hot rows that share one Gram matrix (PQFTL's ``outputs=K``: the noise
    and the guarantee of two classes).

    Parameters are those of :class:`OnlineRegressor`, with ``learner`` defaulting to
    ``"ridge_classifier_rff"``: least squares on -1 / +1 on [0.8 x / x_bound, 0.6 phi(x)],
    x beside 32 random Fourier features
    (:class:`~dpol.learners.random_features.WithRandomFeatures`), on a horizon of 2,000
    rows or more in few enough dimensions (:func:`~dpol.adapters.registry.uses_features`;
    on x alone elsewhere, where the features' noise costs more than the kernel gains);
    ``"ridge_classifier"`` is the linear model alone.
    ``predict_proba``: the logistic link of the margin, for the logistic learners (``igd``,
    ``pol``; two classes). One more parameter, ``fallback`` (True, False or ``"auto"``,
    the default): predict the private class prior wherever the model does not privately
    beat it (Notes).

    Attributes
    ----------
    classes_ : array (K,)
        For two classes, ``classes_[1]`` is the +1 class.
    coef_ : array (p,), or (K, p) for K > 2 classes
        The weights on the learner's rows: p = d + 32 with the default learner's
        features, d on x alone.
    learner_, intercept_, privacy_, n_clipped_, t_
        As :class:`OnlineRegressor`; with the fallback and the prior chosen, ``coef_`` is
        0 and ``intercept_`` the prior's margin.

    Notes
    -----
    The fallback runs the learner inside
    :class:`~dpol.learners.trivial_fallback.WithTrivialFallback` on 70% of the Gaussian
    budget (of mu^2; the prior 20%, the gate 10%): the model predicts where its errors
    are privately below the prior's, or where the prior itself is a coin flip (within
    one of its stds of the boundary). On a short two-class stream (fewer than about 365
    rows at epsilon 1, 2,955 at 0.1: ``fallback_plan``, from public quantities) the prior
    takes 50% and the model predicts only where its errors are lower by one of the
    gate's public stds (on a longer stream, privately lower at all suffices); below
    892 rows at 0.1 (109 at 1), of two classes or more, the prior predicts alone, on 90%,
    and a :class:`~dpol.errors.PriorOnlyWarning` says so. Over the first 127 rows (a quarter of
    a shorter stream) the gate is silent and the prior takes its budget too: the prior's
    sign decides those rows. Where they are too few for the prior (at epsilon 0.1; at 1
    below 344 rows) the learner starts later, at most a quarter into the stream (after
    1,023 rows at 0.1 on a long one: ``learner_start``): the rows before feed the prior
    alone, on the whole budget, and ``learner_.learner_from`` says where.
    ``"auto"`` (the default) runs it wherever the learner allows it (replace-one,
    Gaussian noise), else the learner alone on the whole budget; ``learner_`` says
    which. Chosen on the utility benchmark's tuning sets: it holds the trivial model
    where the model loses to it (small or imbalanced streams, small epsilon), at a small
    cost where the model wins (docs/benchmarks/trivial_fallback.md); ``fallback=False``
    gives the model the whole budget. K > 2 classes get it only on a stream too short
    for the gate (the prior alone): on longer ones the learner alone on the whole budget
    scored higher on every multiclass set measured (wine: 66.1% held out against 60.2%
    at epsilon 1).
    With ``centre_budget > 0`` its gate judges the classes the estimator predicts (the
    centre b plus the learner's margin).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2)) / 2; y = np.where(X[:, 0] > X[:, 1] + 0.5, "a", "b")
    >>> clf = OnlineClassifier(epsilon=1.0, random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), round(clf.score(X, y), 2), round(float(np.mean(y == "b")), 2)
    (['a', 'b'], 0.98, 0.76)
    """

    def __init__(self, learner: str = DEFAULT_LEARNERS["classification"], *,
                 epsilon: float = 1.0, delta: float | None = None, horizon: int | None = None,
                 counter: str | None = None, x_bound: float | str = 1.0, y_bound: float | str = 1.0,
                 calibration: str = "tight", random_state: object = None,
                 learner_options: dict | None = None, fit_intercept: bool = True,
                 intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", scaling: str | None = None,
                 bounds_budget: float = 0.1, random_features: int | None = None,
                 bandwidth: float = BANDWIDTH,
                 centre_budget: float = CLASSIFIER_CENTRE_BUDGET,
                 fallback: bool | str = "auto") -> None:
        self._store(locals())

    def _labels(self, y: np.ndarray) -> np.ndarray:
        """-1 / +1 for two classes; one-hot rows for K > 2."""
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y holds labels not in classes_ {self.classes_.tolist()}: "
                             f"{unknown.tolist()}")
        if self.classes_.size > 2:
            return (y[:, None] == self.classes_[None, :]).astype(np.float64)
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _set_classes(self, classes: object) -> None:
        classes = np.unique(classes)
        if classes.size > 2 and not _multi_class(self._learner_name):
            # scikit-learn's words for a binary estimator, then which learners fit K
            raise InvalidInputError(
                f"Only binary classification is supported by learner {self.learner!r}. "
                f"The target has {classes.size} classes: learner must be one of "
                f"{', '.join(MULTI_CLASS_LEARNERS)} for them")
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of 2 classes in y; the "
                             f"data holds only one class ({classes.tolist()})")
        self.classes_ = classes

    def _learner_options(self) -> dict | None:
        options = super()._learner_options()
        if self.classes_.size > 2:  # K outputs on one Gram matrix (PQFTL's outputs)
            options = {**(options or {}), "outputs": int(self.classes_.size)}
        return options

    @surfaced
    def fit(self, X: object, y: object) -> OnlineClassifier:
        """Stream the rows of X, y in order through a fresh learner (horizon: the rows)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self._set_classes(y)
        labels = self._labels(y)
        self._start(X, labels, self.horizon if self.horizon is not None else X.shape[0],
                    False, True)
        self._stream(X, labels)
        return self

    @surfaced
    def partial_fit(self, X: object, y: object, classes: object = None) -> OnlineClassifier:
        """Stream more rows; the first call needs ``classes`` unless y shows both."""
        first = not hasattr(self, "learner_")
        X, y = validate_data(self, X, y, dtype=np.float64, reset=first)
        check_classification_targets(y)
        if first:
            self._set_classes(y if classes is None else classes)
        labels = self._labels(y)
        if first:
            self._start(X, labels, self.horizon or DEFAULT_STREAM_HORIZON, False, False)
        self._stream(X, labels)
        return self

    def decision_function(self, X: object) -> np.ndarray:
        """The model's margin X @ coef_ + intercept_ (positive: ``classes_[1]``; clipped
        to ``y_bound`` for a least-squares learner); (n, K) for K > 2 classes."""
        return self._margin(X)

    def predict(self, X: object) -> np.ndarray:
        """``classes_[1]`` where the margin is positive, else ``classes_[0]``; for K > 2
        the class of the largest margin."""
        margin = self.decision_function(X)
        if margin.ndim == 2:
            return self.classes_[np.argmax(margin, axis=1)]
        return self.classes_[(margin > 0).astype(int)]

    @available_if(has_proba)
    def predict_proba(self, X: object) -> np.ndarray:
        """[1 - p, p] with p = 1 / (1 + exp(-margin)) (logistic learners only)."""
        p = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    @available_if(has_proba)
    def predict_log_proba(self, X: object) -> np.ndarray:
        """Log of :meth:`predict_proba`, computed stably."""
        m = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, m), -np.logaddexp(0.0, -m)])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # noise for privacy, by design
        tags.classifier_tags.multi_class = _multi_class(self._learner_name)
        return tags


def _multi_class(name: object) -> bool:
    return name in MULTI_CLASS_LEARNERS
