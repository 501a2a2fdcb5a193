"""Several counters released together, calibrated as one Gaussian mechanism."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from dpol._validation import fail, spawn_seeds
from dpol.accounting.calibration import gaussian_epsilon, mu_star
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.counters import BinaryTreeCounter, make_counter
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning

__all__ = ["joint_counters", "outer_product_sensitivity"]


def outer_product_sensitivity(x_bound: float, y_bound: float, neighbouring: str) -> float:
    """Largest l2 change of the stacked element (vec(x x^T), y x) when one element changes.

    Replace-one, ||x||, ||x'|| <= X, |y|, |y'| <= Y, a = ||x||^2, b = ||x'||^2, c = <x, x'>:
    ||x x^T - x' x'^T||_F^2 + ||y x - y' x'||^2 <= (a^2 + b^2 - 2 c^2) + Y^2 (a + b + 2|c|),
    increasing in a and b (which also relaxes |c| <= sqrt(ab)), so a = b = X^2; in c the
    maximum is at |c| = Y^2/2 when Y^2 <= 2 X^2, giving 2 X^4 + 2 X^2 Y^2 + Y^4/2, else at
    |c| = X^2, giving 4 X^2 Y^2. Attained (unit x, x' at <x, x'> = Y^2/2, y = Y = -y'), so
    it is exact: 3/sqrt(2) = 2.12 at X = Y = 1, where adding the two parts' own bounds in
    quadrature (sqrt(2) X^2 and 2 X Y) gives sqrt(6) = 2.45. Add/remove: the element
    itself, ||x||^4 + y^2 ||x||^2 <= X^4 + X^2 Y^2.

    Examples
    --------
    >>> round(outer_product_sensitivity(1.0, 1.0, "replace_one"), 4)
    2.1213
    """
    x2, y2 = x_bound**2, y_bound**2
    if neighbouring != "replace_one":
        return math.sqrt(x2 * x2 + x2 * y2)
    if y2 <= 2.0 * x2:
        return math.sqrt(2.0 * x2 * x2 + 2.0 * x2 * y2 + 0.5 * y2 * y2)
    return 2.0 * x_bound * y_bound


def joint_counters(cls: type, horizon: int, specs: list[tuple[int, dict]], *,
                   epsilon: float, delta: float, neighbouring: str, calibration: str,
                   options: dict, seed: object,
                   paper: Callable[[], tuple[list[float], str]],
                   element_sensitivity: float | None = None) -> tuple[tuple, PrivacyGuarantee]:
    """Build one counter per ``(dim, keywords)`` spec, all fed by the same element.

    Tight: the node vectors form one Gaussian mechanism of sensitivity
    sqrt(sum s_k^2) (each s_k from the counter's own structure and element sensitivity),
    so every counter gets the same std sigma = sqrt(sum s_k^2) / mu*(epsilon, delta) — exact
    by Gaussian DP (JKT spec 5.4). ``element_sensitivity``, when given, is a proven bound
    on the l2 change of the stacked element (all counters' inputs together, e.g.
    :func:`outer_product_sensitivity`); as every counter has the same structure, one
    element then moves the stacked node vectors by it times the encoder's column norm,
    which replaces the quadrature sum when smaller. Paper: ``paper()`` returns the
    published per-counter sigmas and the name of the formula (binary tree only); the real
    epsilon of their Gaussian-DP composition is reported, with a ``PaperCalibrationWarning`` when it
    exceeds ``epsilon``. ``epsilon=inf`` builds noiseless counters.
    """
    common = {"neighbouring": neighbouring, **options}
    probes = [make_counter(cls, horizon, dim, noise_multiplier=1.0, **kw, **common)
              for dim, kw in specs]
    sens = [p.sensitivity for p in probes]
    if not math.isfinite(epsilon):
        zs, eps = [0.0] * len(specs), math.inf
    elif calibration == "tight":
        joint = math.sqrt(sum(s * s for s in sens))
        if element_sensitivity is not None:  # same encoder in every counter: one column norm
            column = probes[0].sensitivity / probes[0].node_sensitivity
            joint = min(joint, element_sensitivity * column)
        sigma = joint / mu_star(epsilon, delta)
        zs, eps = [sigma / s for s in sens], epsilon
    else:
        if cls is not BinaryTreeCounter:
            raise fail("calibration", "be 'tight' unless counter='tree' (the published "
                       "formulas are for the binary tree)", "paper")
        sigmas, formula = paper()
        zs = [sig / s for sig, s in zip(sigmas, sens, strict=True)]
        eps = gaussian_epsilon(1.0 / math.sqrt(sum(1.0 / z**2 for z in zs)), delta)
        if eps > epsilon * (1 + 1e-9):
            warnings.warn(f"{formula} gives only ({eps:.4g}, {delta:g})-DP at horizon={horizon},"
                          f" not epsilon={epsilon:g}", PaperCalibrationWarning, stacklevel=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)  # the learner warned already
        counters = tuple(make_counter(cls, horizon, dim, noise_multiplier=z, seed=s, **kw,
                                      **common)
                         for (dim, kw), z, s in zip(specs, zs, spawn_seeds(seed, len(specs)),
                                                    strict=True))
    guarantee = PrivacyGuarantee(eps, delta if math.isfinite(eps) else 0.0, neighbouring,
                                 window=probes[0].privacy.window)
    return counters, guarantee
