"""The model a user predicts with: post-processing of a learner's released iterates.

A learner's guarantee covers its whole sequence of releases (``weights``), so any
function of them and of public constants is as private (Dwork and Roth 2014,
Proposition 2.1). :class:`~dpol.learners.OnlineLearner` keeps, release by release:

1. **Averaging** (``postprocess="average"``, the default): M_t = sum_{s <= t} a_s w_s /
   sum_{s <= t} a_s with a_s = s^2 (:func:`release_weights`), the inverse-variance
   weights of output perturbation's noise std ~ 1/t: M_T's noise std is about sqrt(3/T)
   times the last release's. The counters' learners (noise ~ sqrt(log t)/t, correlated)
   gain less; kernel regression weights by 1/sens_t^2.
2. **Shrinkage** (``postprocess="shrink"``, off): M shrunk towards 0 (towards the
   intercept for :class:`~dpol.learners.intercept.WithIntercept`) by the positive-part
   James-Stein factor (1 - p v / ||M||^2)_+, v the public noise variance of M_T
   (:func:`js_shrink`), for learners that state it (``_release_noise_variance``). Off:
   v bounds the noise from above, so it over-shrinks; the counters' learners shrink in
   their solve (``noise_ridge``).
3. **Predictions clipped to the label bound** for least-squares learners (labels lie in
   [-y_bound, y_bound]), which never moves a prediction away from the label.

Measured effects of 1 and 2: docs/benchmarks/defaults.md. ``weights`` stays the raw
release the papers analyse (``predict_one(x, raw=True)``). A (d, K) release (PQFTL's
``outputs``) is averaged entrywise, shrunk and clipped per output.

Privacy
-------
Each step is a function of the released iterates and public constants (step indices,
the calibrated noise levels, y_bound): post-processing, no privacy cost; the learner's
``privacy`` covers the model as it covers the releases.
"""

from __future__ import annotations

import math

import numpy as np

from dpol._validation import check_choice

__all__ = ["POSTPROCESSINGS", "ReleaseAverage", "js_shrink", "label_bound", "model_weights",
           "predict", "record_release", "record_releases", "release_weights", "row_dot"]

#: "average" (default), "shrink" (average, then James-Stein), "last" (the last release)
POSTPROCESSINGS = ("average", "shrink", "last")
#: rows of releases averaged per block in :meth:`ReleaseAverage.extend` (bounded memory)
_BLOCK = 65536


def row_dot(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Row i of X times its own release W[i]: (n,) for W (n, d), (n, K) for W (n, d, K).

    >>> row_dot(np.ones((2, 3)), np.arange(12.0).reshape(2, 3, 2)).tolist()
    [[6.0, 9.0], [24.0, 27.0]]
    """
    return np.einsum("ij,ij->i" if W.ndim == 2 else "ij,ijk->ik", X, W)


def release_weights(steps: np.ndarray) -> np.ndarray:
    """a_s = s^2, the weight of the release after step s in the average.

    >>> release_weights(np.array([1, 2, 3])).tolist()
    [1.0, 4.0, 9.0]
    """
    return np.asarray(steps, dtype=np.float64) ** 2


def label_bound(learner: object) -> float | None:
    """``y_bound`` for a least-squares learner (predictions are clipped to it), else None.

    >>> from dpol.learners import PrivateQuadraticFTL
    >>> label_bound(PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, bound=2.0))
    2.0
    """
    from dpol.losses import LinearLoss, Regularized, SquaredLoss

    data = getattr(learner, "_data", None)
    if data is None:
        data = getattr(learner, "loss", None)
        data = data.loss if isinstance(data, Regularized) else data
    if isinstance(data, LinearLoss):
        return float(learner.y_bound) if isinstance(data, SquaredLoss) else None
    return float(learner.y_bound) if getattr(learner, "least_squares", False) else None


def js_shrink(model: np.ndarray, variance: float, intercept: int | None = None
              ) -> np.ndarray:
    """Positive-part James-Stein shrinkage of ``model`` towards 0, coordinates apart from
    ``intercept`` by (1 - p v / ||model||^2)_+ (p of them), the intercept alone by
    (1 - v / b^2)_+; v is the per-coordinate noise variance (public; nan: none stated,
    no shrinkage).

    With independent N(0, v) noise it dominates no shrinkage for p > 4 (James and Stein
    1961); a model of noise alone goes to about 0.

    >>> js_shrink(np.array([3.0, 4.0]), 1.0).round(12).tolist()  # 1 - 2/25
    [2.76, 3.68]
    >>> js_shrink(np.array([0.3, 0.4, 2.0]), 1.0, intercept=2).tolist()  # features drowned
    [0.0, 0.0, 1.5]
    """
    return _shrink_rows(np.array(model, dtype=np.float64)[None, :], np.array([variance]),
                        intercept)[0]


def _shrink_rows(M: np.ndarray, variance: np.ndarray, intercept: int | None) -> np.ndarray:
    """:func:`js_shrink` of every row of M (a fresh array) with its own variance; M of
    shape (n, d, K): each output (column) apart."""
    if np.ndim(M) == 3:
        return np.stack([_shrink_rows(M[:, :, k], variance, intercept)
                         for k in range(M.shape[2])], axis=2)
    out = np.array(M, dtype=np.float64)
    v = np.where(variance > 0.0, variance, 0.0)  # nan (none stated) or 0: no shrinkage
    keep = np.ones(out.shape[1], dtype=bool)
    if intercept is not None:
        keep[intercept] = False
        b = out[:, intercept]
        out[:, intercept] = b * _factor(v, b * b)
    norm2 = np.einsum("ij,ij->i", out[:, keep], out[:, keep])
    out[:, keep] *= _factor(int(keep.sum()) * v, norm2)[:, None]
    return out


def _factor(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """(1 - num / den)_+: 1 where num = 0, 0 where den = 0 < num."""
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.clip(1.0 - num / den, 0.0, 1.0)
    return np.where(num == 0.0, 1.0, np.where(den > 0.0, f, 0.0))


class ReleaseAverage:
    """Running weighted mean of the released iterates (and the variance of its noise).

    Releases enter in step order by :meth:`add` or :meth:`extend` (the same bits).
    ``variance`` = sum a_s^2 v_s / (sum a_s)^2 for independent release noise of variance
    v_s (nan when a learner states none).

    Examples
    --------
    >>> avg = ReleaseAverage(2)
    >>> avg.add(np.array([1.0, 0.0]), 1.0, 4.0); avg.add(np.array([0.0, 1.0]), 3.0, 4.0)
    >>> avg.mean().tolist(), avg.variance  # (1 * 1 + 9 * 4) / 4^2 ... of 4 each
    ([0.25, 0.75], 2.5)
    """

    def __init__(self, dim: int | tuple[int, int]) -> None:
        self.total = np.zeros(dim)  # (d,), or (d, K) for matrix releases
        self.weight = 0.0
        self.noise = 0.0  # sum a_s^2 v_s

    @property
    def variance(self) -> float:
        return self.noise / self.weight**2 if self.weight > 0.0 else math.nan

    def mean(self, raw: np.ndarray | None = None) -> np.ndarray:
        """The weighted mean; ``raw`` (the current release) before any weighted release."""
        if self.weight > 0.0:
            return self.total / self.weight
        return np.array(raw, dtype=np.float64)

    def add(self, w: np.ndarray, a: float, v: float) -> None:
        """One release ``w`` with weight ``a`` and noise variance ``v`` (nan: unknown)."""
        if a != 0.0:
            self.total = self.total + a * w
            self.weight = self.weight + a
            self.noise = self.noise + a * a * v

    def extend(self, before: np.ndarray, last: np.ndarray, a: np.ndarray, v: np.ndarray,
               X: np.ndarray, how: str = "average", intercept: int | None = None
               ) -> np.ndarray:
        """Add the releases after n steps and return each step's prequential prediction.

        ``before[i]`` is the release used at step i (so ``before[i + 1]`` the one made
        after it) and ``last`` the release after the last step; row i of the result is
        ``X[i] . M``, M the model before step i post-processed as ``how`` says (the
        release ``before[i]`` while no weighted release has entered).
        """
        n = len(a)
        preds = np.empty((n, *self.total.shape[1:]))
        col = (slice(None),) + (None,) * self.total.ndim  # a[col]: a against each release
        for lo in range(0, n, _BLOCK):
            hi = min(n, lo + _BLOCK)
            after = before[lo + 1:hi + 1]
            if hi == n:
                after = np.vstack([after, last[None, :]])
            rows = np.vstack([self.total[None, :], a[lo:hi][col] * after])
            totals = np.cumsum(rows, axis=0)  # sequential, as add(): the same floats
            weights = np.cumsum(np.concatenate([[self.weight], a[lo:hi]]))
            terms = np.where(a[lo:hi] == 0.0, 0.0, a[lo:hi] ** 2 * v[lo:hi])  # as add()
            noises = np.cumsum(np.concatenate([[self.noise], terms]))
            prior = weights[:-1]
            if how == "last":
                means = before[lo:hi]
            else:
                means = np.divide(totals[:-1], prior[col], out=before[lo:hi].copy(),
                                  where=prior[col] > 0.0)
            if how == "shrink":
                with np.errstate(divide="ignore", invalid="ignore"):
                    var = np.where(prior > 0.0, noises[:-1] / prior**2, np.nan)
                means = _shrink_rows(means, var, intercept)
            preds[lo:hi] = row_dot(X[lo:hi], means)
            self.total, self.weight = totals[-1].copy(), float(weights[-1])
            self.noise = float(noises[-1])
        return preds


def model_weights(learner: object, how: str) -> np.ndarray:
    """The post-processed model of ``learner`` (``how`` one of :data:`POSTPROCESSINGS`)."""
    how = check_choice("postprocess", how, POSTPROCESSINGS)
    raw = learner.weights
    if how == "last":
        return raw
    average = learner._average.mean(raw)
    if how == "average":
        return average
    return js_shrink(average, learner._average.variance, learner._intercept_index)


def predict(learner: object, X: np.ndarray) -> np.ndarray:
    """Rows of X (validated, learner.dim columns) times the model, clipped to the label
    bound for a least-squares learner."""
    out = X @ learner.model_weights
    bound = label_bound(learner)
    return out if bound is None else np.clip(out, -bound, bound)


#: per learner class: (keeps a model, default weights and noise hooks)
_KINDS: dict[type, tuple[bool, bool]] = {}


def _kinds(cls: type) -> tuple[bool, bool]:
    if cls not in _KINDS:  # the learner's class says (OnlineLearner._model_kinds)
        _KINDS[cls] = cls._model_kinds()
    return _KINDS[cls]


def record_release(learner: object) -> None:
    """Enter the release after step ``learner.t`` into its model (``learn_one``)."""
    keeps, default = _kinds(type(learner))
    if not keeps:
        return
    t = learner.t
    if default:  # the same floats as release_weights: t^2 is exact below 2^26
        learner._average.add(learner.weights, float(t) * float(t), math.nan)
        return
    learner._average.add(learner.weights, float(learner._release_weights(t)),
                         float(learner._release_noise_variance(t)))


def record_releases(learner: object, X: np.ndarray, before: np.ndarray) -> np.ndarray | None:
    """Enter the releases of ``run``'s n steps (``before``: the releases used at each
    step; ``learner.weights`` the last); the model's prequential predictions."""
    if not _kinds(type(learner))[0]:
        return None
    steps = np.arange(learner.t - X.shape[0] + 1, learner.t + 1)
    preds = learner._average.extend(before, learner.weights, learner._release_weights(steps),
                                    learner._release_noise_variance(steps), X,
                                    learner.postprocess, learner._intercept_index)
    bound = label_bound(learner)
    return preds if bound is None else np.clip(preds, -bound, bound)
