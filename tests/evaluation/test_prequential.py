"""dpol/evaluation/prequential.py: online (test-then-train) accuracy and squared error,
held-out accuracy, and their input checks."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.evaluation import holdout_accuracy, prequential_accuracy, prequential_mse
from dpol.learners import PrivateIGD
from dpol.losses import LogisticLoss, Regularized
from dpol.sets import L2Ball


# ------------------------------------------------------------------------- prequential
def test_prequential_accuracy_by_hand():
    scores = np.array([0.0, 0.5, -2.0, 1.0, -0.1])
    y = np.array([1, 1, 1, -1, -1])
    # right: no (tie), yes, no, no, yes
    curve, final = prequential_accuracy(scores, y)
    np.testing.assert_allclose(curve, [0, 1 / 2, 1 / 3, 1 / 4, 2 / 5])
    assert final == pytest.approx(0.4)
    assert prequential_accuracy(scores, y, ties="half").final == pytest.approx(0.5)
    assert prequential_accuracy(scores, y, ties="positive").final == pytest.approx(0.6)
    assert prequential_accuracy(-scores, -y).final == pytest.approx(0.4)


def test_prequential_accuracy_scores_each_iterate_before_its_update():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(200, 3)) * 0.5
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, 1.0, -1.0)
    learner = PrivateIGD(3, loss=Regularized(LogisticLoss(), 0.1), domain=L2Ball(3, 3.0),
                         horizon=200, epsilon=1.0, delta=1e-5, seed=1)
    Xc = X / np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    trace = learner.run(Xc, y)
    right = np.sign(np.einsum("ij,ij->i", Xc, trace.weights)) == y  # w_t before (x_t, y_t)
    curve, final = prequential_accuracy(trace, y)
    np.testing.assert_allclose(curve, np.cumsum(right) / np.arange(1, 201), atol=1e-15)
    assert final == curve[-1]


def test_prequential_mse_and_holdout_by_hand():
    curve, final = prequential_mse(np.array([1.0, 0.0, 2.0]), np.array([0.0, 2.0, 2.0]))
    np.testing.assert_allclose(curve, [1.0, 2.5, 5.0 / 3.0])
    assert final == pytest.approx(5.0 / 3.0)
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 1.0], [1.0, -1.0]])
    y = np.array([1.0, -1.0, -1.0, 1.0])
    assert holdout_accuracy([1.0, 0.0], X, y) == 0.75  # scores 1, 0, −1, 1: the tie errs
    assert holdout_accuracy([1.0, 0.0], X, y, ties="half") == 0.875
    assert holdout_accuracy([2.0, -1.0], X, y) == 1.0


# ------------------------------------------------------------------------------ errors
X0 = np.random.default_rng(15).normal(size=(6, 2))  # any finite 6 x 2 rows
U0 = np.zeros(2)
BAD_CALLS = {
    "labels": (lambda: prequential_accuracy([0.5, -0.5], [1, 0]), "y"),
    "ties": (lambda: prequential_accuracy([0.5, -0.5], [1, -1], ties="coin"), "ties"),
    "trace": (lambda: prequential_accuracy(np.zeros((2, 2)), [1, -1]), "trace"),
    "mse-y": (lambda: prequential_mse([0.5, -0.5], [1.0]), "y"),
    "holdout-w": (lambda: holdout_accuracy(np.zeros((2, 2)), X0, np.ones(6)), "w"),
    "holdout-X": (lambda: holdout_accuracy(U0, np.zeros((6, 3)), np.ones(6)), "X"),
    "holdout-y": (lambda: holdout_accuracy(U0, X0, np.full(6, 0.5)), "y"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_input_names_the_argument(case):
    call, name = BAD_CALLS[case]
    with pytest.raises(InvalidInputError, match=rf"^{name} must .*; got "):
        call()
