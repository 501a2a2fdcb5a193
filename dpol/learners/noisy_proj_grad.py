"""NoisyProjGrad (KNJ Appendix B): projected gradient descent with an approximate gradient.

:func:`noisy_proj_grad` is KNJ's NoisyProjGrad (eq. 12): averaged projected gradient
steps; its step size and guarantee are given with the constants corrected (KNJ's
Proposition B.1 is wrong as printed, see :func:`npg_bound`). It adds no noise: the
oracle it is given (a released private gradient function) already carries it, so it
costs no privacy (post-processing).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpol._validation import check_choice, check_int, check_real

__all__ = ["noisy_proj_grad", "npg_bound", "npg_iterations", "npg_step_size"]


def noisy_proj_grad(grad: Callable, project: Callable, theta0: np.ndarray, iterations: int,
                    step: float) -> tuple[np.ndarray, np.ndarray]:
    """KNJ NoisyProjGrad (Appendix B, eq. 12): averaged projected gradient steps.

    ``theta_{k+1} = P_C(theta_k - step * grad(theta_k))`` for k = 1..r from
    ``theta_1 = theta0`` (which must lie in C); returns the average of theta_1..theta_r
    (theta_{r+1} excluded, as printed) and theta_{r+1}. No randomness, no privacy cost:
    ``grad`` is a released private gradient function (post-processing).

    Examples
    --------
    >>> from dpol.sets import L2Ball
    >>> ball = L2Ball(2)
    >>> g = lambda th: 2 * (th - np.array([3.0, 0.0]))  # f = ||th - (3, 0)||^2
    >>> avg, last = noisy_proj_grad(g, ball.project, np.zeros(2), 400, 0.05)
    >>> last.round(6), bool(avg[0] > 0.95)
    (array([1., 0.]), True)
    """
    theta = np.array(theta0, dtype=float)
    total = np.zeros_like(theta)
    for _ in range(iterations):
        total += theta
        theta = project(theta - step * grad(theta))
    return total / iterations, theta


def npg_step_size(radius: float, iterations: int, lipschitz: float, alpha: float, *,
                  constant: str = "corrected") -> float:
    """Step of NoisyProjGrad: ``c ||C|| / (sqrt(r) (alpha + L))``.

    ``constant="paper"`` is KNJ's c = 1; ``"corrected"`` (default) is c = 2, which gives
    the bound of :func:`npg_bound` from *any* start in C, as warm starts need.

    Examples
    --------
    >>> npg_step_size(1.0, 100, 1.0, 0.0), npg_step_size(1.0, 100, 1.0, 0.0, constant="paper")
    (0.2, 0.1)
    """
    check_choice("constant", constant, ("corrected", "paper"))
    radius = check_real("radius", radius, low=0.0, low_open=True)
    r = check_int("iterations", iterations, low=1)
    scale = check_real("lipschitz", lipschitz, low=0.0) + check_real("alpha", alpha, low=0.0)
    if scale == 0.0:
        return 0.0
    return (2.0 if constant == "corrected" else 1.0) * radius / (math.sqrt(r) * scale)


def npg_bound(radius: float, iterations: int, lipschitz: float, alpha: float, *,
              constant: str = "corrected", start: str = "any") -> float:
    """Guarantee of NoisyProjGrad: ``f(theta_bar) - min_C f`` for f convex and L-Lipschitz on C
    and a gradient oracle with error at most alpha uniformly on C.

    KNJ Proposition B.1's printed ``(alpha + L)||C||/sqrt(r) + alpha ||C||`` is wrong
    (distances in C reach 2||C||; docs/errata.md, KNJ-3). The standard analysis gives:

    * ``constant="corrected"`` (step c = 2), any start: ``2(alpha+L)R/sqrt(r) + 2 alpha R``;
    * ``constant="paper"`` (c = 1), any start: ``2.5(alpha+L)R/sqrt(r) + 2 alpha R``;
    * ``constant="paper"``, ``start="origin"`` (theta_1 = 0 in C):
      ``(alpha+L)R/sqrt(r) + 2 alpha R``;
    * ``constant="printed"``: the printed (unsound) expression, for documentation.

    Examples
    --------
    >>> npg_bound(1.0, 100, 1.0, 0.0), npg_bound(1.0, 100, 1.0, 0.0, constant="printed")
    (0.2, 0.1)
    """
    check_choice("constant", constant, ("corrected", "paper", "printed"))
    check_choice("start", start, ("any", "origin"))
    R = check_real("radius", radius, low=0.0)
    r = check_int("iterations", iterations, low=1)
    L, a = check_real("lipschitz", lipschitz, low=0.0), check_real("alpha", alpha, low=0.0)
    if constant == "printed":
        return (a + L) * R / math.sqrt(r) + a * R
    if constant == "corrected":
        return 2.0 * (a + L) * R / math.sqrt(r) + 2.0 * a * R
    factor = 1.0 if start == "origin" else 2.5
    return factor * (a + L) * R / math.sqrt(r) + 2.0 * a * R


def npg_iterations(lipschitz: float, alpha: float) -> float:
    """KNJ Corollary B.2: ``r = (1 + L/alpha)^2`` makes the (corrected) bound O(alpha ||C||).

    Returns ``inf`` for alpha = 0 (exact gradients: any budget). Callers cap it.

    Examples
    --------
    >>> npg_iterations(1.0, 0.1), npg_iterations(1.0, 0.0)
    (121, inf)
    """
    L, a = check_real("lipschitz", lipschitz, low=0.0), check_real("alpha", alpha, low=0.0)
    return math.inf if a == 0.0 else math.ceil((1.0 + L / a) ** 2)
