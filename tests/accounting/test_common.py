"""The presets' shared helpers (dpol.accounting.presets._common): level counts, the exact
epsilon of tree noise, the log readings, and the refusals every preset inherits.

Nothing here is random; every expected number is computed (level counts by brute force,
mu* by bisection in dp-accounting), never hard-coded as an input.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpol.accounting import mu_star
from dpol.accounting import presets as P
from dpol.errors import InvalidInputError


def test_tree_levels_are_the_exact_populated_node_counts():
    # brute force: aligned dyadic nodes [j 2^l + 1, (j+1) 2^l] complete within N items
    for n in range(1, 130):
        best = max(
            sum(1 for lvl in range(n.bit_length() + 1)
                if ((i - 1) >> lvl) * 2**lvl + 2**lvl <= n)
            for i in range(1, n + 1))
        assert P.tree_levels(n) == best
    assert [P.tree_levels(n) for n in (3, 5, 100)] == [2, 3, 7]  # review item 3


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.05, 8.0), log_delta=st.floats(-10.0, -2.0),
       node=st.floats(0.1, 10.0), levels=st.integers(1, 40))
def test_exact_epsilon_of_tree_sigma_inverts_the_tight_calibration(eps, log_delta, node, levels):
    delta = 10.0**log_delta
    sigma = node * math.sqrt(levels) / mu_star(eps, delta)
    got = P.exact_epsilon_of_tree_sigma(sigma, node, levels, delta)
    # mu* is certified (never over the target) and tight to dp-accounting's bisection
    assert got <= eps * (1 + 1e-9) and got == pytest.approx(eps, rel=1e-6)
    assert P.exact_epsilon_of_tree_sigma(1.1 * sigma, node, levels, delta) < got


def test_pure_tree_epsilon_is_basic_composition():
    assert P.pure_epsilon_of_tree_scale(10.0, 2.0, 5) == pytest.approx(1.0)
    assert P.pure_epsilon_of_tree_scale(0.0, 2.0, 5) == math.inf


@pytest.mark.parametrize("call", [
    lambda: P.jkt_pocp_beta(1.0, 1e-5, 1, 1.0),
    lambda: P.jkt_private_sum_sigma(1.0, 1e-5, 1, 1.0),
    lambda: P.jkt_private_sum_sigma(1.0, 1e-5, 1, 1.0, log="ln"),
    lambda: P.jkt_pol_beta(1.0, 1e-5, 1, 1.0, 0.1, 1.0),
    lambda: P.knj_tree_mech_sigma(1.0, 1e-5, 1, 2.0),
    lambda: P.env_tree_laplace_scale(1.0, 1, 1.0),
    lambda: P.env_tree_gaussian_sigma(1.0, 1e-5, 1, 1.0),
    lambda: P.env_bandit_gaussian_sigma(1.0, 1e-6, 1, 4, 1.0)])
def test_formulas_that_add_no_noise_at_t_equal_1_refuse(call):
    with pytest.raises(InvalidInputError, match=r"(no noise|releases nothing)"):
        call()


def test_bad_arguments_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="log must be one of"):
        P.jkt_private_sum_sigma(1.0, 1e-5, 8, 1.0, log="log10")
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        P.knj_tree_mech_sigma(0.0, 1e-5, 8, 2.0)
    with pytest.raises(ValueError, match="delta must be < 1"):
        P.wdp_gaussian_sigma(1.0, 1.0, 1.0, 16)
    with pytest.raises(ValueError, match="horizon must be an integer"):
        P.jkt_pocp_beta(1.0, 1e-5, 10.5, 1.0)
    # a delta term ln(log T / delta) <= 0 would make the printed variance negative
    with pytest.raises(InvalidInputError, match="variance is positive"):
        P.jkt_private_sum_sigma(1.0, 0.9, 2, 1.0, log="ln")
