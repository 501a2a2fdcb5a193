"""KNJ presets (Kasiviswanathan, Nissim, Jin): TreeMech's sigma, verbatim and
patched, Mechanism 1's budget split, and the review's exact failures.

Tolerances: ``printed`` (tests/accounting/preset_cases.py) matches a number printed with k
decimals to within half a unit of its last digit. Nothing here is random; every number is
computed, never hard-coded as an input.
"""

from __future__ import annotations

import math

import pytest
from preset_cases import printed

from dpol.accounting import gaussian_delta
from dpol.accounting import presets as P
from dpol.errors import InvalidInputError


def test_knj_tree_mech_small_t():
    for log, text in (("log2", "1.07"), ("ln", "1.61")):
        sigma = P.knj_tree_mech_sigma(1.0, 1e-5, 2, 1.0, log=log)
        assert printed(P.knj_tree_mech_exact_epsilon(sigma, 1.0, 2, 1e-5), text)
    for horizon, text in ((3, "0.97"), (4, "0.94"), (5, "0.80")):  # ln reading is private here
        sigma = P.knj_tree_mech_sigma(1.0, 1e-5, horizon, 1.0, log="ln")
        assert printed(P.knj_tree_mech_exact_epsilon(sigma, 1.0, horizon, 1e-5), text)


def test_knj_tree_mech_verbatim_formula():
    sigma = P.knj_tree_mech_sigma(0.5, 1e-6, 1024, 2.0)
    assert sigma**2 == pytest.approx(2 * 100 * 4 * math.log(2e6) / 0.25, rel=1e-12)
    # the spec's classical condition log^2 T >= K fails with ln for T <= 5 (spec A2)
    assert [h for h in range(2, 40) if math.log(h) ** 2 < P.tree_levels(h)] == [2, 3, 4, 5]


def test_knj_exact_failures_grid():
    grid = [(e, d) for e in (0.01, 0.1, 1.0, 3.0, 10.0) for d in (1e-10, 1e-6, 1e-2)]
    fails = {"log2": set(), "ln": set()}
    for log in fails:
        for eps, delta in grid:
            for horizon in range(2, 257):
                sigma = P.knj_tree_mech_sigma(eps, delta, horizon, 1.0, log=log)
                z = sigma / math.sqrt(P.tree_levels(horizon))
                if gaussian_delta(z, eps) > delta:
                    fails[log].add(horizon)
    assert fails["log2"] == {2}  # (and T = 1, which is refused)
    assert 2 in fails["ln"] and max(fails["ln"]) <= 8


def test_knj_patched_sigma_is_named_and_never_zero():
    for horizon in (1, 2):
        sigma = P.knj_tree_mech_sigma_patched(1.0, 1e-5, horizon, 1.0)
        assert P.knj_tree_mech_exact_epsilon(sigma, 1.0, horizon, 1e-5) < 1.0
    for horizon in (3, 4, 100, 2**20):  # equal to the verbatim formula once log2^2 T >= K
        assert P.knj_tree_mech_sigma_patched(1.0, 1e-5, horizon, 1.0) == pytest.approx(
            P.knj_tree_mech_sigma(1.0, 1e-5, horizon, 1.0), rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-3])
@pytest.mark.parametrize(("horizon", "tau"), [(1000, 1), (1000, 10), (1000, 1000), (997, 10)])
def test_knj_mechanism1_split_totals_the_budget(eps, delta, horizon, tau):
    eps_p, delta_p = P.knj_mechanism1_split(eps, delta, horizon, tau)
    calls = horizon / tau
    assert eps_p <= 1.0
    assert eps_p == pytest.approx(eps / (2 * math.sqrt(2 * calls * math.log(2 / delta))))
    total_eps, total_delta = P.knj_advanced_composition(eps_p, delta_p, calls, delta / 2)
    assert total_eps <= eps * (1 + 1e-12)
    assert total_delta == pytest.approx(delta, rel=1e-12)


def test_knj_mechanism1_refuses_outside_its_proof():
    with pytest.raises(InvalidInputError, match="2 ln"):
        P.knj_mechanism1_split(30.0, 1e-5, 10**6, 1)
    with pytest.raises(InvalidInputError, match=r"Theorem A\.4"):
        P.knj_mechanism1_split(20.0, 1e-5, 10, 10)
    with pytest.raises(InvalidInputError, match="tau must be <= horizon"):
        P.knj_mechanism1_split(1.0, 1e-5, 10, 11)
