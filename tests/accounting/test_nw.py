"""NW presets (Nie, Wang): the printed and corrected kernel sensitivities.

Tolerances: ``printed`` (tests/accounting/preset_cases.py) matches a number printed with k
decimals to within half a unit of its last digit. Nothing here is random; every number is
computed, never hard-coded as an input.
"""

from __future__ import annotations

import pytest
from preset_cases import printed

from dpol.accounting import presets as P


def test_nw_sensitivity():
    # Gaussian kernel (kappa = 1), theta = 0.75, t0 = 3, T = 300: printed C_T = 0.23
    assert printed(P.nw_printed_sensitivity(300, 1.0, 1.0, 0.75, 3), "0.23")
    assert P.nw_corrected_sensitivity(300, 1.0, 1.0, 0.75, 3) == pytest.approx(
        P.nw_printed_sensitivity(300, 1.0, 1.0, 0.75, 3), rel=1e-12)  # equal at kappa = 1
    # theta = 0.6, t0 = ceil(2^(1/theta)) = 4, t = 5000: C_t ~ 0.73
    assert printed(P.nw_corrected_sensitivity(5000, 1.0, 1.0, 0.6, 4), "0.73")
    assert P.nw_corrected_laplace_scale(0.5, 5000, 1.0, 1.0, 0.6, 4) == pytest.approx(
        2 * P.nw_corrected_sensitivity(5000, 1.0, 1.0, 0.6, 4))


def test_nw_printed_kappa_slip():
    # kappa = 2 (polynomial kernel on the unit ball): printed C_t smaller by a factor kappa
    args = (50, 2.0, 1.0, 0.75, 9)  # t0^theta = 5.2 >= kappa^2 + 1
    assert P.nw_corrected_sensitivity(*args) == pytest.approx(
        2.0 * P.nw_printed_sensitivity(*args), rel=1e-12)
    assert P.nw_corrected_sensitivity(*args, tight=True) <= P.nw_corrected_sensitivity(*args)
    # realised epsilon of the printed scale on one scalar release is kappa * eps
    scale = P.nw_printed_sensitivity(*args) / 1.0  # printed Laplace scale C_t / eps at eps = 1
    assert P.pure_epsilon_of_tree_scale(scale, P.nw_corrected_sensitivity(*args), 1) == (
        pytest.approx(2.0))


def test_nw_parameter_guards():
    with pytest.raises(ValueError, match=r"theta must be > 0\.5"):
        P.nw_corrected_sensitivity(10, 1.0, 1.0, 0.5, 3)
    with pytest.raises(ValueError, match="t0 must satisfy"):
        P.nw_corrected_sensitivity(10, 2.0, 1.0, 0.75, 3)
    with pytest.raises(ValueError, match="t must be an integer >= 1"):
        P.nw_corrected_sensitivity(0, 1.0, 1.0, 0.75, 3)
