"""Simplex: no gauge (0 is outside), its dimension.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.sets import GaugeUndefinedError, Simplex


def test_simplex_has_no_gauge():
    with pytest.raises(GaugeUndefinedError, match="does not contain 0"):
        Simplex(3).gauge(np.ones(3))


def test_bad_dimension():
    with pytest.raises(InvalidInputError, match="dim must be an integer"):
        Simplex(2.5)
