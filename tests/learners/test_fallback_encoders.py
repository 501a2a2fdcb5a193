"""What the trivial fallback's mechanisms sum: the labels as the prior sums them, the
model's 0-1 errors as the gate counts them."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.learners._fallback_encoders import block_sums, prior_labels


def test_two_classes_are_summed_as_plus_or_minus_the_clipped_size():
    # a learner fitting y - 0.4 within y_bound 1 clips the labels to 0.6: the prior sums
    # -0.6 / +0.6, and the classes are those of the labels themselves
    labels, classes = prior_labels(np.array([0.6, -1.4, 0.6]), 0.4, 1, 0.6)
    np.testing.assert_allclose(labels, [0.6, -0.6, 0.6])
    assert classes.tolist() == [1, -1, 1]
    total, errors = block_sums(np.array([0.2, 0.3, -0.1]), labels, classes)
    assert total == pytest.approx(0.6) and errors == 2.0  # rows 2 and 3 misclassified


def test_k_classes_are_summed_as_one_hot_rows_and_errors_by_argmax():
    y = np.eye(3)[[0, 2, 1]]
    labels, classes = prior_labels(y - 0.25, 0.25, 3, 1.0)  # centred, then restored
    np.testing.assert_allclose(labels, y)
    assert classes.tolist() == [0, 2, 1]
    margins = np.array([[0.9, 0.0, 0.1], [0.5, 0.2, 0.3], [0.0, 1.0, 0.0]])
    total, errors = block_sums(margins, labels, classes)
    np.testing.assert_allclose(total, [1.0, 1.0, 1.0])
    assert errors == 1.0  # the second row's argmax is 0, its class 2


def test_labels_the_sensitivity_does_not_cover_are_refused_by_name():
    with pytest.raises(InvalidInputError, match=r"y must be -1 or \+1"):
        prior_labels(np.array([1.0, 0.5]), 0.0, 1, 1.0)
    with pytest.raises(InvalidInputError, match="y must be one-hot rows of 3 classes"):
        prior_labels(np.array([[0.5, 0.5, 0.0]]), 0.0, 3, 1.0)
