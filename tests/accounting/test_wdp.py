"""WDP presets (window-DP COCO): the printed Gaussian sigma and Gamma theta, and
the spec numbers their exact epsilons must reproduce.

Tolerances: ``printed`` (tests/accounting/preset_cases.py) matches a number printed with k
decimals to within half a unit of its last digit. Nothing here is random; every number is
computed, never hard-coded as an input.
"""

from __future__ import annotations

import math

import pytest
from preset_cases import printed

from dpol.accounting import mu_star
from dpol.accounting import presets as P


@pytest.mark.parametrize(("window", "eps", "texts"), [
    (16, 1.0, ("0.14", "0.31")), (16, 5.0, ("0.83", "1.78")), (1024, 1.0, ("0.093", "0.20"))])
def test_wdp_gaussian_exact_epsilon_table(window, eps, texts):
    sigma = P.wdp_gaussian_sigma(eps, 1e-5, 1.0, window, p=1)  # Delta_2 = 1
    for node, text in zip((1.0, 2.0), texts, strict=True):  # Delta_node = Delta_2 and 2 Delta_2
        assert printed(P.wdp_gaussian_exact_epsilon(sigma, node, window, 1e-5), text)


def test_wdp_printed_sigma_vs_recommended():
    assert printed(P.wdp_gaussian_sigma(1.0, 1e-5, 1.0, 1024, p=1), "109")
    assert printed(math.sqrt(11) / mu_star(1.0, 1e-5), "12.4")  # Delta sqrt(m) / mu*
    # p = 2 (default reading) multiplies sigma by sqrt(ln(2/delta))
    assert P.wdp_gaussian_sigma(1.0, 1e-5, 1.0, 1024) == pytest.approx(
        P.wdp_gaussian_sigma(1.0, 1e-5, 1.0, 1024, p=1) * math.sqrt(math.log(2e5)), rel=1e-12)


@pytest.mark.parametrize("window", [1, 16, 1024])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [1e-2, 1e-5])
@pytest.mark.parametrize("p", [1, 2])
def test_wdp_printed_sigma_is_sound(window, eps, delta, p):
    sigma = P.wdp_gaussian_sigma(eps, delta, 1.0, window, p=p)
    # sufficient even with the replace-one node sensitivity 2 Delta_2 (spec 8.1)
    assert P.wdp_gaussian_exact_epsilon(sigma, 2.0, window, delta) < eps


def test_wdp_gamma_theta_and_realised_epsilon():
    theta = P.wdp_gamma_theta(2.0, 1.5, 16)  # c1 = 4: 4 * 1.5 * 5 / 2
    assert theta == pytest.approx(15.0)
    assert P.wdp_gamma_theta(1.0, 1.0, 5) == P.wdp_gamma_theta(1.0, 1.0, 8)  # ceil(log2 W)
    # true node sensitivity 2 Delta_2: c1 = 4 leaves eps/2; c1 = 1 would give 2 eps
    assert P.wdp_gamma_exact_epsilon(theta, 3.0, 16) == pytest.approx(1.0)
    theta1 = P.wdp_gamma_theta(2.0, 1.5, 16, c1=1)
    assert P.wdp_gamma_exact_epsilon(theta1, 3.0, 16) == pytest.approx(4.0)
    # recommended theta = Delta_node m / eps is exactly eps
    assert P.wdp_gamma_exact_epsilon(3.0 * 5 / 2.0, 3.0, 16) == pytest.approx(2.0)
