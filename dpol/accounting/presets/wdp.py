"""WDP (window-DP COCO): the window tree Gamma theta (Lemma 1) and Gaussian sigma (Lemma 3).

See :mod:`dpol.accounting.presets` for the conventions (log readings, zero noise).
"""

from __future__ import annotations

import math

from dpol._validation import check_int
from dpol.accounting.presets._common import (
    _delta,
    _eps,
    _pos,
    exact_epsilon_of_tree_sigma,
    pure_epsilon_of_tree_scale,
)
from dpol.accounting.window import window_levels

__all__ = [
    "wdp_gamma_exact_epsilon",
    "wdp_gamma_theta",
    "wdp_gaussian_exact_epsilon",
    "wdp_gaussian_sigma",
]


def _wdp_m(window: int) -> int:
    """The printed ``ceil(log2 W) + 1`` (= log2 W' + 1)."""
    return (check_int("window", window, low=1) - 1).bit_length() + 1


def wdp_gamma_theta(epsilon: float, sensitivity: float, window: int, c1: float = 4.0) -> float:
    """WDP window tree, Gamma (l2-Laplace) node noise scale, Lemma 1 eq. (11).

    ``theta = c1 * Delta_2 * (ceil(log2 W) + 1) / eps``; node noise has density proportional to
    ``exp(-||n||_2 / theta)`` (radius ~ Gamma(d, theta)). ``c1 = 4`` is the likely reading of
    our copy ("4 Delta_2 ...", legible enough); Theorem 1's constant is illegible
    (docs/errata.md, WDP-8). The paper's Delta_2 is L + mu D; the true node sensitivity is 2L
    under replace-one (WDP-1); see :func:`wdp_gamma_exact_epsilon`.

    Examples
    --------
    >>> wdp_gamma_theta(2.0, 1.5, 16)  # 4 * 1.5 * (ceil(log2 16) + 1) / 2
    15.0
    """
    epsilon, sensitivity, c1 = _eps(epsilon), _pos("sensitivity", sensitivity), _pos("c1", c1)
    return c1 * sensitivity * _wdp_m(window) / epsilon


def wdp_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, window: int, c2: float = 8.0, p: int = 2
) -> float:
    """WDP window tree, Gaussian node noise, Lemma 3 eq. (13).

    ``sigma^2 = c2 * Delta_2^2 * (ceil(log2 W) + 1)^2 * ln^p(2/delta) / eps^2``.

    "ln2(2/delta)" is read with ``p = 2`` as an exponent (default, the noisier) or ``p = 1``
    (the least noise either reading allows, used in docs/errata.md, WDP-2 and WDP-8);
    ``c2 = 8`` from Lemma 3. Sound but 5-20x over-noised (:func:`wdp_gaussian_exact_epsilon`).

    Examples
    --------
    >>> round(wdp_gaussian_sigma(1.0, 1e-5, 1.0, 1024, p=1))  # tight: sqrt(11) / mu* = 12.4
    109
    """
    epsilon, delta = _eps(epsilon), _delta(delta)
    sensitivity, c2 = _pos("sensitivity", sensitivity), _pos("c2", c2)
    p = check_int("p", p, low=1)
    m = _wdp_m(window)
    return math.sqrt(c2) * sensitivity * m * math.log(2.0 / delta) ** (p / 2.0) / epsilon


def wdp_gamma_exact_epsilon(
    theta: float, node_sensitivity: float, window: int, *, horizon: int | None = None
) -> float:
    """Window epsilon of Gamma node noise ``theta``: ``m Delta_node / theta``, m = window_levels.

    Examples
    --------
    >>> theta = wdp_gamma_theta(2.0, 1.5, 16)  # claimed epsilon 2
    >>> round(wdp_gamma_exact_epsilon(theta, 3.0, 16), 4)  # node sensitivity 2 Delta_2 = 3
    1.0
    """
    return pure_epsilon_of_tree_scale(theta, node_sensitivity, window_levels(window, horizon))


def wdp_gaussian_exact_epsilon(
    sigma: float, node_sensitivity: float, window: int, delta: float, *, horizon: int | None = None
) -> float:
    """Exact window epsilon at ``delta`` of Gaussian node noise ``sigma`` (WDP-2).

    ``mu = Delta_node * sqrt(m) / sigma`` with m = :func:`~dpol.accounting.window.window_levels`;
    this is exact for the joint release of an element's protected window (docs/errata.md,
    WDP-2).

    Examples
    --------
    >>> sigma = wdp_gaussian_sigma(1.0, 1e-5, 1.0, 1024, p=1)  # claimed epsilon 1
    >>> round(wdp_gaussian_exact_epsilon(sigma, 2.0, 1024, 1e-5), 2)  # node sensitivity 2 Delta_2
    0.2
    """
    levels = window_levels(window, horizon)
    return exact_epsilon_of_tree_sigma(sigma, node_sensitivity, levels, delta)
