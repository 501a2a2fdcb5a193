"""The running sum of a block of rows, in place, with the additions of the ``add`` loop."""

from __future__ import annotations

import numpy as np

__all__ = ["running_sum_rows"]


def running_sum_rows(rows: np.ndarray) -> np.ndarray:
    """``np.cumsum(rows, axis=0)`` in place, with the same additions (row i += row i-1).

    numpy accumulates along axis 0 column by column, striding through memory; from 128
    columns on a loop over rows is faster (measured, one core: 4096 x 1024 55 ms against
    6 ms, 517 x 8100 15 ms against 3 ms; 2^18 x 64 110 ms against 161 ms).

    Examples
    --------
    >>> rows = np.arange(6.0).reshape(3, 2)
    >>> running_sum_rows(rows) is rows, rows.tolist()
    (True, [[0.0, 1.0], [2.0, 4.0], [6.0, 9.0]])
    >>> wide = np.random.default_rng(0).normal(size=(5, 128))  # the row loop: same floats
    >>> bool(np.array_equal(running_sum_rows(wide.copy()), np.cumsum(wide, axis=0)))
    True
    """
    if rows.shape[1] < 128:
        return np.cumsum(rows, axis=0, out=rows)
    for i in range(1, rows.shape[0]):
        rows[i] += rows[i - 1]
    return rows
