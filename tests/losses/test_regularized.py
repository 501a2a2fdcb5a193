"""Ridge regularisation of a loss: nesting, delegation to the base loss, its arguments.

Its gradient and declared constants are checked with every loss in test_losses.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.losses import HingeLoss, Loss, Regularized, SquaredLoss


def test_regularized_nests_and_delegates():
    base = HingeLoss(h=0.5, x_bound=2.0, y_bound=1.0)
    twice = Regularized(Regularized(base, 0.25), 0.5)
    assert (twice.x_bound, twice.y_bound) == (2.0, 1.0)
    assert twice.strong_convexity == 0.75 and twice.smoothness == base.smoothness + 0.75
    assert twice.lipschitz(2.0) == base.lipschitz(2.0) + 0.75 * 2.0
    w, x = np.array([0.3, -1.0]), np.array([0.5, 0.5])
    assert twice.value(w, x, 1) == pytest.approx(base.value(w, x, 1) + 0.375 * (w @ w))
    assert isinstance(twice, Loss)


@pytest.mark.parametrize(
    ("make_loss", "match"),
    [
        (lambda: Regularized(SquaredLoss(), -0.5), "alpha must be >= 0"),
        (lambda: Regularized("squared", 0.5), "loss must be a dpol.losses.Loss"),
    ],
)
def test_bad_regularized_arguments(make_loss, match):
    with pytest.raises(InvalidInputError, match=match):
        make_loss()
