"""running_sum_rows: numpy's cumsum, in place, by either path (cumsum or the row loop)."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters._running_sum import running_sum_rows


@pytest.mark.parametrize("shape", [(50, 1), (50, 127), (50, 128), (50, 300), (1, 300),
                                   (0, 300)])
def test_it_is_cumsum_bit_for_bit_and_in_place(shape):
    # entries over 16 decades: any other order of the additions (pairwise, blocked)
    # rounds differently, so equality holds only for row i += row i - 1, as the add loop
    rng = np.random.default_rng(shape[1])
    rows = rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, size=shape)
    expected = np.cumsum(rows, axis=0)
    assert running_sum_rows(rows) is rows
    assert np.array_equal(rows, expected)
