"""Keyword validators with one message format (layer L0).

Every message reads ``"<name> must <rule>; got <value>"`` so that a user sees which
argument broke which rule. Validators never mutate their input; callers validate
everything before touching state, so a refused call consumes nothing.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from dpol.errors import InvalidInputError

__all__ = [
    "as_matrix",
    "as_vector",
    "check_choice",
    "check_int",
    "check_real",
    "clip_examples",
    "clip_norms",
    "clip_rows_l2",
    "exceeds_l2",
    "fail",
    "resolve_rng",
    "scale_rows_l2",
    "spawn_seeds",
]


def _show(value: object) -> str:
    """Short repr of a value for an error message (arrays are summarised)."""
    if isinstance(value, np.ndarray):
        if value.size == 0:  # no values to show: the shape is the whole story
            return f"array([], shape={value.shape}, dtype={value.dtype})"
        if value.size <= 6:
            return f"array({np.array2string(value, precision=4)}, dtype={value.dtype})"
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def fail(name: str, rule: str, value: object) -> InvalidInputError:
    """Build the uniform error ``"<name> must <rule>; got <value>"``.

    The error is returned, not raised, so callers write ``raise fail(...)``. Long values
    are shortened: arrays above 6 entries by their shape and dtype, reprs to 80 characters.

    Examples
    --------
    >>> fail("horizon", "be an integer >= 1", 0)
    InvalidInputError('horizon must be an integer >= 1; got 0')
    >>> print(fail("x", "have shape (2,)", np.zeros(30)))
    x must have shape (2,); got array of shape (30,) and dtype float64
    >>> print(fail("X", "contain at least one row", np.zeros((0, 2))))
    X must contain at least one row; got array([], shape=(0, 2), dtype=float64)
    """
    return InvalidInputError(f"{name} must {rule}; got {_show(value)}")


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
        # not warn when finite entries overflow it: those take the full path below
        arr = value.copy()
        if math.isfinite(np.vdot(arr, arr)):
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


def clip_norms(rows: np.ndarray) -> np.ndarray:
    """The l2 norm of every row of a 2-d array, as every clip of the library decides it.

    One formula for the per-step paths (``Counter.add``, ``learn_one``) and the vectorized
    ones (``run``), so both clip the same rows, bit for bit. A huge finite row's norm
    overflows to inf; einsum and sqrt do so without a warning (no errstate: 1.5 us a step).

    >>> clip_norms(np.array([[3.0, 4.0], [1e200, 1e200]])).tolist()
    [5.0, inf]
    """
    return np.sqrt(np.einsum("ij,ij->i", rows, rows))


def exceeds_l2(vec: np.ndarray, bound: float) -> bool:
    """Whether :func:`clip_rows_l2` would clip ``vec`` (finite, 1-d) as a row: the same test.

    (A cheaper BLAS vdot pre-test was measured and dropped: unit-norm data, the usual
    case, sits at the bound to within ulps, where only :func:`clip_norms` can decide.)

    >>> exceeds_l2(np.array([3.0, 4.0]), 5.0), exceeds_l2(np.array([3.0, 4.0]), 4.9)
    (False, True)
    """
    # clip_norms of the one row, with math.sqrt: the same correctly rounded float, and
    # the ufunc on a 1-element array cost 2-4k instructions a step more (valgrind)
    rows = vec[None, :]
    return math.sqrt(np.einsum("ij,ij->i", rows, rows)[0]) > bound


def clip_rows_l2(rows: np.ndarray, bound: float) -> tuple[np.ndarray, int]:
    """Scale every row of a 2-d array down to l2 norm ``bound``, in place.

    Returns the array and the number of rows that were clipped. Clipping is part of
    the privacy proof (it bounds the sensitivity), so callers count it, never skip it.
    A row within a relative 1e-12 above the bound (rounding) is scaled but not counted.

    Examples
    --------
    >>> rows = np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> out, n = clip_rows_l2(rows, 1.0)
    >>> out is rows, rows.round(4).tolist(), n  # in place; one row was above the bound
    (True, [[0.6, 0.8], [0.3, 0.4]], 1)
    """
    norms = clip_norms(rows)
    over = norms > bound
    if np.any(over):
        scale_rows_l2(rows, norms, over, bound)
    # every row above the bound is scaled down; only real overshoots are counted, not a
    # norm one rounding step above a bound the caller's own clipping already enforced
    return rows, int(np.count_nonzero(norms > bound * (1.0 + 1e-12)))


def clip_examples(X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float, *,
                  copy: bool = True) -> tuple[np.ndarray, np.ndarray, int]:
    """Clip rows of X to l2 norm ``x_bound`` and y to [-y_bound, y_bound]; count the examples.

    The data bounds of a loss are what its privacy constants assume, so every learner and
    batch solver passes its examples through here (the caller's arrays are not modified).
    ``copy=False``: X is an array the caller made for this (``run``'s validated copy),
    and its rows above the bound are scaled in place, sparing a second copy of a stream.

    Examples
    --------
    >>> X, y, n = clip_examples(np.array([[3.0, 4.0], [0.1, 0.0]]), np.array([0.5, -2.0]),
    ...                         1.0, 1.0)
    >>> X.round(2).tolist(), y.tolist(), n
    ([[0.6, 0.8], [0.1, 0.0]], [0.5, -1.0], 2)
    """
    norms = clip_norms(X)
    over_x = norms > x_bound
    over_y = np.abs(y) > y_bound
    if np.any(over_x):
        if copy:
            X = X.copy()
        scale_rows_l2(X, norms, over_x, x_bound)
    y = np.clip(y, -y_bound, y_bound)
    # as clip_rows_l2: a norm within a rounding step of the bound is scaled, not counted
    counted_x = norms > x_bound * (1.0 + 1e-12)
    return X, y, int(np.count_nonzero(counted_x | over_y))


def scale_rows_l2(rows: np.ndarray, norms: np.ndarray, over: np.ndarray, bound: float) -> None:
    """Scale ``rows[over]`` (finite) to l2 norm ``bound`` in place, given their ``norms``.

    A norm that overflowed to inf (entries near 1e154 and above) would scale its row to
    zero; such rows are first divided by their largest entry, so they keep their direction.

    Examples
    --------
    >>> rows = np.array([[3.0, 4.0], [1e300, -1e300]])
    >>> norms = clip_norms(rows)
    >>> scale_rows_l2(rows, norms, norms > 1.0, 1.0); rows.round(4)
    array([[ 0.6   ,  0.8   ],
           [ 0.7071, -0.7071]])
    """
    finite = over & np.isfinite(norms)
    if np.any(finite):
        rows[finite] *= (bound / norms[finite])[:, None]
    huge = over & ~np.isfinite(norms)
    if np.any(huge):
        unit = rows[huge] / np.max(np.abs(rows[huge]), axis=1)[:, None]
        rows[huge] = unit * (bound / clip_norms(unit))[:, None]


def resolve_rng(seed: object) -> np.random.Generator:
    """An ``np.random.Generator`` from ``None``, an int, a SeedSequence or a Generator.

    A Generator is returned as it is (shared, not copied); an int must be >= 0.

    Examples
    --------
    >>> rng = resolve_rng(0)
    >>> resolve_rng(rng) is rng, int(rng.integers(100)) == int(resolve_rng(0).integers(100))
    (True, True)
    >>> resolve_rng(-1)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: seed must be None, a non-negative int, a SeedSequence
    or a Generator; got -1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (Integral, np.random.SeedSequence)):
        if isinstance(seed, bool) or (isinstance(seed, Integral) and int(seed) < 0):
            raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)
        return np.random.default_rng(seed)
    raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)


def spawn_seeds(seed: object, n: int) -> list[np.random.SeedSequence | np.random.Generator]:
    """``n`` independent child seeds of ``seed`` (None, int, SeedSequence, Generator).

    Sub-components (two counters, a projection and a noise stream) get their own
    streams, so adding draws to one never shifts another's. An int gives the same
    children on every call; a SeedSequence or Generator spawns from its own seed
    sequence, which advances (as ``SeedSequence.spawn`` does), so a second call gives
    new children.

    The children are SeedSequences, except for a Generator: then Generators of its bit
    generator's kind, as numpy's ``Generator.spawn`` makes them (numpy >= 1.25). Every
    consumer takes either (``np.random.default_rng`` returns a Generator unchanged), and
    a PCG64 Generator's children draw what ``default_rng`` of the child sequences draws.
    So ``seed=np.random.Generator(np.random.SFC64(s))`` puts every stream of a learner on
    SFC64, whose normals cost 17% less than PCG64's (issue 8, docs/benchmarks).

    Examples
    --------
    >>> a, b = spawn_seeds(0, 2)
    >>> a.spawn_key, b.spawn_key, a.entropy
    ((0,), (1,), 0)
    >>> c = spawn_seeds(0, 2)[0]  # an int seed: reproducible
    >>> int(np.random.default_rng(a).integers(1000)) == int(np.random.default_rng(c).integers(1000))
    True
    >>> sfc = np.random.Generator(np.random.SFC64(0))
    >>> [type(g.bit_generator).__name__ for g in spawn_seeds(sfc, 2)]
    ['SFC64', 'SFC64']
    >>> spawn_seeds(-1, 2)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: seed must be None, a non-negative int, a SeedSequence
    or a Generator; got -1
    """
    if isinstance(seed, np.random.Generator):
        kind = type(seed.bit_generator)
        return [np.random.Generator(kind(child)) for child in seed.bit_generator.seed_seq.spawn(n)]
    if isinstance(seed, np.random.SeedSequence):
        seq = seed
    elif seed is None or (isinstance(seed, Integral) and not isinstance(seed, bool)
                          and int(seed) >= 0):
        seq = np.random.SeedSequence(None if seed is None else int(seed))
    else:
        raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)
    return seq.spawn(n)
