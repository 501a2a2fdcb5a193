"""What every set inherits from dpol.sets._base: argument checks, bounded entries, the
simplex projection.

The checks run before any set's own method; test_sets.py holds what each set computes.
"""

from __future__ import annotations

import numpy as np
import pytest
from set_cases import NAMES, make_set

from dpol.errors import InvalidInputError
from dpol.sets import simplex_projection
from dpol.sets._base import MAX_ENTRY, point_argument


@pytest.mark.parametrize(("name", "d"), [(n, 2) for n in (*NAMES, "nuclear")])
def test_bad_arguments_name_the_argument(name, d):
    S = make_set(name, d)
    inside = S.project(np.zeros(d))
    far = S.linear_oracle(np.ones(d)) - 10.0 * np.ones(d)
    cases = [
        (lambda: S.project([1.0, 2.0, 3.0]), r"x must have shape \(2,\)"),
        (lambda: S.project([np.nan, 1.0]), "x must contain only finite"),
        (lambda: S.linear_oracle([np.inf, 0.0]), "c must contain only finite"),
        (lambda: S.local_linear_oracle(inside, -1.0, [1.0, 0.0]), "r must be >= 0"),
        (lambda: S.local_linear_oracle(inside, np.nan, [1.0, 0.0]), "r must not be NaN"),
        (lambda: S.local_linear_oracle(inside, 0.1, [1.0]), r"c must have shape \(2,\)"),
        (lambda: S.local_linear_oracle(far, 0.1, [1.0, 0.0]), "x must lie in"),
        (lambda: S.contains(inside, tol=-1.0), "tol must be >= 0"),
    ]
    for call, match in cases:
        with pytest.raises(InvalidInputError, match=match):
            call()


def test_point_argument_refuses_entries_above_max_entry_only():
    ok = np.array([MAX_ENTRY, -MAX_ENTRY])
    np.testing.assert_array_equal(point_argument("x", ok, 2), ok)
    over = np.array([0.0, -np.nextafter(MAX_ENTRY, np.inf)])
    with pytest.raises(InvalidInputError, match=r"^x must have entries of magnitude"):
        point_argument("x", over, 2)


def test_simplex_projection_keeps_the_total_far_from_0():
    # |v| >> total: without shifting max(v) to 0 the total is lost to rounding
    # (1e20 - 1 == 1e20) and no threshold qualifies; the exact answer is a vertex
    out = simplex_projection(np.array([1e20, 0.0, -1e20]))
    np.testing.assert_array_equal(out, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(simplex_projection(np.array([-3e18, 5e18]), 2.0), [0.0, 2.0])
