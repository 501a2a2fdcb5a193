"""What the adapters estimate privately before streaming: bounds and feature scaling.

``x_bound="auto"`` / ``y_bound="auto"`` release the 0.95 quantile of the row norms / of
``|y|`` (:func:`dpol.datasets.private_bounds.private_bounds`); ``scaling="private"``
releases per-feature 10% / 90% quantiles and the bounds after scaling
(:func:`dpol.datasets.private_scaling.private_scaling`). Either spends
``bounds_budget * epsilon``; the learner gets the rest, and the estimator's ``privacy_``
composes both (:func:`dpol.accounting.events.compose_guarantee`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_choice, check_real, fail
from dpol.accounting.calibration import check_epsilon
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.datasets.private_bounds import PrivateBounds, parse_bound, private_bounds
from dpol.datasets.private_scaling import PrivateScaling, private_scaling
from dpol.errors import PrivateEstimateWarning

__all__ = ["SCALINGS", "Preparation", "prepare"]

#: ``scaling`` values besides None (features used as given)
SCALINGS = ("private",)


@dataclass(frozen=True)
class Preparation:
    """Bounds and scaling the learner runs with, and the events that released them."""

    x_bound: float
    y_bound: float
    epsilon: float
    estimate: PrivateBounds | PrivateScaling | None = None

    def events(self) -> tuple[MechanismEvent, ...]:
        return () if self.estimate is None else self.estimate.privacy_events()

    def transform(self, X: np.ndarray) -> np.ndarray:
        if isinstance(self.estimate, PrivateScaling):
            return self.estimate.transform(X)
        return X

    def transform_y(self, y: np.ndarray) -> np.ndarray:
        if isinstance(self.estimate, PrivateScaling) and self.estimate.y_scale is not None:
            return self.estimate.transform_y(y)
        return y

    def inverse_y(self, y: np.ndarray) -> np.ndarray:
        if isinstance(self.estimate, PrivateScaling) and self.estimate.y_scale is not None:
            return self.estimate.inverse_y(y)
        return y

    def guarantee(self, learner: object, target: float):
        """The one guarantee of the estimate and the learner (the learner's alone if
        nothing was estimated)."""
        if self.estimate is None:
            return learner.privacy
        return compose_guarantee([*self.events(), *learner.privacy_events()],
                                 learner.delta, target=target,
                                 seeded=learner.privacy.seeded)


def prepare(est: object, X: np.ndarray, y: np.ndarray, *, regression: bool) -> Preparation:
    """Check ``est``'s bound and scaling parameters; estimate what is asked from X, y."""
    x_bound = parse_bound("x_bound", est.x_bound)
    y_bound = parse_bound("y_bound", est.y_bound)
    scaling = est.scaling
    if scaling is not None:
        check_choice("scaling", scaling, SCALINGS)
    auto = x_bound == "auto" or y_bound == "auto"
    if not (auto or scaling):
        return Preparation(x_bound, y_bound, est.epsilon)
    neighbouring = (est.learner_options or {}).get("neighbouring", "replace_one")
    if neighbouring != "replace_one":
        raise fail("learner_options", "not set neighbouring with private bounds or scaling "
                   "(their release is replace-one DP: it reads the public number of rows)",
                   {"neighbouring": neighbouring})
    budget = check_real("bounds_budget", est.bounds_budget, low=0.0, high=1.0,
                        low_open=True, high_open=True)
    epsilon = check_epsilon(est.epsilon)
    if math.isinf(epsilon):
        raise fail("epsilon", "be finite for private bounds or scaling (a share of it pays "
                   "for the estimate)", epsilon)
    if not regression and y_bound == "auto":
        raise fail("y_bound", "be a number for a classifier (labels are -1 / +1)", "auto")
    if scaling:
        if (x_bound, y_bound if regression else "auto") != ("auto", "auto"):
            raise fail("scaling", "come with x_bound='auto'" + (" and y_bound='auto'"
                       if regression else "") + " (the bounds are released after "
                       "scaling)", scaling)
        estimate = private_scaling(X, y if regression else None, epsilon=budget * epsilon)
        x_bound = estimate.x_bound
        y_bound = estimate.y_bound if regression else y_bound
    else:
        estimate = private_bounds(X if x_bound == "auto" else None,
                                  y if y_bound == "auto" else None, epsilon=budget * epsilon)
        x_bound = estimate.x_bound if x_bound == "auto" else x_bound
        y_bound = estimate.y_bound if y_bound == "auto" else y_bound
    note = estimate.note()
    if note:
        warnings.warn(note, PrivateEstimateWarning, stacklevel=4)
    return Preparation(x_bound, y_bound, (1.0 - budget) * epsilon, estimate)
