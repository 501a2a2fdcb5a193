"""Tight noise calibration through dp-accounting: the closed forms.

The one calibrator of a mechanism, from its events, is :func:`dpol.accounting.calibrate`;
the functions here are the exact closed forms it takes where the composition has one
(one Gaussian, one zCDP mechanism, pure noise).

A ``noise_multiplier`` z is the noise scale over the sensitivity of the *encoder* (a
tree's vector of node values) to one element (as jax_privacy): Gaussian std = z * l2
sensitivity, exactly (1/z)-GDP (Balle & Wang 2018's curve, solved by dp-accounting's
``get_sigma_gaussian``; compositions add mu^2, Dong, Roth, Su); Laplace scale = z * l1
sensitivity and WDP's l2 Gamma theta = z * (summed node sensitivities), both 1/z-DP;
secure (discrete Gaussian) std = z * l2 sensitivity, 1/(2 z^2)-zCDP (CKS 2020, Theorem
14), certified by the RDP accountant (:func:`zcdp_gaussian_noise_multiplier`).
"""

from __future__ import annotations

import math

from dpol._validation import check_int, check_real, fail
from dpol.noise._dp_accounting import dp_accounting

__all__ = [
    "CALIBRATIONS",
    "DEFAULT_DELTA",
    "EPSILON_RANGE",
    "certified_epsilon",
    "check_epsilon",
    "default_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_noise_multiplier",
    "gaussian_share",
    "mu_star",
    "pure_noise_multiplier",
    "resolve_delta",
    "zcdp_epsilon",
    "zcdp_gaussian_noise_multiplier",
]


def gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """Smallest z such that Gaussian noise of std z x (l2 sensitivity) is (epsilon, delta)-DP.

    Exact (analytic Gaussian mechanism, dp-accounting ``get_sigma_gaussian``); valid for
    every epsilon > 0, unlike the classical ``sqrt(2 ln(1.25/delta))/epsilon`` (epsilon < 1).

    Examples
    --------
    >>> round(1 / gaussian_noise_multiplier(1.0, 1e-5), 6)  # mu*(1, 1e-5)
    0.268051
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    z = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    # dp-accounting bisects to 1e-12; step up until its own exact epsilon certifies
    # the target, so rounding can never land on the unsafe side.
    while gaussian_epsilon(z, delta) > epsilon:
        z *= 1.0 + 1e-12
    return z


def mu_star(epsilon: float, delta: float) -> float:
    """mu*(epsilon, delta): the largest sensitivity-to-noise ratio that is (epsilon, delta)-DP.

    Computed from dp-accounting's exact (analytic) Gaussian characterisation, never
    hard-coded; the tests check it against independently computed reference values.

    Examples
    --------
    >>> round(mu_star(0.1, 1e-5), 6), round(mu_star(5.0, 1e-5), 6)
    (0.032521, 1.121242)
    """
    return 1.0 / gaussian_noise_multiplier(epsilon, delta)


def gaussian_share(epsilon: float, delta: float, share: float) -> tuple[float, float]:
    """Split an (epsilon, delta) Gaussian budget: (z of the share, epsilon of the rest).

    mu_s = sqrt(share) mu* and mu_r = sqrt(1 - share) mu* compose exactly to mu* (Dong,
    Roth, Su 2019, Corollary 3.3); the rest is the epsilon whose ``mu_star`` is mu_r. The
    claim is still derived from the events that ran.

    Examples
    --------
    >>> z, rest = gaussian_share(1.0, 1e-5, 0.1)
    >>> abs(1 / z**2 + mu_star(rest, 1e-5) ** 2 - mu_star(1.0, 1e-5) ** 2) < 1e-12
    True
    >>> round(rest, 3)
    0.944
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    share = check_real("share", share, low=0.0, high=1.0, low_open=True, high_open=True)
    mu = mu_star(epsilon, delta)
    return 1.0 / (math.sqrt(share) * mu), gaussian_epsilon(1.0 / (math.sqrt(1.0 - share) * mu),
                                                           delta)


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Exact epsilon at ``delta`` of one Gaussian mechanism with noise multiplier z.

    Examples
    --------
    >>> round(gaussian_epsilon(gaussian_noise_multiplier(1.0, 1e-5), 1e-5), 4)  # inverse of z
    1.0
    """
    z = check_real("noise_multiplier", noise_multiplier, low=0.0, allow_inf=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if z == 0.0 or delta == 0.0:
        return math.inf
    if math.isinf(z):
        return 0.0
    return float(dp_accounting.get_epsilon_gaussian(z, delta))


def gaussian_delta(noise_multiplier: float, epsilon: float) -> float:
    """Exact delta(epsilon) of one Gaussian mechanism with noise multiplier z (Balle & Wang).

    Examples
    --------
    >>> f"{gaussian_delta(gaussian_noise_multiplier(1.0, 1e-5), 1.0):.4g}"  # Balle-Wang at eps = 1
    '1e-05'
    """
    z = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    epsilon = check_real("epsilon", epsilon, low=0.0)
    mu = 1.0 / z
    # delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), with Phi via erfc for accuracy.
    a = 0.5 * math.erfc(-(mu / 2 - epsilon / mu) / math.sqrt(2))
    b = 0.5 * math.erfc((mu / 2 + epsilon / mu) / math.sqrt(2))
    return max(0.0, a - math.exp(epsilon) * b)


def zcdp_epsilon(rho: float, delta: float, *, xi: float = 0.0) -> float:
    """Epsilon at ``delta`` that dp-accounting's RDP accountant certifies for (xi, rho)-zCDP.

    (xi, rho)-zCDP is (alpha, xi + alpha rho)-RDP for every alpha > 1 (Bun & Steinke 2016),
    dp-accounting's ``ZCDpEvent``; the RDP-to-DP conversion is an upper bound. This is the
    sound account of the discrete Gaussian (secure noise), whose Renyi curve, not its
    (epsilon, delta) curve, equals the continuous Gaussian's (CKS 2020, Theorem 14).

    Examples
    --------
    >>> round(zcdp_epsilon(0.5, 1e-5), 4)  # the RDP figure of a Gaussian with z = 1
    4.7285
    """
    rho = check_real("rho", rho, low=0.0)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    xi = check_real("xi", xi, low=0.0)
    acc = dp_accounting.rdp.RdpAccountant()
    acc.compose(dp_accounting.ZCDpEvent(rho, xi))
    return float(acc.get_epsilon(delta))


def zcdp_gaussian_noise_multiplier(epsilon: float, delta: float, *, xi: float = 0.0) -> float:
    """Smallest z such that (xi, 1/(2 z^2))-zCDP is certified (epsilon, delta)-DP through RDP.

    Secure noise's calibration (CKS Theorem 14); 4-11% above
    :func:`gaussian_noise_multiplier` for epsilon in [0.1, 10]: the price of a proof that
    holds for the discrete law.

    Examples
    --------
    >>> z = zcdp_gaussian_noise_multiplier(1.0, 1e-5)
    >>> round(z / gaussian_noise_multiplier(1.0, 1e-5), 3), zcdp_epsilon(0.5 / z**2, 1e-5) <= 1
    (1.084, True)
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    xi = check_real("xi", xi, low=0.0)
    if xi >= epsilon:
        raise fail("xi", f"be < epsilon = {epsilon:g} (xi alone costs xi)", xi)
    low = gaussian_noise_multiplier(epsilon, delta)  # no accountant certifies less noise
    high = 2.0 * low
    while zcdp_epsilon(0.5 / high**2, delta, xi=xi) > epsilon:
        high *= 2.0
    z = float(dp_accounting.calibrate_dp_mechanism(
        dp_accounting.rdp.RdpAccountant, lambda v: dp_accounting.ZCDpEvent(0.5 / v**2, xi),
        epsilon, delta, dp_accounting.ExplicitBracketInterval(low, high), tol=1e-10 * low))
    while zcdp_epsilon(0.5 / z**2, delta, xi=xi) > epsilon:  # never on the unsafe side
        z *= 1.0 + 1e-12
    return z


#: the delta of every default: 1e-5, or 1/n where that is smaller
DEFAULT_DELTA = 1e-5


def default_delta(n: int) -> float:
    """The library's one default delta for n protected elements: min(1e-5, 1/n).

    A delta of order 1/n would allow releasing one element in the clear, so delta must
    stay well below it; 1e-5 is the common choice for the data sets of this field, and
    1/n takes over for streams longer than 100,000 elements. Learners, the adapters and
    the ``dpol`` command all use it when no delta is given.

    Examples
    --------
    >>> default_delta(1_000), default_delta(1_000_000)
    (1e-05, 1e-06)
    """
    n = check_int("n", n, low=1)
    return min(DEFAULT_DELTA, 1.0 / n)


#: the range of a target epsilon: beyond 1e6 the calibrations' root finds take seconds to
#: minutes or do not end, below 1e-6 the accountants round the derived epsilon to 0 (a
#: claim stronger than the truth); neither end learns anything (inf: the twin)
EPSILON_RANGE = (1e-6, 1e6)
#: the ``calibration=`` choices: "tight" (the exact noise for the target) or "paper" (a
#: published formula, verbatim, its real guarantee derived and reported)
CALIBRATIONS = ("tight", "paper")


def check_epsilon(value: object, *, allow_inf: bool = True) -> float:
    """Return a target epsilon as a float, in EPSILON_RANGE (or inf where allowed).

    Examples
    --------
    >>> check_epsilon(1), check_epsilon(float("inf"))
    (1.0, inf)
    >>> check_epsilon(1e300)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: epsilon must be in [1e-06, 1e+06] (or inf); got 1e+300
    """
    x = check_real("epsilon", value, low=0.0, low_open=True, allow_inf=allow_inf)
    if math.isfinite(x) and not EPSILON_RANGE[0] <= x <= EPSILON_RANGE[1]:
        raise fail("epsilon", f"be in [{EPSILON_RANGE[0]:g}, {EPSILON_RANGE[1]:g}]"
                   + (" (or inf)" if allow_inf else ""), value)
    return x


def resolve_delta(delta: float | None, n: int) -> float:
    """``delta`` checked, or :func:`default_delta` of n when it is None.

    Examples
    --------
    >>> resolve_delta(None, 500_000), resolve_delta(1e-7, 10)
    (2e-06, 1e-07)
    """
    if delta is None:
        return default_delta(n)
    return check_real("delta", delta, low=0.0, high=1.0, high_open=True)


def pure_noise_multiplier(epsilon: float) -> float:
    """z = 1/epsilon for Laplace and Gamma noise (pure DP, see the module docstring).

    Examples
    --------
    >>> pure_noise_multiplier(0.5)  # Laplace scale = 2 x (l1 sensitivity) at epsilon = 0.5
    2.0
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    return 1.0 / epsilon


def certified_epsilon(
    event: dp_accounting.DpEvent, delta: float, *, accountant: str = "pld"
) -> float:
    """Epsilon at ``delta`` that a dp-accounting accountant certifies for ``event``.

    Noise multipliers as this module's convention (dp-accounting's ADD_OR_REMOVE_ONE at
    sensitivity one).

    Parameters
    ----------
    event : dp_accounting.DpEvent
    delta : float
    accountant : {"pld", "rdp"}
        PLD is tight up to its discretisation (pessimistic); RDP is a looser upper bound.

    Examples
    --------
    >>> import dp_accounting
    >>> z = gaussian_noise_multiplier(1.0, 1e-5)
    >>> abs(certified_epsilon(dp_accounting.GaussianDpEvent(z), 1e-5) - 1.0) < 5e-3
    True
    """
    delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if accountant == "pld":
        acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    elif accountant == "rdp":
        acc = dp_accounting.rdp.RdpAccountant()
    else:
        raise fail("accountant", "be 'pld' or 'rdp'", accountant)
    if not acc.supports(event):
        raise fail("event", f"be supported by the {accountant} accountant", event)
    acc.compose(event)
    return float(acc.get_epsilon(delta))
