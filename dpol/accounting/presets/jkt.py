"""JKT (Jain, Kothari, Thakurta): POCP / PIGD / PGIGA beta, Alg. 7, PrivateSum sigma, POL beta.

See :mod:`dpol.accounting.presets` for the conventions (log readings, zero noise).
"""

from __future__ import annotations

import math

from dpol._validation import check_choice, check_int, check_real
from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS
from dpol.accounting.presets._common import (
    _delta,
    _eps,
    _ln_positive,
    _pos,
    _tree_log,
    exact_epsilon_of_tree_sigma,
    tree_levels,
)
from dpol.errors import InvalidInputError

__all__ = [
    "jkt_doubling_beta",
    "jkt_doubling_exact_epsilon",
    "jkt_pocp_beta",
    "jkt_pocp_c",
    "jkt_pocp_exact_epsilon",
    "jkt_pol_beta",
    "jkt_pol_exact_epsilon",
    "jkt_pol_sensitivity",
    "jkt_private_sum_exact_epsilon",
    "jkt_private_sum_sigma",
]


def jkt_pocp_c(epsilon: float, delta: float, horizon: int) -> float:
    """JKT's ``c = ln(ln(2/delta) / (2 eps)) / (2 ln T)`` (Alg. 1-3); < 0 if eps > ln(2/delta)/2.

    Examples
    --------
    >>> round(jkt_pocp_c(1.0, 1e-5, 1000), 4), jkt_pocp_c(6.2, 1e-5, 1000) < 0  # eps > 6.1
    (0.1309, True)
    """
    epsilon, delta = _eps(epsilon), _delta(delta)
    horizon = check_int("horizon", horizon, low=1)
    if horizon < 2:
        raise InvalidInputError(
            "horizon must be >= 2 for JKT's POCP calibration; got 1: c divides by ln T = 0, "
            "and POCP releases nothing at T = 1"
        )
    return math.log(math.log(2.0 / delta) / (2.0 * epsilon)) / (2.0 * math.log(horizon))


def jkt_pocp_beta(epsilon: float, delta: float, horizon: int, lam: float) -> float:
    """JKT POCP/PIGD/PGIGA noise parameter beta (Alg. 1, 2, 3; Lemma 1, Theorem 1).

    ``beta = lam * T^(0.5+c) * sqrt((2/eps) * (ln(T/delta) + sqrt(eps) / T^(0.5+c)))`` with c
    from :func:`jkt_pocp_c` (possibly negative); the noise at step t is N(0, (beta/t)^2 I).
    ``lam`` is the sensitivity constant lambda_A (s_t <= lam/t): PIGD 2L/alpha; PGIGA as printed
    2G/alpha, correct 4G/alpha (docs/errata.md, JKT-3). Logs are ``ln`` as printed.

    Claimed (3 eps, 2 delta)-DP; sound, about 10x over-noised (docs/errata.md, JKT-1).

    Examples
    --------
    >>> round(jkt_pocp_beta(1.0, 1e-5, 10**5, lam=1.0))  # JKT-1: the printed beta / lambda
    5302
    """
    lam = _pos("lam", lam)
    c = jkt_pocp_c(epsilon, delta, horizon)
    a = float(horizon) ** (0.5 + c)
    return lam * a * math.sqrt(2.0 / epsilon * (math.log(horizon / delta) + math.sqrt(epsilon) / a))


def jkt_pocp_exact_epsilon(beta: float, lam: float, horizon: int, delta: float) -> float:
    """Exact epsilon at ``delta`` of POCP's outputs ``x_2 .. x_T`` with noise beta/t at step t.

    Joint view (docs/errata.md, JKT-1): scaling output t by t, the T-1 releases form one
    Gaussian mechanism with noise beta and sensitivity ``lam * sqrt(T - 1)``, so
    ``mu = lam * sqrt(T-1) / beta``; exact for adaptively chosen losses too (Gaussian-DP
    composition).

    Examples
    --------
    >>> beta = jkt_pocp_beta(1.0, 1e-5, 10**5, lam=1.0)  # claimed (3, 2e-5)-DP
    >>> round(jkt_pocp_exact_epsilon(beta, 1.0, 10**5, 2e-5), 2)  # JKT-1: not 3
    0.18
    """
    beta, lam = _pos("beta", beta), _pos("lam", lam)
    horizon = check_int("horizon", horizon, low=1)
    mu = lam * math.sqrt(horizon - 1) / beta
    return gaussian_epsilon(math.inf if mu == 0 else 1.0 / mu, delta)


def jkt_doubling_beta(epsilon: float, delta: float, t: int, lam: float) -> float:
    """JKT Algorithm 7 (doubling trick, Appendix F) noise parameter beta_t at step t.

    ``beta_t = lam * sqrt((2^(k+1)/eps) * (ln(2^k/delta) + sqrt(eps/2^k)))``, k = floor(log2 t);
    noise N(0, (beta_t/t)^2 I). Claimed (3 eps log2 T, delta log2 T + 2/T^(2 eps))-DP (Theorem
    13), whose delta term is vacuous in practice (docs/errata.md, JKT-2); see
    :func:`jkt_doubling_exact_epsilon`.

    Examples
    --------
    >>> round(jkt_doubling_beta(0.1, 1e-5, 4, 3.0), 4)
    96.9602
    """
    epsilon, delta, lam = _eps(epsilon), _delta(delta), _pos("lam", lam)
    k = check_int("t", t, low=1).bit_length() - 1
    p = 2.0**k
    return lam * math.sqrt((2.0 * p / epsilon) * (math.log(p / delta) + math.sqrt(epsilon / p)))


def jkt_doubling_exact_epsilon(
    epsilon: float, delta: float, horizon: int, at_delta: float
) -> float:
    """Exact epsilon at ``at_delta`` of Algorithm 7's outputs ``x_2 .. x_T`` (joint GDP view).

    Step t has sensitivity lam/t and noise beta_t/t, so ``mu^2 = sum_{t<T} (lam/beta_t)^2``
    (lam cancels). At eps = 0.1, delta = 1e-5, T = 1e5 this is 0.65 at
    ``at_delta = delta log2 T`` against the claimed 4.98 (docs/errata.md, JKT-2).

    Examples
    --------
    >>> round(jkt_doubling_exact_epsilon(0.1, 1e-5, 10**5, 1e-5 * math.log2(10**5)), 2)  # not 4.98
    0.65
    """
    horizon = check_int("horizon", horizon, low=1)
    mu2 = 0.0
    for k in range(max(horizon - 1, 0).bit_length()):  # epochs t in [2^k, 2^(k+1)) with t < T
        count = min(2 ** (k + 1), horizon) - 2**k
        mu2 += count / jkt_doubling_beta(epsilon, delta, 2**k, 1.0) ** 2
    return gaussian_epsilon(math.inf if mu2 == 0 else 1.0 / math.sqrt(mu2), at_delta)


def jkt_private_sum_sigma(
    epsilon: float, delta: float, horizon: int, bound: float, *, log: str = "log2"
) -> float:
    """JKT PrivateSum node noise (Algorithm 5 line 3, Lemma 6, Theorem 11).

    ``sigma^2 = (R^2/eps^2) * log^2 T * ln(log T / delta)``, R = ``bound`` (largest l2 norm of
    one atom). ``log`` is the base of both "log T" (default ``"log2"``: T counts tree leaves);
    the outer log of the delta term is ``ln``: the "log2 reading" and the "ln reading".

    Erratum (docs/errata.md, JKT-4: 2R not R, ``floor(log2 T) + 1`` nodes not log T; fails
    for small T: :func:`jkt_private_sum_exact_epsilon`). T = 1 (sigma = 0) is refused.

    Examples
    --------
    >>> round(jkt_private_sum_sigma(1.0, 1e-5, 10**5, 1.0), 1)  # sigma / R
    62.9
    """
    epsilon, delta, bound = _eps(epsilon), _delta(delta), _pos("bound", bound)
    lg = _tree_log(check_int("horizon", horizon, low=1), log)
    inner = _ln_positive("log T / delta", lg / delta)
    return bound * lg * math.sqrt(inner) / epsilon


def jkt_private_sum_exact_epsilon(
    sigma: float, bound: float, horizon: int, delta: float, *,
    neighbouring: str = "replace_one", n_items: int | None = None,
) -> float:
    """Exact epsilon at ``delta`` of one PrivateSum tree with node noise ``sigma``.

    Node sensitivity 2R under ``"replace_one"`` (the paper's Definition 2) or R under
    ``"add_remove"`` (Lemma 6's own value); ``floor(log2 N) + 1`` levels with N = ``n_items``
    (default ``horizon``; PQFTL inserts only T-1 items).

    The printed sigma keeps its claim (log2 reading, epsilon = 1, replace-one) from T = 33
    on (docs/errata.md, JKT-4); at T = 32 the level count is 6 while log2 T = 5.

    Examples
    --------
    >>> sigma = jkt_private_sum_sigma(1.0, 1e-5, 32, 1.0)  # claimed epsilon 1
    >>> round(jkt_private_sum_exact_epsilon(sigma, 1.0, 32, 1e-5), 4)  # 6 levels, log2 T = 5
    1.0099
    """
    check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
    bound = _pos("bound", bound)
    horizon = check_int("horizon", horizon, low=1)
    n = horizon if n_items is None else n_items
    node = 2.0 * bound if neighbouring == "replace_one" else bound
    return exact_epsilon_of_tree_sigma(sigma, node, tree_levels(n), delta)


def jkt_pol_beta(
    epsilon: float, delta: float, horizon: int, lipschitz: float, alpha: float, x_star_norm: float
) -> float:
    """JKT POL output noise, eq. (37) / Algorithm 6 line 13, **as printed** (missing 1/alpha).

    ``beta = 2 sqrt(2) (L + alpha ||x*||) ln T / (T eps_p) * sqrt(ln(1/delta) + eps_p)``.

    Erratum (docs/errata.md, JKT-6): the sensitivity is ``2 L' (H_T - 1) / (alpha T)``, so
    the printed beta misses 1/alpha and is **not private** for small alpha. T = 1 is refused.

    Examples
    --------
    >>> beta = jkt_pol_beta(1.0, 1e-5, 5000, 1.0, 0.01, 1.0)  # claimed epsilon 1
    >>> eps = jkt_pol_exact_epsilon(beta, 1e-5, 5000, 1.0, 0.01, 1.0, sensitivity=0.157)  # measured
    >>> round(beta, 5), round(eps, 1)
    (0.01721, 79.7)
    """
    epsilon, delta = _eps(epsilon), _delta(delta)
    lipschitz, alpha = _pos("lipschitz", lipschitz), _pos("alpha", alpha)
    x_star_norm = check_real("x_star_norm", x_star_norm, low=0.0)
    horizon = check_int("horizon", horizon, low=1)
    ln_t = _tree_log(horizon, "ln")
    lp = lipschitz + alpha * x_star_norm
    return (
        2.0 * math.sqrt(2.0) * lp * ln_t / (horizon * epsilon)
        * math.sqrt(math.log(1.0 / delta) + epsilon)
    )


def jkt_pol_sensitivity(horizon: int, lipschitz: float, alpha: float, x_star_norm: float) -> float:
    """Corrected l2 sensitivity of POL's average: ``2 L' (H_T - 1) / (alpha T)`` (JKT-6).

    ``L' = L + alpha ||x*||`` and H_T the T-th harmonic number (replace-one, Lemma 4).

    Examples
    --------
    >>> round(jkt_pol_sensitivity(5000, 1.0, 0.01, 1.0), 3)  # printed 2 L' ln T / T: 0.00344
    0.327
    """
    horizon = check_int("horizon", horizon, low=1)
    lipschitz, alpha = _pos("lipschitz", lipschitz), _pos("alpha", alpha)
    x_star_norm = check_real("x_star_norm", x_star_norm, low=0.0)
    harmonic = math.fsum(1.0 / t for t in range(2, horizon + 1))  # H_T - 1
    return 2.0 * (lipschitz + alpha * x_star_norm) * harmonic / (alpha * horizon)


def jkt_pol_exact_epsilon(
    beta: float, delta: float, horizon: int, lipschitz: float, alpha: float, x_star_norm: float, *,
    sensitivity: float | None = None,
) -> float:
    """Exact epsilon at ``delta`` of POL's single Gaussian release with noise ``beta``.

    Against :func:`jkt_pol_sensitivity` by default, or a given (e.g. measured) ``sensitivity``.

    Examples
    --------
    >>> beta = jkt_pol_beta(1.0, 1e-5, 5000, 1.0, 0.01, 1.0)  # printed beta, claimed epsilon 1
    >>> round(jkt_pol_exact_epsilon(beta, 1e-5, 5000, 1.0, 0.01, 1.0), 1)  # corrected sensitivity
    260.6
    """
    if sensitivity is None:
        sensitivity = jkt_pol_sensitivity(horizon, lipschitz, alpha, x_star_norm)
    return exact_epsilon_of_tree_sigma(beta, sensitivity, 1, delta)
