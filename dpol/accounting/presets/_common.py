"""Helpers shared by the paper presets: log readings, level counts, exact epsilon."""

from __future__ import annotations

import math

from dpol._validation import check_choice, check_int, check_real
from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.errors import InvalidInputError

__all__ = [
    "LOG_READINGS",
    "exact_epsilon_of_tree_sigma",
    "pure_epsilon_of_tree_scale",
    "tree_levels",
]

#: Readings of an unspecified "log" that counts tree levels.
LOG_READINGS = ("log2", "ln")


def _eps(epsilon: float) -> float:
    return check_real("epsilon", epsilon, low=0.0, low_open=True)


def _delta(delta: float) -> float:
    return check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _pos(name: str, value: float) -> float:
    return check_real(name, value, low=0.0, low_open=True)


def _tree_log(horizon: int, log: str) -> float:
    """The printed "log T" under the chosen reading; refuses T = 1 (the formula adds no noise)."""
    check_choice("log", log, LOG_READINGS)
    if horizon < 2:
        raise InvalidInputError(
            f"horizon must be >= 2 for this published formula; got {horizon}: its log T factor "
            "is 0 at T = 1, so the paper's formula adds no noise at all there (no privacy). "
            'Use calibration="tight".'
        )
    return math.log2(horizon) if log == "log2" else math.log(horizon)


def _ln_positive(name: str, x: float) -> float:
    """ln(x) for a delta term that must be positive for the printed variance to be positive."""
    if x <= 1.0:
        raise InvalidInputError(f"{name} must exceed 1 so that the printed variance is positive; "
                                f"got {x!r}")
    return math.log(x)


def tree_levels(n_items: int) -> int:
    """Exact number of binary-tree nodes one item can lie in: ``floor(log2 N) + 1``.

    The maximum over items of the number of populated dyadic nodes containing the item when
    N items are inserted (docs/errata.md, JKT-4; ``ceil(log2 N) + 1`` is only a bound).

    Examples
    --------
    >>> [tree_levels(n) for n in (1, 2, 3, 5, 8, 100)]
    [1, 2, 2, 3, 4, 7]
    """
    return check_int("n_items", n_items, low=1).bit_length()


def exact_epsilon_of_tree_sigma(
    sigma: float, node_sensitivity: float, levels: int, delta: float
) -> float:
    """Exact epsilon at ``delta`` of Gaussian node noise ``sigma`` over ``levels`` nodes.

    One element changes at most ``levels`` node values by at most ``node_sensitivity`` each
    (l2), so the released node vector is one Gaussian mechanism with sensitivity
    ``node_sensitivity * sqrt(levels)``, adaptively too (Gaussian-DP composition):
    ``gaussian_epsilon(sigma / (node_sensitivity * sqrt(levels)), delta)``.

    Examples
    --------
    >>> from dpol.accounting.closed_forms import mu_star
    >>> sigma = 2.0 * math.sqrt(5) / mu_star(1.0, 1e-5)  # tight: Delta sqrt(m) / mu*
    >>> round(exact_epsilon_of_tree_sigma(sigma, 2.0, 5, 1e-5), 6)
    1.0
    """
    sigma, node = check_real("sigma", sigma, low=0.0), _pos("node_sensitivity", node_sensitivity)
    levels = check_int("levels", levels, low=1)
    return gaussian_epsilon(sigma / (node * math.sqrt(levels)), delta)


def pure_epsilon_of_tree_scale(scale: float, sensitivity: float, levels: int) -> float:
    """Epsilon of pure-DP node noise: ``levels * sensitivity / scale``.

    For coordinate-wise Laplace(scale) with l1 ``sensitivity``, or l2-Gamma noise (density
    proportional to ``exp(-||n||_2 / scale)``) with l2 ``sensitivity``, per node; basic
    composition over the ``levels`` nodes one element touches is tight for pure DP.

    Examples
    --------
    >>> pure_epsilon_of_tree_scale(10.0, 2.0, 5), pure_epsilon_of_tree_scale(0.0, 2.0, 5)
    (1.0, inf)
    """
    scale = check_real("scale", scale, low=0.0)
    sensitivity = check_real("sensitivity", sensitivity, low=0.0)
    levels = check_int("levels", levels, low=1)
    if scale == 0.0:
        return math.inf if sensitivity > 0 else 0.0
    return levels * sensitivity / scale
