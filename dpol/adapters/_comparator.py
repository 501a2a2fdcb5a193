"""The regret's comparator of a registry learner: the best fixed point in hindsight, in
the coordinates the learner fits (lifted by an intercept; linear in x for a kernel learner).
"""

from __future__ import annotations

import numpy as np

from dpol.evaluation import best_fixed_point
from dpol.learners import (
    OnlineLearner,
    PrivateIncrementalRegression,
    PrivateKernelRegression,
    PrivateQuadraticFTL,
)
from dpol.learners.intercept import WithIntercept
from dpol.learners.random_features import WithRandomFeatures
from dpol.losses import Regularized, SquaredLoss

__all__ = ["comparator", "zero_point"]


def zero_point(learner: OnlineLearner) -> np.ndarray:
    """"Predict 0" in the coordinates of :func:`comparator` (a kernel learner's comparator
    is linear in x, not in its random features).

    >>> from dpol.adapters.registry import make_learner
    >>> zero_point(make_learner("kernel", 3, horizon=10, epsilon=1.0, seed=0)).shape
    (3,)
    """
    if isinstance(learner, (WithIntercept, WithRandomFeatures)):
        return zero_point(learner.learner)
    return np.zeros(learner.dim if isinstance(learner, PrivateKernelRegression)
                    else learner.weights.shape)  # (d, K) for PQFTL's K outputs


def comparator(learner: OnlineLearner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The best fixed point in hindsight for the loss and set ``learner``'s regret uses.

    ``X, y``: the stream as the learner saw it. With an intercept, the point is in the
    lifted coordinates; for :class:`PrivateKernelRegression`, the best *linear* predictor.

    Examples
    --------
    >>> from dpol.adapters.registry import make_learner
    >>> m = make_learner("pqftl", 2, horizon=3, epsilon=1.0, seed=0)
    >>> X = np.array([[0.5, 0.0], [0.0, 0.5], [0.5, 0.5]])
    >>> np.round(comparator(m, X, X @ [1.0, -1.0]), 4)
    array([ 0.0769, -0.0769])
    """
    if isinstance(learner, (WithIntercept, WithRandomFeatures)):
        return comparator(learner.learner, learner.rows(X), y)
    if isinstance(learner, PrivateQuadraticFTL):  # K outputs: the loss splits by column
        loss = Regularized(SquaredLoss(x_bound=learner.x_bound), learner.alpha)
        return best_fixed_point(loss, X, y) if np.ndim(y) == 1 else np.column_stack(
            [best_fixed_point(loss, X, col) for col in np.asarray(y).T])
    if isinstance(learner, (PrivateIncrementalRegression, PrivateKernelRegression)):
        loss = SquaredLoss(x_bound=learner.x_bound, y_bound=learner.y_bound)
        return best_fixed_point(loss, X, y, getattr(learner, "domain", None))
    return best_fixed_point(learner.loss, X, y, learner.domain)
