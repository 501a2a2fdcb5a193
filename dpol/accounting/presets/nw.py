"""NW (Nie, Wang): the C_t sensitivity of the kernel learner, printed and corrected.

See :mod:`dpol.accounting.presets` for the conventions (log readings, zero noise).
"""

from __future__ import annotations

from dpol._validation import check_int, check_real, fail
from dpol.accounting.presets._common import _eps, _pos

__all__ = ["nw_corrected_laplace_scale", "nw_corrected_sensitivity", "nw_printed_sensitivity"]


def _nw_base(t: int, kappa: float, bound: float, theta: float, t0: float) -> float:
    """Validate NW's parameters and return ``t - 1 + t0``."""
    t = check_int("t", t, low=1)
    kappa, bound = _pos("kappa", kappa), _pos("bound", bound)
    theta = check_real("theta", theta, low=0.5, high=1.0, low_open=True, high_open=True)
    t0 = _pos("t0", t0)
    if t0**theta < kappa**2 + 1.0:
        raise fail("t0", f"satisfy t0^theta >= kappa^2 + 1 = {kappa**2 + 1.0:g}", t0)
    return t - 1.0 + t0


def nw_printed_sensitivity(t: int, kappa: float, bound: float, theta: float, t0: float) -> float:
    """NW Theorem 1 eq. (12) C_t **as printed**: ``2 (kappa^2+1) kappa M / (t-1+t0)^(2 theta-1)``.

    Erratum (docs/errata.md, NW-2): the proof (17) gives kappa^2, not kappa; for kappa > 1
    this is too small by a factor kappa. Use :func:`nw_corrected_sensitivity`.

    Examples
    --------
    >>> round(nw_printed_sensitivity(300, 1.0, 1.0, 0.75, 3), 2)  # kappa = 1: equals the corrected
    0.23
    """
    base = _nw_base(t, kappa, bound, theta, t0)
    return 2.0 * (kappa**2 + 1.0) * kappa * bound / base ** (2.0 * theta - 1.0)


def nw_corrected_sensitivity(
    t: int, kappa: float, bound: float, theta: float, t0: float, *, tight: bool = False
) -> float:
    """NW sup-norm sensitivity C_t of f_t, corrected (docs/errata.md, NW-2, NW-3), for t >= 1.

    ``C_t = 2 kappa^2 (kappa^2 + 1) M / (t - 1 + t0)^(2 theta - 1)`` (the proven (17)); with
    ``tight=True`` the paper's own steps give
    ``2 kappa^2 M [kappa^2 (t-1+t0)^(1-2 theta) + (t-1+t0)^(-theta)]``. Valid for a change at
    any position (NW-3). kappa = sup_x sqrt(K(x, x)) (NW-2); M bounds |y|; requires
    1/2 < theta < 1 and t0^theta >= kappa^2 + 1.

    Examples
    --------
    >>> args = (50, 2.0, 1.0, 0.75, 9)  # kappa = 2, t0^theta = 5.2 >= kappa^2 + 1
    >>> round(nw_corrected_sensitivity(*args) / nw_printed_sensitivity(*args), 4)  # factor kappa
    2.0
    """
    base = _nw_base(t, kappa, bound, theta, t0)
    if tight:
        return 2.0 * kappa**2 * bound * (kappa**2 * base ** (1.0 - 2.0 * theta) + base**-theta)
    return 2.0 * kappa**2 * (kappa**2 + 1.0) * bound / base ** (2.0 * theta - 1.0)


def nw_corrected_laplace_scale(
    epsilon: float, t: int, kappa: float, bound: float, theta: float, t0: float, *,
    tight: bool = False,
) -> float:
    """NW Theorem 1 Laplace scale ``C_t / eps`` with the **corrected** sensitivity C_t.

    **The published mechanism is unsound** (docs/errata.md, NW-1: one scalar draw leaves
    f_t(u1) - f_t(u2) noise-free). This scale is epsilon-DP only for one *scalar* release
    such as f_t(u) at a public point, per release (a transcript sums them: NW-3).

    Examples
    --------
    >>> round(nw_corrected_laplace_scale(0.5, 5000, 1.0, 1.0, 0.6, 4), 4)  # C_t / eps, C_t ~ 0.73
    1.4563
    """
    return nw_corrected_sensitivity(t, kappa, bound, theta, t0, tight=tight) / _eps(epsilon)
