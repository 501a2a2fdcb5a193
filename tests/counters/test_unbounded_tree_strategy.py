"""The unbounded tree strategy: its variance formula against the nodes summed, its unit
columns, and no loss without a horizon.

The streaming contract of every strategy is tests/counters/test_strategy.py; the counter
of endless streams tests/counters/test_unbounded_tree.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters.strategies import UnboundedTreeStrategy


def test_variance_formula_against_the_nodes_summed():
    # variance(t): sum over the nodes of the release of their block's level count
    s = UnboundedTreeStrategy()
    for t in range(1, 600):
        k = t.bit_length() - 1
        j = t - 2**k + 1
        nodes = [kk + 1 for kk in range(k)] + [k + 1] * bin(j).count("1")
        assert s.variance(np.array([t]))[0] == sum(nodes)
    big = np.array([2**40, 2**41 - 1, 2**62])
    assert s.variance(big).tolist() == [40 * 41 / 2 + 41, 41 * 42 / 2, 62 * 63 / 2 + 63]


def test_columns_have_norm_at_most_one_attained_by_every_block():
    s = UnboundedTreeStrategy()
    n = 2**7 - 1  # blocks 0..6, all finished
    norms = np.array([np.linalg.norm(s.encode(np.eye(n)[:, [i]])) for i in range(n)])
    assert np.all(norms <= 1.0 + 1e-12)
    first = 2 ** np.arange(7) - 1  # each block's first element lies in all its levels
    np.testing.assert_allclose(norms[first], 1.0, rtol=1e-12)
    assert np.all(norms[np.setdiff1d(np.arange(n), first)] < 1.0 - 1e-3)



def test_loss_is_refused_without_a_horizon():
    # a max or mean over every step of an endless stream does not exist; the counter
    # refuses first (test_unbounded_tree.py), the strategy must not return a number
    with pytest.raises(NotImplementedError, match="no horizon to take the max or mean"):
        UnboundedTreeStrategy().loss()
