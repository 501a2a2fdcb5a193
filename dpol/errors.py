"""Exceptions and warnings of dpol (layer L0).

Every error dpol raises on purpose derives from :class:`DpolError`, so callers can
catch the library's refusals in one place. Bad arguments raise :class:`ValueError`
subclasses because that is what Python users (and numpy, scikit-learn) expect.
:func:`fail` builds every :class:`InvalidInputError` the validators raise, in one message
format; it lives here, below every module that raises one.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BudgetExceededError",
    "ClippingWarning",
    "DpolError",
    "ForkedStateWarning",
    "GaugeUndefinedError",
    "HorizonExceededError",
    "InvalidInputError",
    "NonPrivateWarning",
    "NumericalWarning",
    "PaperCalibrationWarning",
    "PriorOnlyWarning",
    "PrivateEstimateWarning",
]


class DpolError(Exception):
    """Base class of every error raised by dpol on purpose.

    Examples
    --------
    >>> [issubclass(cls, DpolError) for cls in (InvalidInputError, HorizonExceededError,
    ...                                         BudgetExceededError, GaugeUndefinedError)]
    [True, True, True, True]
    >>> issubclass(NonPrivateWarning, DpolError)  # warnings are not errors
    False
    >>> from dpol.counters import BinaryTreeCounter
    >>> try:
    ...     BinaryTreeCounter(8, epsilon=-1.0)
    ... except DpolError as exc:  # one handler for every refusal of dpol
    ...     print(f"{type(exc).__name__}: {exc}")
    InvalidInputError: epsilon must be > 0.0; got -1.0
    """


class InvalidInputError(DpolError, ValueError):
    """An argument breaks a stated rule (shape, dtype, finiteness, range).

    The message names the argument, the rule and the offending value; the object
    that raised it is left exactly as it was.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(4, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.add(np.nan)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: v must contain only finite values (no NaN or inf);
    got array(nan, dtype=float64)
    >>> c.t, issubclass(InvalidInputError, ValueError)  # nothing was added
    (0, True)
    """


class HorizonExceededError(DpolError, RuntimeError):
    """More elements were added than the horizon the noise was calibrated for.

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(2, epsilon=1.0, delta=1e-5, seed=0)
    >>> c.run(np.ones(2)).shape
    (2, 1)
    >>> c.add(1.0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.HorizonExceededError: BinaryTreeCounter was calibrated for horizon=2
    elements; all were added
    """


class BudgetExceededError(DpolError, RuntimeError):
    """A release would spend more privacy than the budget allows.

    Examples
    --------
    >>> from dpol.accounting import PrivacyBudget, PrivacyGuarantee
    >>> budget = PrivacyBudget(1.0, 1e-5)
    >>> round(budget.spend(PrivacyGuarantee(0.25, 0.0)), 3)
    0.25
    >>> try:
    ...     budget.spend(PrivacyGuarantee(0.8, 0.0))
    ... except BudgetExceededError as exc:  # the message starts with both reprs
    ...     print(str(exc).split(": ", 1)[1])  # doctest: +NORMALIZE_WHITESPACE
    it alone costs epsilon 0.8 and would bring the spent epsilon from 0.25 to 1.05 > 1
    (at delta=1e-05) after 1 release; nothing was spent
    >>> budget.n_releases, round(budget.remaining(), 3)  # the refused release cost nothing
    (1, 0.75)
    """


class GaugeUndefinedError(DpolError, NotImplementedError):
    """The Minkowski gauge is asked of a set that does not contain 0.

    Examples
    --------
    >>> from dpol.sets import Box
    >>> Box(-1.0, 2.0, dim=2).gauge([1.0, -0.5])  # 0 inside: max(1/2, 0.5/1)
    0.5
    >>> Box(1.0, 2.0, dim=2).gauge([1.5, 1.5])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    dpol.errors.GaugeUndefinedError: Box(...) does not contain 0, so its gauge is undefined
    """


class NonPrivateWarning(UserWarning):
    """The object releases without noise (``epsilon=inf`` or ``noise_multiplier=0``).

    Examples
    --------
    >>> import math, warnings
    >>> import numpy as np
    >>> from dpol.counters import BinaryTreeCounter
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     c = BinaryTreeCounter(4, epsilon=math.inf, seed=0)
    >>> caught[0].category.__name__
    'NonPrivateWarning'
    >>> print(caught[0].message)
    BinaryTreeCounter with epsilon=inf adds no noise: its releases are not private
    >>> c.run(np.ones(4)).ravel(), str(c.privacy)  # exact prefix sums
    (array([1., 2., 3., 4.]), '(inf, 0)-DP, replace_one, unit: one stream element')
    """


class ClippingWarning(UserWarning):
    """More than 5% of the data seen so far was clipped to the declared bounds.

    Clipping is part of every privacy proof (it bounds the sensitivity), so it is never
    skipped; but a bound far below the data silently changes the problem learned. The
    message names the count, the bounds and, where the raw rows are at hand, a bound (by
    the parameter's name) that at most 2.5% of them exceed -- read from the raw data, so
    it is advice for the data holder, not a private release (a private estimate must be
    paid from the budget).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> m = PrivateQuadraticFTL(2, horizon=40, epsilon=1.0, delta=1e-5, seed=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     trace = m.run(np.full((40, 2), 3.0), np.zeros(40))  # ||x|| = 4.24 > 1
    >>> caught[0].category.__name__, trace.n_clipped
    ('ClippingWarning', 40)
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    PrivateQuadraticFTL clipped 40 of 40 rows (100%) to bound=1, y_bound=1: the privacy
    proof needs the bounds, so the model learns the clipped data. Suggested: bound=4.3
    (at most 2.5% of these rows exceed it; read from the raw data: advice for the data
    holder, not a private release). A larger bound costs noise in proportion, and
    clipping rows only rescales them: compare held-out scores before following it
    """


class LabelOffsetWarning(UserWarning):
    """Regression labels sit far from 0 for their spread (their mean beyond their standard
    deviation): a private linear model shrinks its intercept towards 0 with its weights,
    so it predicts towards 0. The message gives a public offset to subtract (read from
    the raw labels: advice for the data holder, not a private release).
    """


class UnknownFeatureWarning(UserWarning):
    """A river model met features that were not in the first ``x`` it learned from: its
    dimension (and noise) was fixed then, so they are left out of the model (counted in
    ``n_unknown_features_``). Warned once per model, naming the first such features.
    """


class ForkedStateWarning(UserWarning):
    """A state restored a second time (``from_state`` of one ``get_state()`` twice): both
    objects continue the same noise stream (given different elements, two counters'
    releases differ by the elements, without noise), and the guarantee covers one
    continuation only. Restore a state once, where the object it came from has stopped.
    """


class PrivateEstimateWarning(UserWarning):
    """A private estimate (bounds, scaling) read from fewer rows than it needs to be
    reliable at its budget: it may land far from the data. The message names the rows
    it had and the rows it needs; declare the bounds or raise ``bounds_budget``.
    """


class PriorOnlyWarning(UserWarning):
    """A stream too short, at its epsilon, for the trivial fallback's gate to
    judge a model: the private class prior predicts alone, on most of the budget
    (:func:`~dpol.learners._fallback_budget.fallback_plan`); ``fallback=False`` learns a
    model on the whole budget instead.
    """


class PaperCalibrationWarning(UserWarning):
    """A published calibration (``calibration="paper"``) is used where the paper's formula
    falls short of the requested guarantee (docs/errata.md).

    The message states the exact guarantee the published noise really gives.

    Examples
    --------
    >>> import warnings
    >>> from dpol.counters import BinaryTreeCounter
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     c = BinaryTreeCounter(4, epsilon=1.0, delta=1e-5, calibration="paper", seed=0)
    >>> caught[0].category.__name__
    'PaperCalibrationWarning'
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    JKT Alg. 5 / Lemma 6 sigma gives only (1.974, 1e-05)-DP under replace_one at horizon=4,
    not the requested epsilon=1; privacy reports the real guarantee
    >>> round(c.privacy.epsilon, 3)
    1.974
    """


class NumericalWarning(UserWarning):
    """A computation met a numerically unsafe situation (e.g. an indefinite system).

    Examples
    --------
    PQFTL without its fixes (docs/errata.md, JKT-5) solves noisy systems that can be
    indefinite:

    >>> import warnings
    >>> import numpy as np
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> X = np.full((16, 3), 0.5)
    >>> m = PrivateQuadraticFTL(3, horizon=16, epsilon=1.0, fixes=False, seed=0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     trace = m.run(X, X[:, 0])
    >>> caught[0].category.__name__, "indefinite; use fixes=True" in str(caught[0].message)
    ('NumericalWarning', True)
    """


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
    err = InvalidInputError(f"{name} must {rule}; got {_show(value)}")
    err.argument, err.value = name, value  # for callers that spell arguments otherwise
    return err
