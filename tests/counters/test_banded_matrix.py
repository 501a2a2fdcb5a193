"""BandedMatrixCounter: its own refusals.

Every counter's contract is tests/counters/test_counters.py; the optimiser is
test_banded_matrix_optimizer.py, the strategy's participations
test_banded_matrix_strategy.py.
"""

from __future__ import annotations

import pytest

from dpol.counters import BandedMatrixCounter


def test_refusals_name_the_argument():
    with pytest.raises(ValueError, match="horizon must be at most 2048"):
        BandedMatrixCounter(4096, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="bands must be an integer >= 1"):
        BandedMatrixCounter(64, bands=0, noise_multiplier=1.0)
    for noise in ("laplace", "secure_laplace"):  # l1 column norms grow with the bands
        with pytest.raises(ValueError, match="noise must be 'gaussian' or 'secure'"):
            BandedMatrixCounter(64, noise_multiplier=1.0, noise=noise)
