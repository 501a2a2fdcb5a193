"""What every loss inherits from the base classes: input checks, domains, default sensitivity.

``Loss.value``/``Loss.grad`` validate their arrays and ``domain_radius`` the domain before
any subclass computes; ``LinearLoss`` checks the data bounds and gives the replace-one
gradient sensitivity by the triangle inequality unless a loss proves less (the logistic
loss does: test_logistic.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda L: L.value([np.nan, 1.0], [1.0, 0.0], 1.0), "w must contain only finite"),
        (lambda L: L.value([[1.0, 2.0]], [1.0, 0.0], 1.0), "w must be a non-empty 1-d array"),
        (lambda L: L.value([], [], 1.0), "w must be a non-empty 1-d array"),
        (lambda L: L.value([[1.0], [2.0, 3.0]], [1.0, 0.0], 1.0), "w must be a numeric array"),
        (lambda L: L.grad([1.0, 2.0], [1.0, 0.0, 3.0], 1.0), r"x must have shape \(2,\)"),
        (lambda L: L.grad([1.0, 2.0], np.zeros((2, 2, 2)), 1.0), "x must be a vector of shape"),
        (lambda L: L.grad([1.0, 2.0], [[1.0, np.inf]], [1.0]), "x must contain only finite"),
        (lambda L: L.grad([1.0, 2.0], [[1.0, 2.0]] * 3, [1.0, 1.0]), r"y must have shape \(3,\)"),
        (lambda L: L.value([1.0, 2.0], [1.0, 0.0], np.nan), "y must contain only finite"),
        (lambda L: L.value([1.0, 2.0], [1.0, 0.0], "a"), "y must have a real numeric dtype"),
        (lambda L: L.lipschitz(-1.0), "domain must be >= 0"),
        (lambda L: L.lipschitz("ball"), "domain must be None, a radius"),
    ],
)
@pytest.mark.parametrize("loss", [SquaredLoss(), LogisticLoss(), Regularized(HingeLoss(), 0.1)])
def test_bad_input_names_the_argument(loss, call, match):
    with pytest.raises(InvalidInputError, match=match):
        call(loss)


@pytest.mark.parametrize(
    ("make_loss", "match"),
    [
        (lambda: SquaredLoss(x_bound=0.0), "x_bound must be > 0"),
        (lambda: LogisticLoss(x_bound=np.inf), "x_bound must be finite"),
        (lambda: LogisticLoss(y_bound=-1.0), "y_bound must be > 0"),
        # y_bound = 0 made the constants vanish (logistic: L = 0) while the learners, which
        # need y_bound > 0, read it as unset and clipped labels to +-1: no noise for
        # gradients that were not 0. Refused at the loss, like the learners refuse it.
        (lambda: LogisticLoss(y_bound=0.0), "y_bound must be > 0.0; got 0.0"),
        (lambda: SquaredLoss(y_bound=0.0), "y_bound must be > 0.0; got 0.0"),
        (lambda: HingeLoss(y_bound=0.0), "y_bound must be > 0.0; got 0.0"),
    ],
)
def test_bad_data_bounds(make_loss, match):
    with pytest.raises(InvalidInputError, match=match):
        make_loss()


def test_default_gradient_sensitivity_is_the_triangle_inequality():
    # replace-one: two gradients of norm <= L are at most 2 L apart; add/remove: L
    assert SquaredLoss().gradient_sensitivity(2.0) == 2 * SquaredLoss().lipschitz(2.0)
    assert HingeLoss().gradient_sensitivity(1.0, "add_remove") == HingeLoss().lipschitz(1.0)
