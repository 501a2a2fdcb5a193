"""The warning that data was clipped to the declared bounds (layer L0).

Clipping is part of every privacy proof, so it is never skipped; but when the declared
bounds are far below the data, the model learns something else than the user thinks.
Every object that clips (learners, counters, bandits) calls :func:`note_clipping` after
each step or batch: once more than ``FRACTION`` of at least ``MIN_ROWS`` rows seen so far
were clipped, it warns once per object with a :class:`~dpol.errors.ClippingWarning`.
Beside it, the other advice read from the raw data for the data holder: a bound to
declare (:func:`suggested_bound`) and a public offset for labels far from 0
(:func:`label_offset_advice`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from dpol.errors import ClippingWarning

__all__ = ["FRACTION", "MIN_ROWS", "ROWS_TRADE_OFF", "SUGGEST_SHARE", "far_from_zero",
           "label_offset_advice", "note_clipping", "round_up", "suggested_bound",
           "suggested_range"]

#: the clipped share of the rows seen above which an object warns
FRACTION = 0.05
#: rows an object must have seen before it judges the share (a few outliers at the start
#: of a stream are no evidence of a wrong bound)
MIN_ROWS = 20
#: the share of the values a suggested bound may leave above it: half of FRACTION, so
#: following the suggestions for the rows and for the labels leaves at most FRACTION of
#: the rows clipped, and the warning does not come back
SUGGEST_SHARE = FRACTION / 2
#: why a suggested row bound is a trade, not a fix: the noise grows with the bound, and
#: a clipped row keeps its direction (measured: a classifier on standardised breast
#: cancer scored 0.89-0.94 held out at x_bound 1 and 0.63 at the suggested 12)
ROWS_TRADE_OFF = ("A larger bound costs noise in proportion, and clipping rows only "
                  "rescales them: compare held-out scores")


def round_up(value: float) -> float:
    """``value`` rounded up to two significant digits (a bound a person would type).

    Examples
    --------
    >>> round_up(2389.7), round_up(0.0123), round_up(98.0)
    (2400.0, 0.013, 98.0)
    """
    if not value > 0.0 or not math.isfinite(value):
        return value
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return float(f"{math.ceil(value / step - 1e-9) * step:.3g}")


def suggested_bound(values: object, share: float = SUGGEST_SHARE) -> float:
    """The smallest two-digit bound that at most ``share`` of ``values`` exceed (nan for
    no values or a non-finite one).

    Not a percentile: an interpolated 95th percentile of 569 values leaves 29 of them
    (5.1%) above it, so a user who followed it was warned again.

    Examples
    --------
    >>> suggested_bound(np.arange(1.0, 101.0))  # 99 and 100 (2 <= 2.5%) exceed 98
    98.0
    >>> suggested_bound(np.r_[np.arange(1.0, 100.0), np.inf])  # a norm that overflowed
    98.0
    """
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0 or np.any(np.isnan(arr)):
        return math.nan
    above = math.floor(share * arr.size)  # how many may exceed it (inf norms among them)
    bound = float(np.partition(arr, arr.size - 1 - above)[arr.size - 1 - above])
    return round_up(bound) if math.isfinite(bound) else math.nan


def suggested_range(values: object, share: float = SUGGEST_SHARE) -> tuple[float, float]:
    """The narrowest (lo, hi) that at most ``share`` of ``values`` fall outside, rounded
    outwards to two significant digits (nan for no values or a non-finite one).

    The narrowest, not a central interval: a private regressor's noise grows with the
    range's width, and the rows it leaves out are then where the labels are sparsest
    (a skewed tail's outliers), not half on each side.

    >>> suggested_range(np.r_[np.arange(35.0, 374.0), 1e4])  # 8 may fall outside
    (35.0, 370.0)
    """
    arr = np.sort(np.asarray(values, dtype=float).ravel())
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        return math.nan, math.nan
    keep = arr.size - math.floor(share * arr.size)  # the rows inside
    start = int(np.argmin(arr[keep - 1:] - arr[:arr.size - keep + 1]))
    return _two_digits(float(arr[start]), math.floor), _two_digits(float(arr[start + keep - 1]),
                                                                   math.ceil)


def _two_digits(value: float, rounding) -> float:
    """``value`` to two significant digits by ``rounding`` (math.floor or math.ceil)."""
    if value == 0.0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(abs(value))) - 1)
    nudge = -1e-9 if rounding is math.ceil else 1e-9  # 98.0 stays 98, not 99
    return float(f"{rounding(value / step + nudge) * step:.3g}")


def far_from_zero(y: object) -> bool:
    """Whether labels sit far from 0 for their spread: a finite mean beyond their std
    (the rule behind every advice to centre them or declare their range).

    >>> far_from_zero([140.0, 150.0, 170.0]), far_from_zero([-1.0, 0.5, 1.0])
    (True, False)
    """
    arr = np.asarray(y, dtype=float)
    mean = float(arr.mean())
    return math.isfinite(mean) and abs(mean) > float(arr.std())


def label_offset_advice(y: object, public: str, private: str) -> str | None:
    """Advice when regression labels sit far from 0 for their spread (|mean| > std), else
    None; ``public`` and ``private`` name the ways to centre them (with a public offset,
    formatted with ``offset``, their mean to two digits; with a private estimate). Read
    from the raw labels: advice for the data holder, not a private release.

    A private linear model's ridge shrinks its intercept with its weights (the noise ridge
    must, to dominate the noise), so it predicts towards 0: on diabetes' raw labels (mean
    152, std 77; standardised rows, x_bound 5, y_bound 350, epsilon 1, 5-fold, 3 seeds)
    the default regressor scored R^2 -2.4 to -3.0, and 0.09 to 0.13 centred (y - 150).

    Examples
    --------
    >>> y = np.array([140.0, 150.0, 170.0])
    >>> print(label_offset_advice(y, "y - {offset:g}", "scaling='private'"))
    ... # doctest: +NORMALIZE_WHITESPACE
    the labels' mean (153) is beyond their spread (12): a private model shrinks its
    intercept towards 0 with its weights, so it predicts towards 0 and can score below
    the mean label. Centre them with a public offset (y - 150) or privately
    (scaling='private') (read from the raw labels: advice for the data holder, not a
    private release)
    >>> label_offset_advice(np.array([-1.0, 0.5, 1.0]), "", "") is None
    True
    """
    arr = np.asarray(y, dtype=float).ravel()
    if arr.size < 2 or not np.all(np.isfinite(arr)):
        return None
    if not far_from_zero(arr):
        return None
    mean, std = float(arr.mean()), float(arr.std())
    return (f"the labels' mean ({mean:.3g}) is beyond their spread ({std:.2g}): a private "
            "model shrinks its intercept towards 0 with its weights, so it predicts towards "
            f"0 and can score below the mean label. Centre them with a public offset "
            f"({public.format(offset=float(f'{mean:.2g}'))}) or privately ({private}) "
            "(read from the raw labels: advice for the data holder, not a private release)")


def note_clipping(owner: object, *, bounds: str, raw: Callable | None = None,
                  unit: str = "rows", stacklevel: int = 3) -> None:
    """Warn once if ``owner.n_clipped_`` exceeds ``FRACTION`` of ``owner.t`` rows.

    Parameters
    ----------
    owner : object
        Has ``n_clipped_`` and ``t`` (clipped and seen so far); ``_clip_warned`` is set
        on it once it has warned. Its ``bound_names`` (default ``("x_bound",
        "y_bound")``) name the parameters that bound the norms and the labels ("" for
        none): a bound is suggested for each whose :func:`suggested_bound` is above its
        value; ``warning_name`` (default its class's name) names it in the message.
    bounds : str
        The declared bounds, as the message shows them (e.g. ``"x_bound=1, y_bound=1"``).
    raw : callable, optional
        Returns (norms, labels) of the latest batch before clipping (either may be None),
        for suggested bounds; called only when the warning fires.
    unit : str
        What a row is called in the message.

    Examples
    --------
    >>> import warnings
    >>> class Seen:
    ...     t, n_clipped_, x_bound, y_bound = 40, 4, 1.0, 1.0
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     note_clipping(Seen(), bounds="x_bound=1, y_bound=1",
    ...                   raw=lambda: (np.linspace(0.1, 1.3, 40), np.zeros(40)))
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    Seen clipped 4 of 40 rows (10%) to x_bound=1, y_bound=1: the privacy proof needs the
    bounds, so the model learns the clipped data. Suggested: x_bound=1.3 (at most 2.5% of
    these rows exceed it; read from the raw data: advice for the data holder, not a
    private release). A larger bound costs noise in proportion, and clipping rows only
    rescales them: compare held-out scores before following it
    """
    seen, clipped = int(owner.t), int(owner.n_clipped_)
    if (getattr(owner, "_clip_warned", False) or seen < MIN_ROWS
            or clipped <= FRACTION * seen):
        return
    parts = raw() if raw is not None else (None, None)
    names = getattr(owner, "bound_names", ("x_bound", "y_bound"))
    released_names = getattr(owner, "released_bounds", ())
    advice, released = [], []
    for name, values in zip(names, parts, strict=True):
        if not name or values is None:
            continue
        values = np.abs(np.asarray(values, dtype=float))
        if name in released_names:  # no raw-data advice: neither private nor in its units
            if np.mean(values > getattr(owner, name)) > FRACTION:  # it caused the warning
                released.append(name)
            continue
        bound = suggested_bound(values)
        if bound > getattr(owner, name, 0.0):  # nan compares False
            advice.append(f"{name}={bound:g}")
    who = getattr(owner, "warning_name", None) or type(owner).__name__
    text = (f"{who} clipped {clipped} of {seen} {unit} "
            f"({100.0 * clipped / seen:.3g}%) to {bounds}: the privacy proof needs the "
            "bounds, so the model learns the clipped data")
    if advice:
        text += (f". Suggested: {' and '.join(advice)} (at most "
                 f"{100 * SUGGEST_SHARE:g}% of these {unit} exceed "
                 f"{'each' if len(advice) > 1 else 'it'}; read from the raw data: advice "
                 "for the data holder, not a private release)")
        if advice[0].startswith(f"{names[0]}="):  # a row bound
            text += f". {ROWS_TRADE_OFF} before following it"
    if released:
        text += (f". {' and '.join(released)} {'were' if len(released) > 1 else 'was'} "
                 "released privately below the data: declare "
                 f"{'them' if len(released) > 1 else 'it'} or give the estimate a larger "
                 "bounds_budget")
    owner._clip_warned = True
    warnings.warn(text, ClippingWarning, stacklevel=stacklevel)
