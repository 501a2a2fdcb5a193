"""The warning that data was clipped to the declared bounds (layer L0).

Clipping is part of every privacy proof, so it is never skipped; but when the declared
bounds are far below the data, the model learns something else than the user thinks.
Every object that clips (learners, counters, bandits) calls :func:`note_clipping` after
each step or batch: once more than ``FRACTION`` of at least ``MIN_ROWS`` rows seen so far
were clipped, it warns once per object with a :class:`~dpol.errors.ClippingWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from dpol.errors import ClippingWarning

__all__ = ["FRACTION", "MIN_ROWS", "note_clipping"]

#: the clipped share of the rows seen above which an object warns
FRACTION = 0.05
#: rows an object must have seen before it judges the share (a few outliers at the start
#: of a stream are no evidence of a wrong bound)
MIN_ROWS = 20


def _advice(name: str, values: object, quantile: float = 95.0) -> str:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        return ""
    return f"{name} <= {float(np.percentile(arr, quantile)):.4g}"


def note_clipping(owner: object, *, bounds: str, raw: Callable | None = None,
                  unit: str = "rows", names: tuple[str, str] = ("||x||", "|y|"),
                  stacklevel: int = 3) -> None:
    """Warn once if ``owner.n_clipped_`` exceeds ``FRACTION`` of ``owner.t`` rows.

    Parameters
    ----------
    owner : object
        Has ``n_clipped_`` and ``t`` (clipped and seen so far); ``_clip_warned`` is set
        on it once it has warned.
    bounds : str
        The declared bounds, as the message shows them (e.g. ``"x_bound=1, y_bound=1"``).
    raw : callable, optional
        Returns (norms, labels) of the latest batch before clipping (either may be None),
        for a suggested bound; called only when the warning fires.
    unit : str
        What a row is called in the message.
    names : (str, str)
        How the message names the norms and the labels.

    Examples
    --------
    >>> import warnings
    >>> class Seen:
    ...     t, n_clipped_ = 40, 4
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     note_clipping(Seen(), bounds="bound=1")
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    Seen clipped 4 of 40 rows (10%) to bound=1: the privacy proof needs the bounds, so
    the model learns the clipped data
    """
    seen, clipped = int(owner.t), int(owner.n_clipped_)
    if (getattr(owner, "_clip_warned", False) or seen < MIN_ROWS
            or clipped <= FRACTION * seen):
        return
    norms, labels = raw() if raw is not None else (None, None)
    advice = [a for a in (_advice(names[0], norms) if norms is not None else "",
                          _advice(names[1], np.abs(np.asarray(labels, dtype=float)))
                          if labels is not None else "") if a]
    text = (f"{type(owner).__name__} clipped {clipped} of {seen} {unit} "
            f"({100.0 * clipped / seen:.3g}%) to {bounds}: the privacy proof needs the "
            "bounds, so the model learns the clipped data")
    if advice:
        text += (f"; 95% of these {unit} have {' and '.join(advice)} (read from the raw "
                 "data: advice for the data holder, not a private release)")
    owner._clip_warned = True
    warnings.warn(text, ClippingWarning, stacklevel=stacklevel)
