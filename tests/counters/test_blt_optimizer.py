"""The BLT optimizer: deterministic, cached and feasible, and its closed-form pattern
sensitivity against the materialised sum of the strategy.

The counter built from its parameters is tests/counters/test_blt.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters.blt import blt_loss, optimal_blt_parameters
from dpol.counters.strategies import BltStrategy, Participation
from dpol.counters.strategies.blt_optimizer import _optimized, _pattern_sensitivity_sq

from counter_cases import BLT_GIVEN, UNBOUNDED_OMEGAS, UNBOUNDED_THETAS


def test_optimizer_is_deterministic_cached_and_feasible():
    horizon = 777
    _optimized.cache_clear()
    first = optimal_blt_parameters(horizon, buffers=3)
    again = optimal_blt_parameters(horizon, buffers=3)
    assert _optimized.cache_info().hits == 1
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a, b)
    thetas, omegas = first
    assert np.all((thetas > 0) & (thetas < 1)) and np.all(omegas < 0)
    assert np.sum(-omegas / (1 - thetas)) < 1
    # more buffers never lose: the b = 3 optimum is within 1% of b = 5 and above it
    loss3 = blt_loss(thetas, omegas, horizon)
    loss5 = blt_loss(*optimal_blt_parameters(horizon, buffers=5), horizon)
    assert loss5 <= loss3 <= 1.01 * loss5


@pytest.mark.parametrize("horizon", [1000, 2**14])
def test_pattern_sensitivity_closed_form_is_the_materialised_pattern_sum(horizon):
    # O(k b^3 + b^3 log T) against the O(k T) sum over the coefficients: the same
    # positive terms in another order, rounding far below 1e-10 relative
    for thetas, omegas in [(UNBOUNDED_THETAS, UNBOUNDED_OMEGAS), *BLT_GIVEN]:  # optimised, given
        strategy = BltStrategy(horizon, np.asarray(thetas), np.asarray(omegas))
        for k, b in [(4, horizon // 4), (16, 7), (3, horizon // 2 - 1), (2, 1)]:
            p = Participation(k, b)
            assert _pattern_sensitivity_sq(strategy.thetas, strategy.omegas, horizon,
                                           p.within(horizon), b) \
                == pytest.approx(strategy.column_norm_sq(p), rel=1e-10), (k, b)
