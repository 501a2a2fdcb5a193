"""Window-DP bookkeeping: effective window, per-element node count, protected releases.

The node count is checked against a brute-force enumeration of the window tree's layout
(spec window-dp-coco.md 3.1-3.2): blocks of W' items, each a complete binary tree whose nodes
are noised when they complete; nodes spanning several blocks do not exist. All checks are
exact (integers); nothing is random.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpol.accounting import PrivacyGuarantee, mu_star
from dpol.accounting import window as wnd
from dpol.accounting.presets import wdp_gaussian_exact_epsilon
from dpol.errors import InvalidInputError


def brute_force_levels(window: int, horizon: int) -> int:
    """Max over items of the number of completed block-internal nodes containing the item."""
    block = wnd.effective_window(window)
    h = block.bit_length() - 1
    best = 0
    for i in range(1, horizon + 1):
        start = (i - 1) // block * block  # 0-based offset of the item's block
        off = i - 1 - start
        count = 0
        for lvl in range(h + 1):
            end = start + (off >> lvl << lvl) + 2**lvl  # last item (1-based) of the node
            count += end <= horizon
        best = max(best, count)
    return best


def test_effective_window_rounds_up_to_a_power_of_two():
    assert [wnd.effective_window(w) for w in (1, 2, 3, 4, 5, 16, 17, 1000)] == [
        1, 2, 4, 4, 8, 16, 32, 1024]


@given(st.integers(1, 10**9))
def test_effective_window_properties(window):
    w = wnd.effective_window(window)
    assert w & (w - 1) == 0 and window <= w < 2 * window


@pytest.mark.parametrize("window", [*range(1, 21), 32, 33, 64])
def test_window_levels_match_the_layout(window):
    for horizon in range(1, 3 * wnd.effective_window(window) + 3):
        assert wnd.window_levels(window, horizon) == brute_force_levels(window, horizon)
    # no horizon: leaf plus ancestors up to the block root
    assert wnd.window_levels(window) == int(math.log2(wnd.effective_window(window))) + 1


def test_window_levels_cap_when_the_window_covers_the_horizon():
    assert wnd.window_levels(1024, horizon=100) == 7  # floor(log2 100) + 1
    assert wnd.window_levels(64, horizon=64) == 7  # W' = T: the ordinary binary tree
    assert wnd.window_levels(16, horizon=10**6) == 5  # log2 16 + 1, however long the stream
    assert wnd.window_levels(5) == wnd.window_levels(8) == 4  # spec 3.2(f)


def test_protected_releases_are_i_to_i_plus_w_minus_1():
    assert list(wnd.protected_releases(3, 4)) == [3, 4, 5, 6]  # spec 8.4
    assert len(wnd.protected_releases(100, 64)) == 64
    assert list(wnd.protected_releases(9, 4, horizon=10)) == [9, 10]
    assert list(wnd.protected_releases(11, 4, horizon=10)) == []  # never released
    assert 3 + 4 not in wnd.protected_releases(3, 4)  # expired: not protected


def test_window_guarantee_marks_window_dp():
    g = wnd.window_guarantee(1.0, 1e-5, 64)
    assert g == PrivacyGuarantee(1.0, 1e-5, "replace_one", window=64)
    assert g.window == 64 and g.is_private and not g.is_pure
    assert wnd.window_guarantee(2.0, 0.0, 5, "add_remove").neighbouring == "add_remove"


def test_window_guarantee_and_helpers_validate():
    with pytest.raises(InvalidInputError, match="window must be an integer >= 1"):
        wnd.window_guarantee(1.0, 1e-5, 0)
    with pytest.raises(InvalidInputError, match="neighbouring must be one of"):
        wnd.window_guarantee(1.0, 1e-5, 4, "swap")
    with pytest.raises(InvalidInputError, match="window must be an integer"):
        wnd.effective_window(2.5)
    with pytest.raises(InvalidInputError, match="i must be an integer >= 1"):
        wnd.protected_releases(0, 4)


def test_module_documents_that_window_dp_is_weaker_and_expired_items_unprotected():
    doc = " ".join(wnd.__doc__.split())
    assert "strictly weaker than DP" in doc
    assert "Expired elements are not protected" in doc


@pytest.mark.parametrize(("window", "horizon"), [(16, None), (1024, 100), (5, 10**4)])
def test_recommended_window_sigma_is_exact(window, horizon):
    # sigma = Delta_node sqrt(m) / mu* is exactly window (eps, delta)-DP (review item 7)
    m = wnd.window_levels(window, horizon)
    sigma = 2.0 * math.sqrt(m) / mu_star(1.0, 1e-5)
    got = wdp_gaussian_exact_epsilon(sigma, 2.0, window, 1e-5, horizon=horizon)
    assert got == pytest.approx(1.0, rel=1e-6) and got <= 1.0 + 1e-12
