"""dpol.errors: which built-in each error is (what callers catch), warnings apart from
errors, and ``fail``'s one message format with its shortened values."""

from __future__ import annotations

import numpy as np
import pytest

from dpol import errors
from dpol.errors import (
    BudgetExceededError,
    DpolError,
    GaugeUndefinedError,
    HorizonExceededError,
    InvalidInputError,
    fail,
)

#: each error and the built-in exception Python users catch it as
BUILTIN = {InvalidInputError: ValueError, HorizonExceededError: RuntimeError,
           BudgetExceededError: RuntimeError, GaugeUndefinedError: NotImplementedError}


def test_every_error_is_a_dpol_error_and_its_builtin():
    for cls, builtin in BUILTIN.items():
        assert issubclass(cls, DpolError) and issubclass(cls, builtin)
    assert issubclass(DpolError, Exception) and not issubclass(DpolError, Warning)


def test_every_warning_is_a_user_warning_and_no_error():
    names = [n for n in dir(errors) if n.endswith("Warning")]
    assert len(names) >= 8  # ClippingWarning ... UnknownFeatureWarning
    for name in names:
        cls = getattr(errors, name)
        assert issubclass(cls, UserWarning) and not issubclass(cls, DpolError), name
    assert set(BUILTIN) | {DpolError} == {getattr(errors, n) for n in dir(errors)
                                          if n.endswith("Error")}


def test_fail_builds_the_message_and_keeps_the_argument():
    err = fail("horizon", "be an integer >= 1", 0)
    assert isinstance(err, InvalidInputError) and str(err) == (
        "horizon must be an integer >= 1; got 0")
    assert (err.argument, err.value) == ("horizon", 0)


@pytest.mark.parametrize(("value", "shown"), [
    (np.array([1.0, 2.5]), "array([1.  2.5], dtype=float64)"),
    (np.arange(6, dtype=np.int64), "array([0 1 2 3 4 5], dtype=int64)"),
    (np.arange(7, dtype=np.int64), "array of shape (7,) and dtype int64"),
    (np.zeros((0, 3)), "array([], shape=(0, 3), dtype=float64)"),
    (np.array([1.0 / 3.0]), "array([0.3333], dtype=float64)"),  # 4 digits
    ("x" * 78, repr("x" * 78)),  # 80 characters: shown whole
    ("x" * 79, repr("x" * 79)[:77] + "..."),  # 81: cut to 80
])
def test_values_are_shown_short(value, shown):
    assert str(fail("v", "r", value)) == f"v must r; got {shown}"
