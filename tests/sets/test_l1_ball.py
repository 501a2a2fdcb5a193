"""L1Ball: its gauge on the boundary, its radius.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import pytest

from dpol.errors import InvalidInputError
from dpol.sets import L1Ball


def test_gauge_on_the_boundary():
    assert L1Ball(3, 2.0).gauge([1.0, -0.5, 0.5]) == 1.0


def test_bad_radius():
    with pytest.raises(InvalidInputError, match="radius must be > 0"):
        L1Ball(3, radius=-1.0)
