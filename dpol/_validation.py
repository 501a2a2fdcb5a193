"""Keyword validators with one message format (layer L0).

Every message reads ``"<name> must <rule>; got <value>"`` so that a user sees which
argument broke which rule (:func:`~dpol.errors.fail` builds it). Validators never mutate
their input; callers validate everything before touching state, so a refused call
consumes nothing. Clipping, which privacy proofs rely on, is in :mod:`dpol.clipping`;
seeding in :mod:`dpol._seeding`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from dpol.errors import fail

__all__ = ["BOUND_RANGE", "as_matrix", "as_vector", "check_bound", "check_choice",
           "check_int", "check_name", "check_real", "fail"]


def check_real(
    name: str,
    value: object,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``value`` as a float after checking type, finiteness and range.

    ``low`` and ``high`` are inclusive unless ``low_open`` / ``high_open``; ``inf`` is
    refused unless ``allow_inf`` (NaN always is). Booleans are not real numbers here.

    Examples
    --------
    >>> check_real("epsilon", 1, low=0.0, low_open=True)
    1.0
    >>> check_real("epsilon", 0.0, low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: epsilon must be > 0.0; got 0.0
    >>> check_real("delta", 1.0, low=0.0, high=1.0, high_open=True)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: delta must be < 1.0; got 1.0
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise fail(name, "be a real number", value)
    try:
        x = float(value)
    except OverflowError as exc:  # an int (or Fraction) beyond float64
        raise fail(name, "fit in float64 (|value| < 1.8e308)", value) from exc
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise fail(name, "be finite" if not allow_inf else "not be NaN", value)
    if low is not None and (x < low or (low_open and x == low)):
        raise fail(name, f"be {'>' if low_open else '>='} {low}", value)
    if high is not None and (x > high or (high_open and x == high)):
        raise fail(name, f"be {'<' if high_open else '<='} {high}", value)
    return x


#: the range a declared bound may take: sensitivities use up to its 4th power (PQFTL's
#: stacked ||x x^T|| and ||y x||), which must stay a normal float64 (1e-240 .. 1e240)
BOUND_RANGE = (1e-60, 1e60)


def check_bound(name: str, value: object) -> float:
    """Return a declared norm or value bound as a float, checked to lie in BOUND_RANGE.

    Examples
    --------
    >>> check_bound("x_bound", 2)
    2.0
    >>> check_bound("y_bound", 1e-300)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: y_bound must be in [1e-60, 1e60]; got 1e-300
    """
    x = check_real(name, value, low=0.0, low_open=True)
    if not BOUND_RANGE[0] <= x <= BOUND_RANGE[1]:
        raise fail(name, "be in [1e-60, 1e60]", value)
    return x


def check_int(name: str, value: object, *, low: int | None = None) -> int:
    """Return ``value`` as an int after checking it is integral and ``>= low``.

    Any ``numbers.Integral`` (numpy integers included) is accepted, booleans and
    integral floats are not.

    Examples
    --------
    >>> check_int("horizon", np.int64(8), low=1)
    8
    >>> check_int("horizon", 8.0, low=1)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: horizon must be an integer; got 8.0
    >>> check_int("horizon", 0, low=1)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: horizon must be an integer >= 1; got 0
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise fail(name, "be an integer", value)
    x = int(value)
    if low is not None and x < low:
        raise fail(name, f"be an integer >= {low}", value)
    return x


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices`` (exact, case-sensitive match).

    Examples
    --------
    >>> check_choice("noise", "laplace", ("gaussian", "laplace"))
    'laplace'
    >>> check_choice("noise", "Gaussian", ("gaussian", "laplace"))
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: noise must be one of 'gaussian', 'laplace'; got 'Gaussian'
    """
    if not isinstance(value, str) or value not in choices:
        raise fail(name, f"be one of {', '.join(map(repr, choices))}", value)
    return value


def check_name(name: str, value: object, names: tuple[str, ...],
               aliases: dict[str, str]) -> str:
    """The canonical name for ``value``: one of ``names``, or an old name in ``aliases``
    (old name -> canonical name), which is read as its canonical name. The registries
    of counters and learners resolve their names here (docs/architecture.md, Names).

    Examples
    --------
    >>> check_name("counter", "window", ("window_tree", "blt"), {"window": "window_tree"})
    'window_tree'
    >>> check_name("counter", "windows", ("window_tree", "blt"), {"window": "window_tree"})
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: counter must be one of 'window_tree', 'blt' (or an old \
name: 'window' for 'window_tree'); got 'windows'
    """
    if isinstance(value, str) and aliases.get(value, value) in names:
        return aliases.get(value, value)
    old = ", ".join(f"{a!r} for {c!r}" for a, c in aliases.items())
    raise fail(name, f"be one of {', '.join(map(repr, names))}"
               + (f" (or an old name: {old})" if aliases else ""), value)


def _as_float_array(name: str, value: object) -> np.ndarray:
    """Convert to a float64 array, refusing non-numeric, boolean and complex input."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.is_masked(value):
        raise fail(name, "have no masked entries", value)
    try:  # subclasses (np.matrix, masked arrays) become plain arrays
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise fail(name, "be a numeric array", value) from exc
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise fail(name, "have a real numeric dtype (int or float)", arr)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise fail(name, "contain only finite values (no NaN or inf)", arr)
    wide = arr.dtype.itemsize > 8  # long double: the only input float64 can overflow on
    with np.errstate(over="ignore"):  # long double beyond float64 becomes inf, refused below
        arr = arr.astype(np.float64, copy=True)
    if wide and not np.all(np.isfinite(arr)):  # one pass less for the usual float64 input
        raise fail(name, "fit in float64 (|value| < 1.8e308)", value)
    return arr


def as_vector(name: str, value: object, dim: int) -> np.ndarray:
    """A fresh finite float64 vector of length ``dim`` (a scalar is accepted when dim == 1).

    Integers are converted; booleans, complex numbers, NaN and inf are refused. The
    result is always a copy, so callers may modify it.

    Examples
    --------
    >>> as_vector("x", [1, 2], 2), as_vector("x", 3, 1)
    (array([1., 2.]), array([3.]))
    >>> as_vector("x", [1.0, 2.0, 3.0], 2)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: x must have shape (2,); got array([1. 2. 3.], dtype=float64)
    >>> as_vector("x", [1.0, np.nan], 2)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: x must contain only finite values (no NaN or inf);
    got array([ 1. nan], dtype=float64)
    """
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (dim,):
        # the per-step case (learn_one, add): one copy and one check. A finite x . x means
        # every entry is finite (squares cannot cancel; NaN and inf propagate); vdot costs
        # 1.2 us where isfinite().all() costs 3 us (measured, d = 10) and, unlike dot, does
        # not warn when finite entries overflow it: those take the full path below. Long
        # vectors (a block's labels) are summed instead: OpenBLAS splits a dot over
        # threads from 10^4 entries, whose waking cost 7 ms of CPU for 10^5 (measured)
        arr = value.copy()
        if math.isfinite(np.vdot(arr, arr) if dim < 10_000 else arr.sum()):
            return arr
    arr = _as_float_array(name, value)  # every other input, and the error messages
    if arr.ndim == 0 and dim == 1:
        arr = arr.reshape(1)
    if arr.shape != (dim,):
        raise fail(name, f"have shape ({dim},)", arr)
    return arr


def as_matrix(name: str, value: object, dim: int, *, allow_empty: bool = False) -> np.ndarray:
    """A fresh finite float64 array of shape (n, dim); a 1-d array is accepted when dim == 1.

    ``n = 0`` is refused unless ``allow_empty``. Dtype and finiteness rules as
    :func:`as_vector`.

    Examples
    --------
    >>> as_matrix("X", [1.0, 2.0], 1).shape, as_matrix("X", np.zeros((0, 2)), 2,
    ...                                                 allow_empty=True).shape
    ((2, 1), (0, 2))
    >>> as_matrix("X", np.ones((1, 2)), 3)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: X must have shape (n, 3); got array([[1. 1.]], dtype=float64)
    """
    arr = _as_float_array(name, value)
    if arr.ndim == 1 and dim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise fail(name, f"have shape (n, {dim})", arr)
    if arr.shape[0] == 0 and not allow_empty:
        raise fail(name, "contain at least one row", arr)
    return arr
