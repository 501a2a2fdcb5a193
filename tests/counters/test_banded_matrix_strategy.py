"""The banded matrix strategy's participations: disjoint columns cost exactly k.

The streaming contract of every strategy is tests/counters/test_strategy.py.
"""

from __future__ import annotations

import pytest

from dpol.counters import BandedMatrixCounter, Participation


def test_epochs_cost_exactly_sqrt_k_when_the_band_fits_the_separation():
    one = BandedMatrixCounter(256, noise_multiplier=1.0, participation=(1, 16))
    many = BandedMatrixCounter(256, noise_multiplier=1.0, participation=(16, 16))
    assert many.strategy.bands == 16  # the default band stops at the separation
    assert many.strategy.column_norm_sq(many.participation) == pytest.approx(16.0)
    assert one.strategy.column_norm_sq() == pytest.approx(1.0)
    # closer participations overlap: the generic bound, above k
    close = many.strategy.column_norm_sq(Participation(16, 8))
    assert close > 16.0
