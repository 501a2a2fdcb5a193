"""HonakerTreeCounter: the variance of its estimates and its own refusal.

Every counter's contract is tests/counters/test_counters.py; the estimator against the
pseudo-code is tests/counters/test_counters_reference.py.
"""

from __future__ import annotations

import pytest

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter
from dpol.errors import InvalidInputError


def test_honaker_variance_values():
    c = HonakerTreeCounter(8, noise_multiplier=1.0)
    unit = c.noise_scale**2
    assert c.variance(4) / unit == pytest.approx(4 / 7, rel=1e-12)
    assert c.variance(8) / unit == pytest.approx(8 / 15, rel=1e-12)
    binary = BinaryTreeCounter(2**16, noise_multiplier=1.0)
    honaker = HonakerTreeCounter(2**16, noise_multiplier=1.0)
    assert honaker.loss() < binary.loss()  # the point of the estimator


def test_paper_calibration_is_refused():
    with pytest.raises(InvalidInputError, match="calibration must be 'tight': HonakerTree"):
        HonakerTreeCounter(4, epsilon=1.0, delta=1e-5, calibration="paper")
