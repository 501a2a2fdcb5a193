"""A linear learner on random Fourier features: a private model non-linear in x.

The papers' learners fit a model linear in x, which on data like river's Bananas does no
better than the majority class. :class:`WithRandomFeatures` runs a linear learner on

    phi(x) = (1 - 1e-12) [cos(Omega^T x), sin(Omega^T x)] / sqrt(D / 2),

Omega (d, D/2) with i.i.d. N(0, 1 / (b x_bound)^2) entries from a public seed (Rahimi &
Recht 2007: phi(x) . phi(x') estimates the Gaussian kernel of bandwidth b x_bound), so
x -> <w, phi(x)> is a kernel model with D weights (NW's ``kernel`` learner runs its own
updates on such features).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from dpol._clip_warning import note_clipping
from dpol._validation import as_matrix, as_vector, check_bound, check_int, check_real, fail
from dpol.clipping import clip_norms
from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._kernels import FeatureMap, Kernel
from dpol.learners._wrapper import LearnerWrapper, innermost

__all__ = ["BANDWIDTH", "FAR", "N_RANDOM_FEATURES", "WithRandomFeatures"]

#: b, the Gaussian kernel's bandwidth in units of x_bound (see :class:`WithRandomFeatures`)
BANDWIDTH = 0.2
#: D, the default number of random features (docs/benchmarks/defaults.md)
N_RANDOM_FEATURES = 32
#: the features' norm, strictly inside the learner's bound 1, so rounding never clips them
_SHRINK = 1.0 - 1e-12
#: rows longer than this many x_bound are scaled to it: omega . x is then beyond 1e6 / b,
#: where float64 holds its phase only to ~1e-9 (near 1e307 it overflows, and cos gives
#: nan), and no data declares a scale a million times too small
FAR = 1e6
#: rows within this factor of row_bound are left alone, so scaling a row is idempotent
_SLACK = 1.0 + 1e-12


class WithRandomFeatures(LearnerWrapper):
    """A linear learner fed D random Fourier features of each row.

    Parameters
    ----------
    learner : OnlineLearner
        A fresh linear learner of dimension D (even), or d + D with ``linear_weight``, or
        a :class:`~dpol.learners.intercept.WithIntercept` of one, with ``x_bound >= 1``
        (the features' norm); its ``y_bound`` is the model's.
    dim : int
        d, the dimension of the rows it takes.
    bandwidth : float
        b, the kernel's bandwidth in units of ``x_bound``.
    x_bound : float
        The declared scale of ||x||: the bandwidth is b x_bound. Rows are not clipped to
        it; only rows beyond ``row_bound`` = 1e6 x_bound (float64 loses their phase)
        are scaled to that norm (counted in ``n_clipped_``).
    feature_seed : int
        **Public** seed of Omega, independent of the learner's noise seed.
    linear_weight : float in [0, 1)
        c: the learner sees [c x / x_bound, sqrt(1 - c^2) phi(x)] (x clipped to
        ``x_bound``), a linear model in x beside the kernel model; 0: features alone.

    Attributes
    ----------
    feature_map : FeatureMap
        phi, up to the factor 1 - 1e-12.
    weights, model_weights : array (D,) or (D + 1,)
        The learner's raw release and model, on the features.

    Notes
    -----
    b = 0.2, D = 32 and :class:`~dpol.adapters.OnlineClassifier`'s c = 0.8 were measured
    on ``benchmarks/utility.py``'s tuning sets (docs/benchmarks/defaults.md).

    Privacy
    -------
    phi is a fixed public map (Omega from ``feature_seed``, never from the data or the
    noise seed) with ||phi(x)|| = 1 - 1e-12 < 1 for every x; with ``linear_weight`` c the
    row (1 - 1e-12) [c x / x_bound, sqrt(1 - c^2) phi(x)] (x clipped to ``x_bound``) has
    norm below 1 too. Neighbouring streams (replace-one or add/remove) thus map to
    neighbouring streams within the learner's bound (>= 1): the learner's sensitivities,
    calibration and events (``privacy_events``) hold unchanged, and so does its guarantee.
    Labels are clipped to the learner's ``y_bound``; predictions are post-processing.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(3000, 2)); y = np.sign(X[:, 0] * X[:, 1])  # XOR
    >>> inner = PrivateQuadraticFTL(64, horizon=3000, epsilon=1.0, alpha=0.01,
    ...                             noise_ridge=True, seed=0)
    >>> m = WithRandomFeatures(inner, 2, bandwidth=0.5)
    >>> trace = m.run(X, y)
    >>> test = rng.uniform(-1, 1, size=(1000, 2))
    >>> accuracy = np.mean(np.sign(m.predict_rows(test)) == np.sign(test[:, 0] * test[:, 1]))
    >>> round(float(accuracy), 2), str(m.privacy) == str(inner.privacy)  # linear: 0.5
    (0.95, True)
    """

    def __init__(self, learner: OnlineLearner, dim: int, *, bandwidth: float = BANDWIDTH,
                 x_bound: float = 1.0, feature_seed: int = 0,
                 linear_weight: float = 0.0) -> None:
        if not isinstance(learner, OnlineLearner) or isinstance(learner, WithRandomFeatures):
            raise fail("learner", "be a full-information learner (an OnlineLearner)", learner)
        base = innermost(learner)
        if type(base).predict_one is not OnlineLearner.predict_one:
            raise fail("learner", "be a linear learner (predicting x . w)",
                       type(base).__name__)
        if learner.t_ != 0:
            raise fail("learner", "be fresh (t = 0)", learner)
        if learner.x_bound < 1.0:
            raise fail("learner.x_bound", "be at least 1 (the features' norm)",
                       learner.x_bound)
        self.dim = check_int("dim", dim, low=1)
        self.linear_weight = check_real("linear_weight", linear_weight, low=0.0, high=1.0,
                                        high_open=True)
        linear = self.dim if self.linear_weight > 0.0 else 0  # x's coordinates first
        n_features = check_int("learner.dim", learner.dim, low=2 + linear) - linear
        if n_features % 2:
            raise fail("learner.dim", "be even (cos/sin pairs of random features)"
                       + (f", plus dim = {linear} with linear_weight" if linear else ""),
                       learner.dim)
        self.learner = learner
        self.bandwidth = check_real("bandwidth", bandwidth, low=0.0, low_open=True)
        self.x_bound = check_bound("x_bound", x_bound)
        kernel = Kernel("gaussian", bandwidth=self.bandwidth * self.x_bound)
        self.feature_map = FeatureMap(kernel, self.dim, n_features, feature_seed)
        self.row_bound = FAR * self.x_bound
        self._share()

    def rows(self, X: np.ndarray) -> np.ndarray:
        """phi of rows X (n, d) as given (beyond ``row_bound``: scaled to it); (n, D)."""
        X = np.atleast_2d(X)
        return self._mapped(X, np.zeros(len(X)))[0]

    def _far(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
        """Rows beyond ``row_bound`` scaled to it, and how many the learner will not count."""
        return self._clip_rows(X, y, self.row_bound, _SLACK)

    def _mapped(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
        """The learner's rows for rows X, and how many clipped rows it will not count."""
        c = self.linear_weight
        X, extra = self._far(X, y)
        if c == 0.0:
            return _SHRINK * self.feature_map(X), extra
        near, extra = self._clip_rows(X, y, self.x_bound)  # far rows are beyond it too
        return _SHRINK * np.hstack([(c / self.x_bound) * near,
                                    math.sqrt(1.0 - c * c) * self.feature_map(X)]), extra

    def learn_one(self, x: object, y: object) -> None:
        """Observe one element (its features)."""
        xv = as_vector("x", x, self.dim)
        yv = self.base._check_label(y)
        features, extra = self._mapped(xv[None, :], np.array([yv]))
        self.learner.learn_one(features[0], yv)  # may refuse: then nothing changed
        self._x_clipped += extra
        note_clipping(self, bounds=self._bounds_text())

    def run(self, X: object, y: object, *, comparator: object = None) -> Trace:
        """The learner's ``run`` on the features; ``comparator`` and the trace's iterates
        are in the learner's coordinates."""
        X = as_matrix("X", X, self.dim)
        y = self.base._check_labels(y, X.shape[0])
        features, extra = self._mapped(X, y)
        trace = self.learner.run(features, y, comparator=comparator)
        self._x_clipped += extra
        note_clipping(self, bounds=self._bounds_text(), raw=lambda: (
            clip_norms(X) if self.linear_weight else None, self.base._label_sizes(y)))
        return dataclasses.replace(trace, n_clipped=self.n_clipped_)

    def _bounds_text(self) -> str:
        if self.linear_weight:  # x itself is clipped to its bound
            x_name, y_name = getattr(self, "bound_names", ("x_bound", "y_bound"))
            return f"{x_name}={self.x_bound:g}, {y_name}={self.y_bound:g}"
        return f"||x|| <= {self.row_bound:g} (features), y_bound={self.y_bound:g}"

    def _loss_value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The learner's loss of w on the features of rows X (n, d)."""
        return self.learner._loss_value(w, self.rows(np.asarray(X, dtype=np.float64)), y)
