"""The bit helpers of the dyadic (tree) decompositions against plain Python integers: every
step up to 2^12 and the large steps an endless stream reaches."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters.strategies._bits import (
    lowbit,
    max_popcount,
    popcount,
    set_bits_high_to_low,
    trailing_zero_count,
    trailing_zeros,
)

STEPS = np.arange(1, 2**12 + 1, dtype=np.int64)
BIG = np.array([2**40, 2**41 - 1, 2**52 + 3, 2**62, 2**63 - 1], dtype=np.int64)


@pytest.mark.parametrize("steps", [STEPS, BIG], ids=["small", "big"])
def test_vectorized_helpers_are_the_python_bit_operations(steps):
    ints = [int(t) for t in steps]
    assert popcount(steps).tolist() == [bin(t).count("1") for t in ints]
    assert lowbit(steps).tolist() == [t & -t for t in ints]
    # log2 of a power of two is exact in float64 up to 2^62
    assert trailing_zeros(steps).tolist() == [(t & -t).bit_length() - 1 for t in ints]
    assert [trailing_zero_count(t) for t in ints] == trailing_zeros(steps).tolist()
    assert popcount(0) == 0 and popcount(steps).dtype == np.int64


def test_popcount_without_numpy_bitwise_count(monkeypatch):
    # numpy < 2 has no bitwise_count: the shift loop must count the same bits
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    both = np.concatenate([[0], STEPS, BIG])
    assert popcount(both).tolist() == [bin(int(t)).count("1") for t in both]


def test_set_bits_and_max_popcount():
    for t in [0, *STEPS[:300].tolist(), *BIG.tolist()]:
        bits = set_bits_high_to_low(t)
        assert bits == sorted(bits, reverse=True) and sum(1 << j for j in bits) == t
    # the largest popcount over 1..n: the running maximum, for every n up to 2^12
    running = np.maximum.accumulate(popcount(STEPS))
    assert [max_popcount(int(n)) for n in STEPS] == running.tolist()
    assert max_popcount(0) == 0
