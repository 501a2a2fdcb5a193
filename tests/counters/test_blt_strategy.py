"""The BLT strategy: the coefficients of C = G^-1 against the streaming recursion, never
growing, and the endless strategy's series as limits of the bounded sums.

The streaming contract of every strategy is tests/counters/test_strategy.py; the counter
against dense matrices tests/counters/test_blt.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BltCounter
from dpol.counters.blt import optimal_blt_parameters
from dpol.counters.strategies import BltStrategy
from dpol.counters.strategies.blt_strategy import inverse_coefficients as _inverse_coefficients

#: BLT parameters optimized for a design horizon of 2^6 (their error grows past it), as
#: the endless BLT of test_unbounded_tree.py
THETAS, OMEGAS = optimal_blt_parameters(2**6)


def test_inverse_coefficients_match_the_streaming_recursion_near_one():
    # c is the response of the inverse system x_k = y_k - omega^T u_k, u <- theta u + x to
    # an impulse y; a plain loop of it is the reference. Parameters: the optimized five
    # buffers at 2^16, whose thetas crowd near 1. Both paths add only positive terms, so
    # c_k carries at most k b rounding steps of relative 1.1e-16 each: k b eps <= 3.6e-11
    # at k = 2^16, b = 5 (an expanded-polynomial lfilter is off by up to 1.8% here).
    horizon = 2**16
    thetas, omegas = optimal_blt_parameters(horizon)
    c = _inverse_coefficients(thetas, omegas, horizon)
    u, ref = np.zeros(thetas.size), np.empty(horizon)
    for k in range(horizon):
        x = (1.0 if k == 0 else 0.0) - omegas @ u
        u = thetas * u + x
        ref[k] = x
    np.testing.assert_allclose(c, ref, rtol=1e-10, atol=0)
    assert np.all(c > 0)  # positive coefficients: no cancellation anywhere
    counter = BltCounter(horizon, noise_multiplier=1.0)
    assert counter.sensitivity**2 / 4.0 == pytest.approx(float(np.sum(ref**2)), rel=1e-10)


def test_blt_coefficients_never_grow():
    # BltCounter's Privacy: h is a moment sequence (log-convex), so C = 1 / ((1 - x) H)
    # has non-increasing coefficients for every valid parameter set; random ones, some
    # crowding near 1 and near the stability boundary, to rounding (1e-13 relative)
    rng = np.random.default_rng(11)
    for _ in range(200):
        size = int(rng.integers(1, 6))
        thetas = 1.0 - 10.0 ** rng.uniform(-8, -0.01, size)
        s = rng.dirichlet(np.ones(size + 1))[:size]
        c = _inverse_coefficients(thetas, -(1.0 - thetas) * s, 512)
        assert np.all(c >= 0) and np.all(np.diff(c) <= 1e-13 * c[1:]), (thetas, s)


def test_blt_series_are_the_limits_of_the_bounded_sums():
    # the Stein-equation column norm is the limit of the bounded strategy's prefix sums,
    # and the closed-form row norms are its cumulative sums at every t
    endless = BltStrategy(None, THETAS, OMEGAS)
    bounded = BltStrategy(2**16, THETAS, OMEGAS)
    assert BltStrategy(2**8, THETAS, OMEGAS).column_norm_sq() < endless.column_norm_sq()
    # converged at 2^16 (to an ulp: the two sums round differently)
    np.testing.assert_allclose(bounded.column_norm_sq(), endless.column_norm_sq(), rtol=1e-14)
    t = np.array([1, 2, 3, 63, 64, 65, 1000, 2**16])
    np.testing.assert_allclose(endless.variance(t), bounded.variance(t), rtol=1e-9)
    s = -OMEGAS / (1 - THETAS)  # past the design horizon the growth is (1 - sum s)^2 per step
    late = endless.variance(np.array([2**30, 2**30 + 1000]))
    np.testing.assert_allclose(np.diff(late) / 1000, (1 - s.sum())**2, rtol=1e-6)


def test_the_direct_filter_is_lfilters_bit_for_bit():
    # a block's buffers go through lfilter's C filter without lfilter's argument handling:
    # the same function, so equal bits, not equal to rounding
    from scipy import signal

    from dpol.counters.strategies.blt_strategy import _ONE, _linear_filter

    rng = np.random.default_rng(0)
    z, zi = rng.normal(size=(300, 7)), rng.normal(size=(1, 7))
    for theta in THETAS:
        a = np.array([1.0, -theta])
        direct = _linear_filter()(_ONE, a, z, 0, theta * zi)
        slow = signal.lfilter([1.0], [1.0, -theta], z, axis=0, zi=theta * zi)
        for d, s in zip(direct, slow, strict=True):
            np.testing.assert_array_equal(d.view(np.int64), s.view(np.int64))
