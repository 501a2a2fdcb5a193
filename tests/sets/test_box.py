"""Box: its gauge where a side of the box is 0 or 0 is outside, its bounds.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.sets import Box, GaugeUndefinedError


def test_gauge_of_a_half_open_box():
    half_open = Box([0.0, -1.0], [1.0, 1.0])
    assert half_open.gauge([-0.1, 0.0]) == math.inf and half_open.gauge([0.5, -0.25]) == 0.5


def test_box_without_0_has_no_gauge():
    with pytest.raises(GaugeUndefinedError, match="does not contain 0"):
        Box(1.0, 2.0, dim=3).gauge(np.ones(3))


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Box([0.0, 1.0], [1.0, 0.5]), "high must be >= low"),
        (lambda: Box(0.0, 1.0), "dim must be given"),
        (lambda: Box([0.0, np.nan], 1.0), "low must contain only finite"),
        (lambda: Box([0.0, 0.0], [1.0, 1.0, 1.0]), r"high must have shape \(2,\)"),
    ],
)
def test_bad_bounds(build, match):
    with pytest.raises(InvalidInputError, match=match):
        build()
