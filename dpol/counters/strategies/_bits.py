"""Integer bit helpers for dyadic (tree) decompositions, scalar or vectorized."""

from __future__ import annotations

import numpy as np

__all__ = [
    "lowbit",
    "max_popcount",
    "popcount",
    "set_bits_high_to_low",
    "trailing_zero_count",
    "trailing_zeros",
]


def popcount(x: np.ndarray | int) -> np.ndarray:
    """Number of set bits of non-negative integers.

    Examples
    --------
    >>> popcount([0, 1, 3, 7, 8, 13]).tolist()  # 13 = 0b1101
    [0, 1, 2, 3, 1, 3]
    """
    x = np.asarray(x, dtype=np.int64)
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(x).astype(np.int64)
    count = np.zeros_like(x)
    y = x.copy()
    while np.any(y):
        count += y & 1
        y >>= 1
    return count


def lowbit(x: np.ndarray | int) -> np.ndarray:
    """The lowest set bit of positive integers, as a power of two.

    Examples
    --------
    >>> lowbit([1, 2, 3, 4, 6, 12]).tolist()  # 12 = 0b1100
    [1, 2, 1, 4, 2, 4]
    """
    x = np.asarray(x, dtype=np.int64)
    return x & -x


def trailing_zeros(x: np.ndarray | int) -> np.ndarray:
    """Index of the lowest set bit of positive integers (exact: powers of two are exact floats).

    Examples
    --------
    >>> trailing_zeros([1, 2, 3, 4, 6, 12]).tolist()  # log2 of lowbit
    [0, 1, 0, 2, 1, 2]
    """
    return np.log2(lowbit(x).astype(np.float64)).astype(np.int64)


def trailing_zero_count(t: int) -> int:
    """Trailing zeros of one positive Python int, without numpy (per-step paths: ~0.1 us
    instead of ~4 us for ``trailing_zeros`` on a scalar).

    Examples
    --------
    >>> [trailing_zero_count(t) for t in (1, 2, 3, 4, 6, 12)]
    [0, 1, 0, 2, 1, 2]
    """
    return (t & -t).bit_length() - 1


def set_bits_high_to_low(x: int) -> list[int]:
    """Indices of the set bits of ``x``, most significant first.

    Examples
    --------
    >>> set_bits_high_to_low(13), set_bits_high_to_low(0)  # 13 = 8 + 4 + 1
    ([3, 2, 0], [])
    """
    return [j for j in range(int(x).bit_length() - 1, -1, -1) if (x >> j) & 1]


def max_popcount(n: int) -> int:
    """max popcount(t) over 1 <= t <= n, in O(log n).

    Below the top bit 2^k of n the best is 2^k - 1 (k ones); at or above it, the top
    bit plus the best over the remainder n - 2^k.

    Examples
    --------
    >>> [max_popcount(n) for n in (1, 2, 3, 6, 7, 8)]  # 3 = 0b11, 7 = 0b111
    [1, 1, 2, 2, 3, 3]
    >>> max_popcount(100) == max(bin(t).count("1") for t in range(1, 101))  # 63 = 0b111111
    True
    """
    if n < 1:
        return 0
    top = n.bit_length() - 1
    return max(top, 1 + max_popcount(n - (1 << top)))
