"""BinaryTreeCounter: its node counts, its loss, its padding (ENV) and its own refusal.

Every counter's contract is tests/counters/test_counters.py; the tree's structure against
the papers' pseudo-code is tests/counters/test_counters_reference.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter
from dpol.errors import InvalidInputError


def test_binary_tree_node_counts_and_loss():
    c = BinaryTreeCounter(8, noise_multiplier=1.0)
    counts = c.variance(np.arange(1, 9)) / c.noise_scale**2
    assert counts.tolist() == [1, 1, 2, 1, 2, 2, 3, 1]
    assert BinaryTreeCounter(2**16, noise_multiplier=1.0).loss() == 272.0
    padded = BinaryTreeCounter(100, noise_multiplier=1.0, padded=True)
    # padding as ENV's TreeBasedAgg: every release carries ceil(log2 100) = 7 draws
    assert set((padded.variance(np.arange(1, 101)) / padded.noise_scale**2).tolist()) == {7.0}
    one = BinaryTreeCounter(1, noise_multiplier=1.0, padded=True)
    assert one.variance(1) == one.noise_scale**2


def test_padded_must_be_a_bool():
    with pytest.raises(InvalidInputError, match="padded must be a bool"):
        BinaryTreeCounter(4, padded="yes", noise_multiplier=1.0)
