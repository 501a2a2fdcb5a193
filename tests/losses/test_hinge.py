"""The smoothed hinge loss: its distance to the hinge and its smoothing width.

Its gradient and declared constants are checked with every loss in test_losses.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.losses import HingeLoss


def test_hinge_approaches_the_hinge():
    m = np.linspace(-3, 3, 601)
    for h in (1.0, 0.1, 1e-3):
        vals = HingeLoss(h=h).value(np.array([1.0]), m[:, None], np.ones_like(m))
        gap = np.maximum(0.0, 1.0 - m) - vals
        assert np.all(gap >= -1e-15) and np.all(gap <= h / 2 + 1e-15)


@pytest.mark.parametrize(
    ("make_loss", "match"),
    [
        (lambda: HingeLoss(h=0.0), "h must be > 0"),
        (lambda: HingeLoss(h="1"), "h must be a real number"),
    ],
)
def test_bad_smoothing_width(make_loss, match):
    with pytest.raises(InvalidInputError, match=match):
        make_loss()
