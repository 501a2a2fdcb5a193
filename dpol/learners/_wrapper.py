"""A learner run on a fixed public map of the rows (the base of the feature wrappers).

:class:`~dpol.learners.intercept.WithIntercept` and
:class:`~dpol.learners.random_features.WithRandomFeatures` feed a linear learner the
rows phi(x) of a public map and predict with it; the learner itself stays as it is
(``learner``), so its releases, mechanism and guarantee are unchanged. This base holds
what both delegate to it.
"""

from __future__ import annotations

import numpy as np

from dpol._validation import as_vector, check_choice
from dpol.clipping import clip_norms, scale_rows_l2
from dpol.learners._base import OnlineLearner
from dpol.learners.postprocess import POSTPROCESSINGS
from dpol.learners.postprocess import predict as model_predict

__all__ = ["LearnerWrapper", "innermost", "predict_rows"]

#: attributes a wrapper shares with the learner it wraps
_SHARED = ("horizon", "epsilon", "delta", "neighbouring", "calibration", "y_bound", "seed")


def innermost(model: object) -> object:
    """The learner that adds the noise: ``model.base`` for a wrapper, else ``model``
    itself (a learner, or anything else, None included, as it is)."""
    return model.base if isinstance(model, LearnerWrapper) else model


class LearnerWrapper(OnlineLearner):
    """An :class:`OnlineLearner` that feeds ``learner`` the rows ``rows(X)``.

    Subclasses set ``self.learner`` and ``self.dim`` and call :meth:`_share`; they
    implement ``rows`` (the public map) and the stepping (``learn_one``, ``run``).
    """

    learner: OnlineLearner

    def _share(self, *, clips: bool = True) -> None:
        """Copy the learner's public settings; warn of clipping here, not inside, if the
        wrapper clips rows itself (``clips``), else leave the learner's warning as it is."""
        for name in _SHARED:
            setattr(self, name, getattr(self.learner, name))
        if clips:
            self.learner._clip_warned = True  # the wrapper's warning counts every clip once
        self._x_clipped = 0  # rows whose x (not label) was clipped here

    def _clip_rows(self, X: np.ndarray, y: np.ndarray, bound: float, slack: float = 1.0
                   ) -> tuple[np.ndarray, int]:
        """X with rows over ``slack`` x ``bound`` clipped to norm ``bound`` (a copy if any
        is), and how many of them the learner will not count (their label is within
        y_bound): each row counts once. A slack above 1 makes the clip idempotent (a
        clipped row's norm can round above the bound)."""
        norms = clip_norms(X)
        over = norms > bound * slack
        if np.any(over):
            X = X.copy()
            scale_rows_l2(X, norms, over, bound)  # the learners' clip, huge rows too
        return X, int(np.count_nonzero(over & ~self.base._labels_over(y)))

    def rows(self, X: np.ndarray) -> np.ndarray:
        """The rows the learner sees for rows X (n, dim) as given."""
        raise NotImplementedError

    @property
    def base(self) -> OnlineLearner:
        """The innermost learner (the one that adds the noise)."""
        return innermost(self.learner)

    def base_rows(self, X: np.ndarray) -> np.ndarray:
        """The innermost learner's rows for rows X as given (through every wrapper)."""
        inner = self.learner
        mapped = self.rows(np.atleast_2d(np.asarray(X, dtype=np.float64)))
        return inner.base_rows(mapped) if isinstance(inner, LearnerWrapper) else mapped

    def predict_one(self, x: object, *, raw: bool = False) -> float:
        """The learner's prediction on the mapped row (``raw=True``: with its last
        release); for an intercept, <coef, x> + intercept."""
        return self.learner.predict_one(self.rows(as_vector("x", x, self.dim))[0], raw=raw)

    def predict_rows(self, X: np.ndarray) -> np.ndarray:
        """``predict_one`` of every row of X (n, dim), in one vectorized pass ((n, K) for
        a learner with K outputs)."""
        return model_predict(self.base, self.base_rows(X))

    # ------------------------------------------------------------------ delegation
    @property
    def t_(self) -> int:
        return self.learner.t_

    @property
    def tags(self) -> frozenset[str]:
        return self.learner.tags

    @property
    def least_squares(self) -> bool:
        """Whether predictions are clipped to y_bound (the learner's least-squares flag)."""
        return bool(getattr(self.base, "least_squares", False))

    @property
    def mechanism(self):
        return self.learner.mechanism

    @property
    def n_clipped_(self) -> int:
        return self.learner.n_clipped_ + self._x_clipped

    @property
    def postprocess(self) -> str:
        return self.learner.postprocess

    @postprocess.setter
    def postprocess(self, value: str) -> None:
        self.learner.postprocess = check_choice("postprocess", value, POSTPROCESSINGS)

    @property
    def weights(self) -> np.ndarray:
        return self.learner.weights

    @property
    def model_weights(self) -> np.ndarray:
        return self.learner.model_weights

    def privacy_events(self):
        """The learner's events (a public map of the rows costs nothing)."""
        return self.learner.privacy_events()

    def _learn(self, x: np.ndarray, y: float) -> None:  # learn_one is the learner's
        raise NotImplementedError


def predict_rows(learner: OnlineLearner, X: np.ndarray) -> np.ndarray:
    """``learner.predict_one`` of every row of X (n, dim): a wrapper's own
    ``predict_rows``, a linear model's in one vectorized pass, else row by row (a learner
    with its own ``predict_one``: kernel regression)."""
    if isinstance(learner, LearnerWrapper):
        return learner.predict_rows(X)
    if type(learner).predict_one is OnlineLearner.predict_one:
        return model_predict(learner, X)
    return np.array([learner.predict_one(x) for x in np.atleast_2d(X)])
