"""Warnings of an adapter's call in the adapter's words, at the user's line (layer L5).

The learner behind an estimator warns as what it is (``WithIntercept clipped ...``,
from inside dpol's files). A user of ``OnlineClassifier`` knows neither that class nor
that file: the adapters name the estimator and its parameters (``x_bound``), and
re-issue every warning of ``fit`` / ``partial_fit`` / ``learn_one`` at the line that
called it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable

from dpol.errors import NonPrivateWarning

__all__ = ["speak_as", "surfaced"]


def speak_as(learner: object, name: str, released: tuple[str, ...] = ()) -> None:
    """Make the learner and every learner it wraps name themselves ``name`` and their
    bounds ``x_bound`` / ``y_bound`` (the adapters' parameters) in their warnings;
    ``released``: the bounds estimated privately, for which a clipping warning suggests
    no bound read from the raw data."""
    while learner is not None:
        learner.warning_name = name
        learner.bound_names = ("x_bound", "y_bound")
        learner.released_bounds = released
        learner = getattr(learner, "learner", None)


def surfaced(method: Callable) -> Callable:
    """``method`` with the warnings it raises re-issued at its caller's line.

    They are recorded while it runs and re-issued once it has returned (or raised), so
    the user's filters apply to them there; an ``"error"`` filter then raises after the
    call, never in the middle of it.
    """

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        caught: list = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                return method(self, *args, **kwargs)
        finally:
            for record in caught:
                warnings.warn(_in_own_words(self, record.message), stacklevel=2)

    return call


def _in_own_words(estimator: object, message: Warning) -> Warning:
    """The learner's "<class> with epsilon=inf releases without noise" as the estimator's.

    >>> class OnlineRegressor:
    ...     learner = "ridge"
    >>> print(_in_own_words(OnlineRegressor(), NonPrivateWarning(
    ...     "PrivateQuadraticFTL with epsilon=inf releases without noise")))
    ... # doctest: +NORMALIZE_WHITESPACE
    OnlineRegressor with epsilon=inf releases without noise (learner 'ridge', its
    non-private twin)
    """
    if isinstance(message, NonPrivateWarning) and "with epsilon=inf" in str(message):
        return NonPrivateWarning(f"{type(estimator).__name__} with epsilon=inf releases "
                                 f"without noise (learner {estimator.learner!r}, its "
                                 "non-private twin)")
    return message
