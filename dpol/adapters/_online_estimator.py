"""The machinery the scikit-learn estimators share: parameters, learner, stream, margin.

Kept apart from :mod:`dpol.adapters.sklearn`, which holds the two public estimators and
their documentation (the Privacy section is there).
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from dpol._clip_warning import far_from_zero, label_offset_advice, suggested_range
from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.adapters._fallback import check_fallback, with_fallback
from dpol.adapters._private_prep import label_range, prepare
from dpol.adapters._surface import speak_as
from dpol.adapters.registry import (
    LEARNER_ALIASES,
    LEARNERS,
    check_regression_learner,
    make_learner,
)
from dpol.errors import HorizonExceededError, LabelOffsetWarning
from dpol.learners import PrivateKernelRegression
from dpol.learners._wrapper import predict_rows
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import WithRandomFeatures
from dpol.learners.trivial_fallback import WithTrivialFallback
from dpol.losses import LogisticLoss, Regularized

__all__ = ["REFUSE_CLIPPED_LABELS", "OnlineEstimator", "has_proba"]

#: the share of labels above a declared ``y_bound`` from which a regressor refuses to fit:
#: measured on river's ChickWeights (labels 35-373, y_bound 1: all clipped), held-out
#: R^2 -2.9 for the private model and for its non-private twin alike
REFUSE_CLIPPED_LABELS = 0.5


class OnlineEstimator(BaseEstimator):
    """Shared parameters, learner construction, streaming and prediction."""

    def _store(self, params: dict) -> None:
        for name, value in params.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    @property
    def _learner_name(self) -> str:
        """``learner`` by its canonical name (an old name of LEARNER_ALIASES read as it)."""
        return (LEARNER_ALIASES.get(self.learner, self.learner)
                if isinstance(self.learner, str) else self.learner)

    def _seeds(self) -> tuple[object, object, object]:
        """(learner's, centre's, fallback's): None (fresh OS entropy) for
        ``random_state=None``, not one of 2^31 ints; else three children of the int or of
        128 bits of a RandomState (child i does not depend on how many are spawned)."""
        if self.random_state is None:
            return None, None, None
        if isinstance(self.random_state, Integral) and not isinstance(self.random_state, bool):
            seed = int(self.random_state)
        else:
            state = check_random_state(self.random_state)  # a RandomState: 128 bits of it
            seed = np.random.SeedSequence(
                state.randint(2**32, size=4, dtype=np.uint64).tolist())
        learner, centre, fallback = spawn_seeds(seed, 3)
        return learner, centre, fallback

    def _start(self, X: np.ndarray, y: np.ndarray, horizon: int, regression: bool,
               by_fit: bool) -> None:
        if regression:
            check_regression_learner(self._learner_name, type(self).__name__)
        learner_seed, centre_seed, fallback_seed = self._seeds()
        fallback = check_fallback(getattr(self, "fallback", False))
        prep = prepare(self, X, y, regression=regression, centred=self._centred(regression),
                       horizon=horizon, seed=centre_seed)
        if regression:
            _check_label_scale(self, y)
        self._horizon_from = ("horizon" if self.horizon is not None else "the rows of fit"
                              if by_fit else "partial_fit's default horizon")
        advice = _label_advice(y, prep) if regression and self.scaling is None else None
        if advice:
            warnings.warn(f"{type(self).__name__}: {advice}", LabelOffsetWarning, stacklevel=2)
        delta = self.delta if prep.delta is None else prep.delta
        learner = with_fallback(
            lambda epsilon, seed: make_learner(
                self._learner_name, X.shape[1], horizon=horizon, epsilon=epsilon,
                delta=delta, counter=self.counter, x_bound=prep.x_bound,
                y_bound=prep.y_bound, calibration=self.calibration, seed=seed,
                options=self._learner_options(), fit_intercept=self._fits_intercept(),
                intercept_scaling=self.intercept_scaling, postprocess=self.postprocess,
                random_features=self.random_features, bandwidth=self.bandwidth),
            fallback=fallback, epsilon=prep.epsilon, delta=delta, horizon=horizon,
            seed=fallback_seed, learner_seed=learner_seed,
            link="logit" if has_proba(self) else "rate",
            offset=None if prep.centre is None else prep.centre.value)
        speak_as(learner, type(self).__name__, released=() if prep.estimate is None
                 else tuple(n for n in ("x_bound", "y_bound") if _is_auto(getattr(self, n))))
        self.prep_, self.learner_ = prep, learner  # both or neither: nothing half-built

    def _learner_options(self) -> dict | None:
        """The learner's constructor keywords (``learner_options``, a copy)."""
        return None if self.learner_options is None else dict(self.learner_options)

    def _centred(self, regression: bool) -> bool:
        """Whether the labels are centred: a least-squares learner (a logistic one reads
        its labels as -1 / +1)."""
        name = self._learner_name
        return regression or (name in LEARNERS and not has_proba(self))

    def _fits_intercept(self) -> bool:
        """``fit_intercept`` for a linear learner; the kernel learner fits none."""
        name = self._learner_name
        return self.fit_intercept and not (name in LEARNERS and not LEARNERS[name].linear)

    def _stream(self, X: np.ndarray, y: np.ndarray) -> None:
        try:
            self.learner_.run(self.prep_.transform(X), self.prep_.transform_y(y))
        except HorizonExceededError:  # nothing was learnt: said in the estimator's terms
            h = self.learner_.horizon
            raise HorizonExceededError(
                f"{type(self).__name__}: {len(y)} more rows after {self.learner_.t} exceed "
                f"the {h} its noise is calibrated for ({self._horizon_from}); set horizon to "
                "the whole stream's length before the first fit or partial_fit") from None
        fallback = self.learner_ if isinstance(self.learner_, WithTrivialFallback) else None
        model = self.learner_.learner if fallback is not None else self.learner_
        features = isinstance(model, WithRandomFeatures)
        inner = model.learner if features else model
        if isinstance(inner, WithIntercept):  # with random features: the features' weights
            self.coef_, self.intercept_ = inner.linear_model()
        elif features:
            self.coef_, self.intercept_ = inner.model_weights, 0.0
        elif isinstance(model, PrivateKernelRegression):
            self.coef_, self.intercept_ = model.weights, 0.0  # its feature weights
        else:
            self.coef_, self.intercept_ = model.model_weights, 0.0
        if fallback is not None and not fallback.uses_model:  # the prior, a constant
            self.coef_ = np.zeros_like(self.coef_)
            self.intercept_ = fallback.prior - fallback.offset  # the centre is added below
        if np.ndim(self.coef_) == 2:  # K outputs: scikit-learn's (n_classes, n_features)
            self.coef_ = self.coef_.T
            self.intercept_ = np.broadcast_to(self.intercept_, self.coef_.shape[:1]).copy()
        if self.prep_.centre is not None:  # the trivial model's offset, outside the learner
            self.intercept_ = self.intercept_ + self.prep_.centre.value
        if self.prep_.shift:  # a declared range's centre
            self.intercept_ = self.intercept_ + self.prep_.shift
        if np.ndim(self.intercept_) == 0:
            self.intercept_ = float(self.intercept_)
        self.privacy_ = self.prep_.guarantee(self.learner_, self.epsilon)
        self.n_clipped_ = self.learner_.n_clipped_
        self.t_ = self.learner_.t

    def _margin(self, X: object) -> np.ndarray:
        check_is_fitted(self)
        X = self.prep_.transform(validate_data(self, X, reset=False, dtype=np.float64))
        return self.prep_.uncentre(predict_rows(self.learner_, X))  # as predict_one


def has_proba(estimator: object) -> bool:
    """A logistic learner (its margin's logistic link is a probability model)."""
    name = estimator._learner_name
    if name not in LEARNERS or LEARNERS[name].task != "classification":
        return False
    loss = LEARNERS[name].defaults(1, 1.0, 1.0).get("loss")
    return isinstance(loss.loss if isinstance(loss, Regularized) else loss, LogisticLoss)


def _check_label_scale(est: object, y: np.ndarray) -> None:
    """Refuse labels mostly outside a declared ``y_bound``: the model could only learn
    their clipped values (advice read from the raw labels, for the data holder)."""
    if isinstance(est.y_bound, str) or est.scaling is not None or y.size == 0:
        return
    centre, half = label_range(est.y_bound)
    share = float(np.mean(np.abs(y - centre) > half))
    if share > REFUSE_CLIPPED_LABELS:
        raise fail("y_bound", f"bound most labels of y ({share:.0%} of them lie outside "
                   "it, so the model would learn their clipped values only): declare "
                   f"their range, {range_advice(y)}, or y_bound='auto' with enough rows",
                   est.y_bound)


def _label_advice(y: np.ndarray, prep: object) -> str | None:
    """Advice for labels far from 0 for their spread (|mean| > std; read from the raw
    labels, for the data holder): not centred, a public or private centre; centred on
    their private mean b within a symmetric bound, their range, whose window (hi - lo) / 2
    is narrower than the learner's y_bound + |b|."""
    if prep.centre is None:
        return label_offset_advice(y - prep.shift, "scikit-learn's TransformedTargetRegressor"
                                   " with func=lambda y: y - {offset:g} and inverse_func="
                                   "lambda y: y + {offset:g}", "centre_budget=0.1")
    if prep.shift != 0.0 or not far_from_zero(y):
        return None
    mean, std = float(np.mean(y)), float(np.std(y))
    return (f"the labels' mean ({mean:.3g}) is beyond their spread ({std:.2g}): centred on "
            "their private mean b, they leave the learner a window of y_bound + |b| = "
            f"{prep.y_bound:.3g}, and its noise grows with it; declare their range, "
            f"{range_advice(y)}")


def range_advice(y: np.ndarray) -> str:
    """``y_bound=(lo, hi)`` read from the raw labels, and what it does (for the data
    holder: not a private release)."""
    lo, hi = suggested_range(y)
    return (f"y_bound=({lo:g}, {hi:g}) (at most 2.5% of y outside it; the learner then "
            "fits y - (lo + hi) / 2 within (hi - lo) / 2, centred privately: "
            "centre_budget)")


def _is_auto(bound: object) -> bool:
    """Whether a bound parameter asks for a private estimate (a range is an array-like)."""
    return isinstance(bound, str) and bound == "auto"
