"""What the trivial fallback's two mechanisms sum, row by row
(:class:`~dpol.learners.trivial_fallback.WithTrivialFallback`, whose Privacy section
bounds their sensitivities): the labels as the prior sums them, and the model's 0-1
errors as the gate counts them.
"""

from __future__ import annotations

import numpy as np

from dpol._validation import fail

__all__ = ["block_sums", "check_offset", "prior_labels"]


def _classes(margins: np.ndarray) -> np.ndarray:
    """Class of each margin: +1 / -1 (above 0 or not) for scalars, argmax of K."""
    return np.argmax(margins, axis=-1) if margins.ndim > 1 else np.where(margins > 0, 1, -1)


def block_sums(model: np.ndarray, labels: np.ndarray,
               classes: np.ndarray) -> tuple[np.ndarray, float]:
    """The two encoders on rows of one block, before noise: the sum of the (clipped)
    labels, and the count of the model's 0-1 errors (its margins' classes against the
    labels')."""
    return labels.sum(axis=0), float(np.sum(_classes(model) != classes))


def check_offset(offset: object, shape: tuple, link: str) -> float | np.ndarray:
    """``offset`` (the labels' public centre) as a finite float or (K,) array (0 for
    None), or one clear error naming it; nonzero only with the ``"rate"`` link.

    >>> check_offset(None, (), "rate"), check_offset(0.5, (), "rate")
    (0.0, 0.5)
    """
    if offset is None:
        return np.zeros(shape) if shape else 0.0
    value = np.asarray(offset, dtype=np.float64)
    if value.shape != shape or not np.all(np.isfinite(value)):
        kind = f"array of shape {shape}" if shape else "number"
        raise fail("offset", f"be a finite {kind} (the labels' public centre)", offset)
    if np.any(value != 0.0) and link != "rate":
        raise fail("offset", "be 0 with link='logit' (a centre is a least-squares "
                   "learner's, on the labels' scale)", offset)
    return value if shape else float(value)


def prior_labels(y: np.ndarray, offset: object, outputs: int,
                 size: float) -> tuple[np.ndarray, np.ndarray]:
    """(the labels the prior sums, their classes) of labels ``y`` centred by ``offset``:
    two classes as -``size`` / +``size`` (+1 / -1 classes), K = ``outputs`` classes as
    one-hot rows (class indices); anything else one clear error naming y.

    >>> prior_labels(np.array([0.6, -1.4]), 0.4, 1, 0.6)[0].tolist()
    [0.6, -0.6]
    """
    y = y + offset  # the labels themselves (centred by the learner's caller)
    if outputs == 1:
        # the gate reads the prior's errors off its label sums: two classes as -1 / +1
        # (within rounding: centred labels come back from y - b + b)
        if not np.allclose(np.abs(y), 1.0, rtol=0.0, atol=1e-9):
            raise fail("y", "be -1 or +1 (two classes; the prior's errors are read "
                       "off its label sums)", y - offset)
        classes = np.where(y > 0, 1, -1)
        return classes * size, classes
    classes = np.argmax(y, axis=-1)
    one_hot = np.eye(outputs)[classes]
    # centred one-hot rows come back from y - b + b within rounding, not exactly
    if not np.allclose(y, one_hot, rtol=0.0, atol=1e-9):
        raise fail("y", f"be one-hot rows of {outputs} classes (the prior's sqrt(2) "
                   "sensitivity holds for them only)", y - offset)
    return one_hot, classes
