"""The trace of the rows a learner did not learn: the trivial fallback's first rows
(:class:`~dpol.learners.trivial_fallback.WithTrivialFallback` with ``learner_from``),
which the prior alone learns and predicts. The learner's iterate stays its first,
public one there, and the trace says so: it covers every row of the stream.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from dpol.learners._base import OnlineLearner, Trace
from dpol.learners._wrapper import LearnerWrapper, innermost
from dpol.learners.postprocess import row_dot

__all__ = ["idle_trace", "joined", "linear_trace"]


def linear_trace(learner: OnlineLearner) -> bool:
    """Whether the learner's trace is of a linear model, x_t . w_t (not kernel
    regression's, whose iterates live in its features' space): ``idle_trace`` can
    state it.

    >>> from dpol.learners import PrivateQuadraticFTL
    >>> linear_trace(PrivateQuadraticFTL(2, horizon=8, epsilon=1.0, seed=0))
    True
    """
    return type(innermost(learner)).predict_one is OnlineLearner.predict_one


def _scored(learner: OnlineLearner, X: np.ndarray, y: np.ndarray
            ) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]:
    """(w -> f_t(w) on each row, the rows x_t . w is taken on) as the learner's trace
    states them, the rows mapped and clipped once: a wrapper maps and clips them itself
    in ``_loss_value`` (its predictions are of the rows it maps), a learner is given its
    clipped rows."""
    if isinstance(learner, LearnerWrapper):
        return (lambda w: learner._loss_value(w, X, y)), learner.base_rows(X)
    X, y, _ = learner._clip(X, y, copy=True)
    return (lambda w: learner._loss_value(w, X, y)), X


def idle_trace(learner: OnlineLearner, X: np.ndarray, y: np.ndarray,
               comparator: object = None) -> Trace:
    """The trace of rows X, y (validated) that ``learner`` (fresh) sees and does not
    learn: its first iterate w0 at every step, its losses f_t(w0), no noise and no
    clipping counted (nothing was learnt or released).

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> m = PrivateQuadraticFTL(2, horizon=8, epsilon=1.0, alpha=0.01, seed=0)
    >>> t = idle_trace(m, np.ones((3, 2)) / 2, np.ones(3), comparator=np.zeros(2))
    >>> t.weights.shape, t.predictions.tolist(), m.t_
    ((3, 2), [0.0, 0.0, 0.0], 0)
    """
    w0 = np.array(learner.weights, dtype=np.float64)
    loss, rows = _scored(learner, X, y)
    weights = np.repeat(w0[None, ...], len(X), axis=0)
    losses, regret = loss(w0), None
    if comparator is not None:
        # in the innermost learner's coordinates (a wrapper's lifted or mapped rows)
        regret = np.cumsum(losses - loss(innermost(learner)._check_weights("comparator",
                                                                           comparator)))
    return Trace(weights=weights, losses=losses, predictions=row_dot(rows, weights),
                 final_weights=w0, privacy=learner.privacy, n_clipped=learner.n_clipped_,
                 regret=regret)


def joined(first: Trace, then: Trace) -> Trace:
    """One trace of two consecutive parts of a stream (``then``'s regret continues
    ``first``'s sum; its final iterate, guarantee and clipped count are the whole's)."""
    regret = None
    if first.regret is not None and then.regret is not None:
        last = first.regret[-1] if len(first.regret) else 0.0
        regret = np.concatenate([first.regret, then.regret + last])
    return dataclasses.replace(
        then, weights=np.concatenate([first.weights, then.weights]),
        losses=np.concatenate([first.losses, then.losses]),
        predictions=np.concatenate([first.predictions, then.predictions]),
        regret=regret, model_predictions=None)
