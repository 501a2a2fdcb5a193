"""Prequential (test-then-train) scores and held-out accuracy (layer L5).

A learner predicts ``x_t·w_t`` with the iterate released *before* ``(x_t, y_t)`` is seen;
a :class:`~dpol.learners.Trace` records these predictions, so scoring them is an honest
online evaluation (JKT Appendix G.2: the online accuracy of ``sign(g_t·x̂_t)`` before the
update, and the held-out accuracy of the last iterate on a split).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dpol._validation import as_matrix, as_vector, check_choice, fail
from dpol.learners import Trace

__all__ = ["RunningScore", "holdout_accuracy", "prequential_accuracy", "prequential_mse"]

TIES = ("error", "half", "positive")


class RunningScore(NamedTuple):
    """A score over the first t elements for t = 1..T, and its value over all T.

    Unpacks as ``curve, final = prequential_accuracy(trace, y)``.

    Examples
    --------
    >>> prequential_accuracy([0.5, -0.2], [1, 1])
    RunningScore(curve=array([1. , 0.5]), final=0.5)
    """

    curve: np.ndarray
    final: float


def _ndim(name: str, value: object) -> int:
    try:
        return int(np.ndim(value))
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise fail(name, "be a numeric array", value) from exc


def _predictions(trace: object) -> np.ndarray:
    """The online predictions of a Trace, or an array of them."""
    if isinstance(trace, Trace):
        return as_vector("trace.predictions", trace.predictions, np.size(trace.predictions))
    if _ndim("trace", trace) != 1 or np.size(trace) == 0:
        raise fail("trace", "be a dpol.learners.Trace or a non-empty 1-d array of predictions",
                   trace)
    return as_vector("trace", trace, np.size(trace))


def _labels(name: str, y: object, n: int) -> np.ndarray:
    y = as_vector(name, y, n)
    if not np.all(np.abs(y) == 1.0):
        raise fail(name, "contain only the labels -1 and +1", y)
    return y


def _correct(scores: np.ndarray, y: np.ndarray, ties: str) -> np.ndarray:
    """1 for a right sign, 0 for a wrong one; a zero score by the ``ties`` rule."""
    right = (np.sign(scores) == y).astype(float)
    zero = scores == 0.0
    if ties == "half":
        right[zero] = 0.5
    elif ties == "positive":
        right[zero] = (y[zero] == 1.0).astype(float)
    return right  # ties == "error": sign(0) = 0 matches no label


def prequential_accuracy(trace: Trace | object, y: object, *, ties: str = "error") -> RunningScore:
    """Online accuracy of ``sign(x_t·w_t)`` against ``y_t``, predicted before the update.

    Parameters
    ----------
    trace : Trace or array (T,)
        A learner's trace (its ``predictions``) or the predictions themselves.
    y : array (T,)
        Labels, each -1 or +1.
    ties : {"error", "half", "positive"}, default "error"
        How a score of exactly 0 (``w = 0``) counts: a mistake (never overstates), half
        right, or the label +1.

    Returns
    -------
    RunningScore
        ``curve[t-1]`` is the fraction right among the first t predictions; ``final``
        is ``curve[-1]``.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([0.0, 0.3, -1.2, 0.4])  # w_1 = 0 predicts 0
    >>> curve, final = prequential_accuracy(scores, [1, 1, 1, -1])
    >>> curve, final
    (array([0.        , 0.5       , 0.33333333, 0.25      ]), 0.25)
    >>> prequential_accuracy(scores, [1, 1, 1, -1], ties="positive").final
    0.5
    """
    scores = _predictions(trace)
    labels = _labels("y", y, scores.shape[0])
    ties = check_choice("ties", ties, TIES)
    curve = np.cumsum(_correct(scores, labels, ties)) / np.arange(1, scores.shape[0] + 1)
    return RunningScore(curve, float(curve[-1]))


def prequential_mse(trace: Trace | object, y: object) -> RunningScore:
    """Online mean squared error of the predictions ``x_t·w_t`` made before each update.

    ``curve[t-1] = (1/t) Σ_{s<=t} (x_s·w_s − y_s)²`` (no ½, unlike
    :class:`~dpol.losses.SquaredLoss`).

    Parameters
    ----------
    trace : Trace or array (T,)
        A learner's trace (its ``predictions``) or the predictions themselves.
    y : array (T,)
        Real targets.

    Returns
    -------
    RunningScore

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.13, -0.13, 0.64])
    >>> prequential_mse(y + np.array([1.0, -1.0, 2.0]), y)
    RunningScore(curve=array([1., 1., 2.]), final=2.0)
    """
    scores = _predictions(trace)
    target = as_vector("y", y, scores.shape[0])
    curve = np.cumsum((scores - target) ** 2) / np.arange(1, scores.shape[0] + 1)
    return RunningScore(curve, float(curve[-1]))


def holdout_accuracy(w: object, X: object, y: object, *, ties: str = "error") -> float:
    """Accuracy of ``sign(X w)`` on held-out ±1 labels (e.g. a 20% split, JKT G.2).

    Parameters
    ----------
    w : array (d,)
        The model, e.g. ``trace.final_weights``.
    X : array (n, d)
    y : array (n,)
        Labels, each -1 or +1.
    ties : {"error", "half", "positive"}, default "error"
        As in :func:`prequential_accuracy`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 2))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> holdout_accuracy([1.0, 0.0], X, y), holdout_accuracy([-1.0, 0.0], X, y)
    (1.0, 0.0)
    """
    if _ndim("w", w) != 1 or np.size(w) == 0:
        raise fail("w", "be a non-empty 1-d array (d,)", w)
    wv = as_vector("w", w, np.size(w))
    Xm = as_matrix("X", X, wv.shape[0])
    labels = _labels("y", y, Xm.shape[0])
    ties = check_choice("ties", ties, TIES)
    return float(np.mean(_correct(Xm @ wv, labels, ties)))
