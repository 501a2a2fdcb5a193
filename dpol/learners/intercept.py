"""An intercept for any full-information linear learner: a constant feature in the norm bound.

The papers' learners fit x -> <w, x>, which on an unbalanced task cannot even express
the majority class. :class:`WithIntercept` runs any such learner of dimension d + 1 on

    phi(x) = kappa [x, c x_bound],   kappa = (1 - 1e-12) / sqrt(1 + c^2),

x first clipped to ||x|| <= x_bound, and predicts <coef, x> + intercept with
coef = kappa w[:d] and intercept = kappa c x_bound w[d]. The raw learner stays as it
is (``learner``); the wrapper changes only what it is fed.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpol._clip_warning import note_clipping
from dpol._validation import as_matrix, as_vector, check_real, fail
from dpol.clipping import clip_norms
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._wrapper import LearnerWrapper

__all__ = ["INTERCEPT_SCALING", "WithIntercept"]

#: c, the constant feature in units of x_bound (see :class:`WithIntercept`, Notes)
INTERCEPT_SCALING = 0.35


class WithIntercept(LearnerWrapper):
    """A linear learner with an intercept, through a constant feature c x_bound.

    Parameters
    ----------
    learner : OnlineLearner
        A fresh full-information linear learner of dimension d + 1 (its last coordinate
        is the intercept's); ``x_bound`` and ``y_bound`` are its own.
    intercept_scaling : float
        c, the constant feature in units of x_bound (scikit-learn's liblinear name).

    Attributes
    ----------
    dim : int
        d, the dimension of the rows it takes.
    coef, intercept
        The post-processed model in the original coordinates (``linear_model``).
    weights, model_weights : array (d + 1,)
        The learner's raw release and model, in the lifted coordinates.

    Notes
    -----
    A larger c shrinks the features, a smaller one needs a larger intercept weight
    against the learner's domain and ridge; c = 0.35 was within 0.03 of the best c on
    every data set measured (docs/benchmarks/defaults.md).

    Privacy
    -------
    The lift is a fixed public map with ||phi(x)|| <= (1 - 1e-12) x_bound (rows clipped
    to x_bound first, counted in ``n_clipped_``), so neighbouring streams (replace-one or
    add/remove) map to neighbouring streams within the learner's bound: its
    sensitivities, calibration and events (``privacy_events``) hold unchanged, and so
    does its guarantee. The intercept is released with the iterate.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)) / 3; y = np.clip(X @ [0.5, -0.5] + 0.4, -1, 1)
    >>> inner = PrivateQuadraticFTL(3, horizon=2000, epsilon=10.0, delta=1e-5, alpha=0.01,
    ...                             noise_ridge=True, seed=0)
    >>> m = WithIntercept(inner)
    >>> trace = m.run(X, y)
    >>> trace.weights.shape, m.dim, str(m.privacy) == str(inner.privacy)
    ((2000, 3), 2, True)
    >>> coef, intercept = m.linear_model()  # the noise ridge shrinks it a little
    >>> np.round(coef, 1).tolist(), round(intercept, 1)
    ([0.4, -0.3], 0.3)
    """

    def __init__(self, learner: OnlineLearner, *,
                 intercept_scaling: float = INTERCEPT_SCALING) -> None:
        if not isinstance(learner, OnlineLearner) or isinstance(learner, WithIntercept):
            raise fail("learner", "be a full-information learner (an OnlineLearner)", learner)
        if type(learner).predict_one is not OnlineLearner.predict_one:
            raise fail("learner", "be a linear learner (predicting x . w)",
                       type(learner).__name__)
        if learner.dim < 2 or learner.t_ != 0:
            raise fail("learner", "be fresh (t = 0), of dimension d + 1 >= 2", learner)
        self.learner = learner
        self.intercept_scaling = check_real("intercept_scaling", intercept_scaling, low=0.0,
                                            low_open=True)
        self._kappa = (1.0 - 1e-12) / math.sqrt(1.0 + self.intercept_scaling**2)
        self._share()  # one clipping warning: the learner's label clips and the x clips here
        self.x_bound = learner.x_bound
        self.dim = learner.dim - 1
        learner._intercept_index = self.dim

    # ------------------------------------------------------------------ the lift
    def lift(self, X: np.ndarray) -> np.ndarray:
        """kappa [X, c x_bound] for rows X (n, d), unclipped; (n, d + 1)."""
        X = np.atleast_2d(X)
        const = np.full((X.shape[0], 1), self.intercept_scaling * self.x_bound)
        return self._kappa * np.hstack([X, const])

    rows = lift  # the rows the learner predicts on

    def _clip_x(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
        """X with rows clipped to x_bound; the rows whose label the learner will not clip."""
        return self._clip_rows(X, y, self.x_bound)

    def linear_model(self, *, raw: bool = False) -> tuple[np.ndarray, float | np.ndarray]:
        """(coef, intercept) of the model (``raw=True``: of the last release); with K
        outputs coef is (d, K) and intercept (K,)."""
        w = self.learner.weights if raw else self.learner.model_weights
        b = self._kappa * self.intercept_scaling * self.x_bound * w[-1]
        return self._kappa * w[:-1], (float(b) if np.ndim(b) == 0 else b)

    @property
    def coef(self) -> np.ndarray:
        return self.linear_model()[0]

    @property
    def intercept(self) -> float | np.ndarray:
        return self.linear_model()[1]

    def learn_one(self, x: object, y: object) -> None:
        """Observe one element (x clipped to x_bound, then lifted)."""
        xv = as_vector("x", x, self.dim)
        yv = self.learner._check_label(y)
        X, extra = self._clip_x(xv[None, :], np.array([yv]))
        self.learner.learn_one(self.lift(X)[0], yv)  # may refuse: then nothing changed
        self._x_clipped += extra
        note_clipping(self, bounds=self._bounds_text())

    def run(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """The learner's ``run`` on the lifted rows; ``comparator`` and the trace's
        iterates are in the lifted coordinates (d + 1)."""
        X = as_matrix("X", X, self.dim)
        y = self.base._check_labels(y, X.shape[0])
        raw = clip_norms(X), self.base._label_sizes(y)  # before clipping: suggested bounds
        clipped, extra = self._clip_x(X, y)
        lifted = self.lift(clipped)
        # the model's predictions are predict_one's: of the rows as given, lifted
        rows = lifted if clipped is X else self.lift(X)
        trace = self.learner._run_stream(lifted, y, comparator, rows=rows)
        self._x_clipped += extra
        note_clipping(self, bounds=self._bounds_text(), raw=lambda: raw)
        return dataclasses.replace(trace, n_clipped=self.n_clipped_)

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The learner's loss of the lifted w (d + 1) on rows X (n, d) clipped and lifted."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return self.learner._loss_value(w, self.lift(self._clip_x(X, np.zeros(len(X)))[0]), y)
