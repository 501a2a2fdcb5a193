"""dpol._validation: each validator's rules at their edges, and its message naming the
argument, the rule and the value. (The per-step fast path of ``as_vector`` is held to the
full one in tests/learners/test_fast_checks.py.)
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest

from dpol._validation import (
    BOUND_RANGE,
    as_matrix,
    as_vector,
    check_bound,
    check_choice,
    check_int,
    check_name,
    check_real,
)
from dpol.errors import InvalidInputError


def test_check_real_takes_any_real_number_as_a_float():
    for value in (2, np.int64(2), np.float32(2.0), Fraction(4, 2), 2.0):
        out = check_real("a", value)
        assert out == 2.0 and type(out) is float


@pytest.mark.parametrize(("value", "keywords", "message"), [
    (True, {}, "a must be a real number; got True"),
    ("1", {}, "a must be a real number; got '1'"),
    (1j, {}, "a must be a real number; got 1j"),
    (10**400, {}, "a must fit in float64"),
    (np.nan, {}, "a must be finite; got nan"),
    (np.inf, {}, "a must be finite; got inf"),
    (np.nan, {"allow_inf": True}, "a must not be NaN; got nan"),
    (-0.5, {"low": 0.0}, "a must be >= 0.0; got -0.5"),
    (0.0, {"low": 0.0, "low_open": True}, "a must be > 0.0; got 0.0"),
    (1.5, {"high": 1.0}, "a must be <= 1.0; got 1.5"),
    (1.0, {"high": 1.0, "high_open": True}, "a must be < 1.0; got 1.0"),
])
def test_check_real_refusals_name_the_rule(value, keywords, message):
    with pytest.raises(InvalidInputError, match="^" + re.escape(message)):
        check_real("a", value, **keywords)


def test_check_real_bounds_are_inclusive_unless_open():
    assert check_real("a", 0.0, low=0.0) == 0.0 and check_real("a", 1.0, high=1.0) == 1.0
    assert check_real("a", np.inf, low=0.0, allow_inf=True) == np.inf


def test_check_bound_takes_exactly_its_range():
    low, high = BOUND_RANGE
    assert (check_bound("b", low), check_bound("b", high)) == (low, high)
    for bad in (np.nextafter(low, 0.0), np.nextafter(high, np.inf)):
        with pytest.raises(InvalidInputError, match=r"^b must be in \[1e-60, 1e60\]"):
            check_bound("b", bad)
    with pytest.raises(InvalidInputError, match=r"^b must be > 0\.0; got 0"):
        check_bound("b", 0)


def test_check_int_takes_integers_only():
    assert check_int("n", np.uint8(3)) == 3 and check_int("n", -4) == -4  # no low: any
    assert check_int("n", 2, low=2) == 2
    for bad in (True, 3.0, "3", np.float64(3.0)):
        with pytest.raises(InvalidInputError, match=r"^n must be an integer; got"):
            check_int("n", bad)
    with pytest.raises(InvalidInputError, match=r"^n must be an integer >= 2; got 1"):
        check_int("n", 1, low=2)


def test_check_choice_and_check_name_refuse_what_is_not_one_of_the_names():
    with pytest.raises(InvalidInputError, match=r"^k must be one of 'a', 'b'; got None$"):
        check_choice("k", None, ("a", "b"))
    assert check_name("k", "b", ("a", "b"), {}) == "b"
    assert check_name("k", "old", ("a", "b"), {"old": "a"}) == "a"
    # without old names the message offers none
    with pytest.raises(InvalidInputError, match=r"^k must be one of 'a', 'b'; got 'c'$"):
        check_name("k", "c", ("a", "b"), {})
    with pytest.raises(InvalidInputError, match=r"^k must be one of"):
        check_name("k", ["a"], ("a", "b"), {"old": "a"})  # not a name: not looked up


def test_arrays_are_fresh_float64_copies():
    ints = np.array([[1, 2]], dtype=np.int32)
    out = as_matrix("X", ints, 2)
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0]]
    floats = np.array([[1.0, 2.0]])
    out = as_matrix("X", floats, 2)
    out[0, 0] = 9.0
    assert floats[0, 0] == 1.0  # the caller's array is never touched
    # a masked array with nothing masked is its data, as a plain array
    out = as_vector("x", np.ma.masked_array([1.0, 2.0], mask=[0, 0]), 2)
    assert type(out) is np.ndarray and out.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(("value", "message"), [
    ([[1.0, 2.0], [3.0]], "X must be a numeric array"),
    (np.array([[True, False]]), "X must have a real numeric dtype"),
    (np.array([[1j, 2.0]]), "X must have a real numeric dtype"),
    (np.array([["a", "b"]]), "X must have a real numeric dtype"),
    (np.ma.masked_array([[1.0, 2.0]], mask=[[0, 1]]), "X must have no masked entries"),
    (np.array([[np.inf, 0.0]]), r"X must contain only finite values \(no NaN or inf\)"),
    (np.zeros((0, 2)), "X must contain at least one row"),
    (np.zeros(2), r"X must have shape \(n, 2\)"),
    (np.zeros((1, 2, 1)), r"X must have shape \(n, 2\)"),
])
def test_as_matrix_refusals_name_the_rule(value, message):
    with pytest.raises(InvalidInputError, match="^" + message):
        as_matrix("X", value, 2)


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="long double is float64 here: no value beyond it")
def test_a_long_double_beyond_float64_is_refused_not_made_inf():
    value = np.array([[np.longdouble("1e400")]])
    with pytest.raises(InvalidInputError, match=r"^X must fit in float64 \(\|value\| < 1.8e308\)"):
        as_matrix("X", value, 1)
    assert as_matrix("X", np.array([[np.longdouble("1e300")]]), 1).tolist() == [[1e300]]


def test_one_dimension_takes_a_scalar_or_a_flat_array():
    assert as_vector("x", 3, 1).tolist() == [3.0]
    assert as_matrix("X", [1.0, 2.0, 3.0], 1).shape == (3, 1)
    with pytest.raises(InvalidInputError, match=r"^x must have shape \(2,\)"):
        as_vector("x", 3.0, 2)
