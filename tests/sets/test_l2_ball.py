"""L2Ball: its linear oracle in closed form, its dimension.

What every set must satisfy (projection, oracles, geometry): test_sets.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.sets import L2Ball


def test_closed_form_oracle():
    rng = np.random.default_rng(9)
    for _ in range(20):
        c = rng.normal(size=6)
        np.testing.assert_allclose(L2Ball(6, 2.0).linear_oracle(c), -2.0 * c / np.linalg.norm(c))


def test_bad_dimension():
    with pytest.raises(InvalidInputError, match="dim must be an integer >= 1"):
        L2Ball(0)
