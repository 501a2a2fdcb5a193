"""KNJ (Kasiviswanathan, Nissim, Jin): TreeMech sigma and the Mechanism 1 budget split.

See :mod:`dpol.accounting.presets` for the conventions (log readings, zero noise).
"""

from __future__ import annotations

import math

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.presets._common import (
    LOG_READINGS,
    _delta,
    _eps,
    _pos,
    _tree_log,
    exact_epsilon_of_tree_sigma,
    tree_levels,
)
from dpol.errors import InvalidInputError

__all__ = [
    "knj_advanced_composition",
    "knj_mechanism1_split",
    "knj_tree_mech_exact_epsilon",
    "knj_tree_mech_sigma",
    "knj_tree_mech_sigma_patched",
]


def knj_tree_mech_sigma(
    epsilon: float, delta: float, horizon: int, sensitivity: float, *, log: str = "log2"
) -> float:
    """KNJ TreeMech node noise, Algorithm 4 line 8, **verbatim**.

    ``sigma^2 = 2 * log^2(T) * Delta_2^2 * ln(2/delta) / eps^2``; Delta_2 = max ||v - v'||
    (already replace-one). ``log`` reads "log(T)" (default ``"log2"``; docs/errata.md,
    KNJ-4).

    Erratum (docs/errata.md, KNJ-1): the node vector has sensitivity Delta_2 sqrt(K),
    K = floor(log2 T) + 1, and log T < sqrt(K) for small T: exact epsilon 1.07 (log2) / 1.61
    (ln) at T = 2 for a claimed 1; T = 1 gives sigma = 0 and is refused. See
    :func:`knj_tree_mech_exact_epsilon` and :func:`knj_tree_mech_sigma_patched`.

    Examples
    --------
    >>> sigma = knj_tree_mech_sigma(1.0, 1e-5, 2, 1.0)  # claimed epsilon 1 at T = 2
    >>> round(knj_tree_mech_exact_epsilon(sigma, 1.0, 2, 1e-5), 2)  # KNJ-1: not 1
    1.07
    """
    epsilon, delta, sensitivity = _eps(epsilon), _delta(delta), _pos("sensitivity", sensitivity)
    lg = _tree_log(check_int("horizon", horizon, low=1), log)
    return math.sqrt(2.0 * math.log(2.0 / delta)) * lg * sensitivity / epsilon


def knj_tree_mech_sigma_patched(
    epsilon: float, delta: float, horizon: int, sensitivity: float, *, log: str = "log2"
) -> float:
    """KNJ TreeMech noise **patched** (not the paper's): log^2 T replaced by max(log^2 T, K).

    ``sigma^2 = 2 * max(log^2 T, K) * Delta_2^2 * ln(2/delta) / eps^2`` with K = floor(log2 T)+1
    (a patch of the printed formula, named as such; the paper mode of the learners uses the
    verbatim formula, docs/errata.md, KNJ-1). Never zero; equals
    the verbatim formula once log^2 T >= K (T >= 3 with log2).

    Examples
    --------
    >>> sigma = knj_tree_mech_sigma_patched(1.0, 1e-5, 2, 1.0)  # max(log2^2 T, K) = K = 2
    >>> round(knj_tree_mech_exact_epsilon(sigma, 1.0, 2, 1e-5), 4)
    0.735
    """
    epsilon, delta, sensitivity = _eps(epsilon), _delta(delta), _pos("sensitivity", sensitivity)
    horizon = check_int("horizon", horizon, low=1)
    check_choice("log", log, LOG_READINGS)
    lg = math.log2(horizon) if log == "log2" else math.log(horizon)
    factor = max(lg * lg, tree_levels(horizon))
    return math.sqrt(2.0 * factor * math.log(2.0 / delta)) * sensitivity / epsilon


def knj_tree_mech_exact_epsilon(
    sigma: float, sensitivity: float, horizon: int, delta: float
) -> float:
    """Exact epsilon at ``delta`` of TreeMech with node noise ``sigma`` (K = floor(log2 T)+1).

    Examples
    --------
    >>> sigma = knj_tree_mech_sigma(1.0, 1e-5, 2, 1.0, log="ln")  # claimed epsilon 1
    >>> round(knj_tree_mech_exact_epsilon(sigma, 1.0, 2, 1e-5), 2)  # K = 2 levels, ln 2 < sqrt(2)
    1.61
    """
    return exact_epsilon_of_tree_sigma(sigma, sensitivity, tree_levels(horizon), delta)


def knj_advanced_composition(
    epsilon: float, delta: float, k: float, delta_star: float
) -> tuple[float, float]:
    """KNJ Theorem A.4: k adaptive (eps, delta) mechanisms are
    ``(eps sqrt(2 k ln(1/delta*)) + 2 k eps^2, k delta + delta*)``-DP; needs eps <= 1.

    Examples
    --------
    >>> eps_p, delta_p = knj_mechanism1_split(1.0, 1e-5, 1000, 10)  # 100 calls
    >>> eps, delta = knj_advanced_composition(eps_p, delta_p, 100, 5e-6)  # delta* = delta / 2
    >>> round(eps, 4), f"{delta:.4g}"
    (0.5205, '1e-05')
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, high=1.0, low_open=True)
    delta, k = check_real("delta", delta, low=0.0, high=1.0), _pos("k", k)
    delta_star = _delta(delta_star)
    eps_total = epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_star)) + 2.0 * k * epsilon**2
    return eps_total, k * delta + delta_star


def knj_mechanism1_split(
    epsilon: float, delta: float, horizon: int, tau: int
) -> tuple[float, float]:
    """KNJ Mechanism 1 (PrivIncERM) per-call budget (line 1; Theorem 3.1), verbatim.

    ``eps' = eps / (2 sqrt((2T/tau) ln(2/delta)))`` and ``delta' = delta tau / (2T)``; with
    l = T/tau calls and Theorem A.4 at delta* = delta/2 this totals (eps, delta). T/tau is used
    even when tau does not divide T (conservative: there are floor(T/tau) calls;
    docs/errata.md, KNJ-4).

    Refused (:class:`~dpol.errors.InvalidInputError`) where the proof does not apply:
    eps' > 1 (Theorem A.4) or eps > 2 ln(2/delta) (the second-order term exceeds eps/2).

    Examples
    --------
    >>> eps_p, delta_p = knj_mechanism1_split(1.0, 1e-5, 1000, 10)  # T / tau = 100 calls
    >>> round(eps_p, 6), f"{delta_p:.4g}"
    (0.01012, '5e-08')
    """
    epsilon, delta = _eps(epsilon), _delta(delta)
    horizon = check_int("horizon", horizon, low=1)
    tau = check_int("tau", tau, low=1)
    if tau > horizon:
        raise fail("tau", f"be <= horizon = {horizon} (otherwise no batch call is made)", tau)
    calls = horizon / tau
    ln2d = math.log(2.0 / delta)
    eps_prime = epsilon / (2.0 * math.sqrt(2.0 * calls * ln2d))
    if eps_prime > 1.0:
        raise InvalidInputError(
            f"epsilon' = {eps_prime:.4g} > 1: Theorem A.4 (advanced composition) needs "
            "epsilon' <= 1, so Mechanism 1's privacy proof does not cover this epsilon"
        )
    if epsilon > 2.0 * ln2d:
        raise InvalidInputError(
            f"epsilon must be <= 2 ln(2/delta) = {2.0 * ln2d:.4g} for Mechanism 1's split to "
            f"total epsilon (Theorem 3.1); got {epsilon!r}"
        )
    return eps_prime, delta * tau / (2.0 * horizon)
