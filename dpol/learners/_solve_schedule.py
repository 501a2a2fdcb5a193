"""PQFTL's public solve schedule: the steps at which the released w is recomputed.

Kept apart from :mod:`dpol.learners.private_quadratic_ftl` (the algorithm): a schedule is
a function of public numbers only (the step t, B and the horizon), so which steps are
solved says nothing about the data, and the release at a skipped step (the last solved
w) is post-processing of the counters' releases up to that step.
"""

from __future__ import annotations

import numpy as np

from dpol._validation import check_int
from dpol.learners._psd_solve import _CHUNK, _Helper, _PsdSolver, _shared_empty

__all__ = ["check_solves_per_doubling", "fill_skipped", "release_arrays", "solve_chunks",
           "solved_steps"]


def check_solves_per_doubling(value: object) -> int | None:
    """``solves_per_doubling``: None (every step) or an int B >= 1."""
    return None if value is None else check_int("solves_per_doubling", value, low=1)


def solved_steps(steps: np.ndarray | int, per_doubling: int | None, horizon: int
                 ) -> np.ndarray:
    """Which of ``steps`` (1-based ints, or one int) are solved: a bool array.

    Every step while t < 2B; for t in [2^k B, 2^(k+1) B), k >= 1, the multiples of 2^k
    (B of them per doubling of t: ~B (1 + log2(T / B)) solves in all); and the horizon,
    so that a whole stream's final model is current. The stride 2^k is the largest power
    of two <= t // B, found exactly in integers (frexp of an integer < 2^53).

    >>> solved_steps(np.arange(1, 17), 2, 16).nonzero()[0] + 1
    array([ 1,  2,  3,  4,  6,  8, 12, 16])
    >>> bool(solved_steps(np.array([13]), 2, 13)[0]), solved_steps(np.array([5]), None, 9)
    (True, array([ True]))
    """
    steps = np.asarray(steps, dtype=np.int64)
    if per_doubling is None:
        return np.ones(steps.shape, dtype=bool)
    doublings = np.frexp((steps // per_doubling).astype(np.float64))[1] - 1  # -1 where t < B
    stride = np.left_shift(1, np.maximum(doublings, 0))
    return (steps % stride == 0) | (steps == horizon)


def release_arrays(n: int, d: int | tuple[int, ...], rows: np.ndarray, shared: bool
                   ) -> tuple[np.ndarray, np.ndarray, bool]:
    """(weights, solved, shared) for a run of n rows whose ``rows`` are solved: weights
    (n + 1, d), w before each row then the final one (d: a release's shape, (d, K) for
    PQFTL's ``outputs``); ``solved`` where the solves land (row i: w after row
    rows[i]), weights[1:] itself when every row is (no second (n, d) array). ``shared``:
    ``solved`` in memory shared with a helper process, which writes there; False back
    if none could be had (one core it is)."""
    every, d = len(rows) == n, tuple(np.atleast_1d(d))
    shape, out = (n + 1, *d) if every else (len(rows), *d), None
    if shared:
        try:
            out = _shared_empty(shape)
        except OSError:
            shared = False
    if out is None:
        out = np.empty(shape)
    weights = out if every else np.empty((n + 1, *d))
    return weights, weights[1:] if every else out, shared


def fill_skipped(after: np.ndarray, solved: np.ndarray, rows: np.ndarray,
                 before: np.ndarray) -> None:
    """Release at every row of ``after`` the last solved w at or before it, in place:
    ``solved[i]`` is the w of row ``rows[i]`` (ascending), ``before`` the w released
    before the first row (rows ahead of the first solved one keep it)."""
    # runs of equal rows, copied whole: a search and gather per row took ~0.1 us a row
    # of PQFTL's chunked run at d = 11 (the same values, copied)
    first = rows[0] if len(rows) else len(after)
    after[:first] = before
    if len(rows):
        after[first:] = np.repeat(solved[:len(rows)], np.diff(rows, append=len(after)), axis=0)


def solve_chunks(solver: _PsdSolver, helper: _Helper | None, V: np.ndarray, scale: np.ndarray,
                 U: np.ndarray, ridge: np.ndarray, radius: float, out: np.ndarray,
                 first: int) -> None:
    """``solve_released`` of the rows of V, U into ``out[first:]``, ``_CHUNK`` rows at a
    time, each handed to ``helper`` when it has a slot free (V is overwritten)."""
    for c in range(0, len(U), _CHUNK):
        part = slice(c, c + _CHUNK)
        if helper is None or not helper.submit(V[part], U[part], ridge[part], first + c):
            solver.solve_released(V[part], scale, U[part], ridge[part], radius,
                                  out[first + c:first + c + len(U[part])], V[part])
