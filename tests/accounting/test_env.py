"""ENV presets (Ene, Nguyen, Vladu): tree aggregation and the bandit presets, and
the spec's worked example and ratio table.

Tolerances: ``printed`` (tests/accounting/preset_cases.py) matches a number printed with k
decimals to within half a unit of its last digit. Nothing here is random; every number is
computed, never hard-coded as an input.
"""

from __future__ import annotations

import math

import pytest
from preset_cases import printed

from dpol.accounting import presets as P


def test_env_worked_example():
    horizon, dim, lip, eps, delta = 10**4, 4, 1.0, 1.0, 1e-6
    assert printed(P.env_bandit_laplace_scale(eps, horizon, dim, lip, log="ln"), "3684.1")
    assert printed(P.env_bandit_laplace_scale(eps, horizon, dim, lip), "5315.1")  # log2
    sigma = P.env_bandit_gaussian_sigma(eps, delta, horizon, dim, lip, log="ln")
    assert printed(sigma / 1e5, "2.01")
    # Lemma 5.1 is Theorem 2.3 with Y_1 = T^(1/2) n L over the full horizon
    assert P.env_tree_laplace_scale(eps, horizon, 100 * dim * lip, log="ln") == pytest.approx(
        P.env_bandit_laplace_scale(eps, horizon, dim, lip, log="ln"), rel=1e-12)


def test_env_theorem_2_3_gaussian_reading():
    lt = math.log2(1024)
    assert P.env_tree_gaussian_sigma(2.0, 1e-5, 1024, 3.0) == pytest.approx(
        3.0 / 2.0 * lt * math.log(lt / 1e-5), rel=1e-12)


ENV_TABLE = [  # spec 2.7: (T, n, lambda_paper/lambda_per-summand, sigma_paper/sigma_per-summand)
    (16, 2, "0.54", "35"), (100, 10, "0.73", "44"), (10**4, 10, "4.4", "209"),
    (10**4, 100, "2.9", "106"), (10**6, 10, "18", "794")]


def _env_ratios(horizon: int, dim: int) -> tuple[float, float]:
    eps, delta = 1.0, 1e-6  # L = D = 1, B = L (D + zeta), natural logs in the paper formulas
    lam = P.env_bandit_laplace_scale(eps, horizon, dim, 1.0, log="ln")
    lam_ratio = eps / P.env_bandit_laplace_exact_epsilon(lam, horizon, dim, 1.0, 1.0)
    _, l2 = P.env_per_summand_sensitivity(horizon, dim, 1.0, 1.0)
    h = P.env_bandit_tree_levels(horizon)
    classic = math.sqrt(h) * l2 * math.sqrt(2 * math.log(1.25 / delta)) / eps  # spec's sigma
    sigma = P.env_bandit_gaussian_sigma(eps, delta, horizon, dim, 1.0, log="ln")
    return lam_ratio, sigma / classic


@pytest.mark.parametrize(("horizon", "dim", "lam_text", "sigma_text"), ENV_TABLE)
def test_env_preset_ratio_table(horizon, dim, lam_text, sigma_text):
    lam_ratio, sigma_ratio = _env_ratios(horizon, dim)
    assert printed(lam_ratio, lam_text) and printed(sigma_ratio, sigma_text)


def test_env_preset_ratio_last_row():
    """T = 1e8, n = 100: lambda ratio 56 reproduces; the spec's sigma ratio 1175 does not
    quite: we get 1174.46 (0.05% lower; h = 15, zeta = 0.1, B = 1.1). Reported to the lead."""
    lam_ratio, sigma_ratio = _env_ratios(10**8, 100)
    assert printed(lam_ratio, "56")
    assert printed(sigma_ratio, "1174.5")


def test_env_laplace_preset_is_insufficient_at_small_t():
    for horizon, dim, over in ((16, 2, True), (100, 10, True), (10**4, 10, False)):
        lam = P.env_bandit_laplace_scale(1.0, horizon, dim, 1.0, log="ln")
        realised = P.env_bandit_laplace_exact_epsilon(lam, horizon, dim, 1.0, 1.0)
        assert (realised > 1.0) is over
    # the Gaussian preset is hugely over-noised (review item 9)
    sigma = P.env_bandit_gaussian_sigma(1.0, 1e-6, 10**4, 10, 1.0, log="ln")
    assert P.env_bandit_gaussian_exact_epsilon(sigma, 1e-6, 10**4, 10, 1.0, 1.0) < 0.01


def test_env_tree_levels_and_sensitivity():
    # T = 1e4: K = m = 100, h = ceil(log2 100) + 1 = 8; T = 10: K = 4, m = 3, h = 3
    assert [P.env_bandit_tree_levels(t) for t in (1, 4, 10, 10**4)] == [1, 2, 3, 8]
    l1, l2 = P.env_per_summand_sensitivity(10**4, 4, 1.0, 2.0)  # zeta = 0.4 (spec 2.5)
    assert l2 == pytest.approx(2 * (4 / 0.4) * 2.4) and l1 == pytest.approx(2 * l2)
    assert P.env_per_summand_sensitivity(10**4, 4, 1.0, 2.0, loss_bound=1.0)[1] == pytest.approx(20)
