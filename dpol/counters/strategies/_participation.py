"""Multiple participations: the sensitivity of a factorisation to one participant (L2).

A participant enters at most k steps, any two at least b apart (Kairouz et al. 2021's
epochs; Choquette-Choo et al. 2023's b-min-separation). The squared l2 sensitivity is at
most Delta^2 max_pi sum_{i, j in pi} |X_ij|, X = C^T C, exactly that when X >= 0. This
module computes the maximum over patterns pi, exactly where the structure allows, else a
bound (``brute_force_sensitivity_sq`` checks tiny streams).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_int, fail

__all__ = [
    "SINGLE",
    "Participation",
    "brute_force_sensitivity_sq",
    "gram_sensitivity_sq",
    "max_pattern_sum",
    "parse_participation",
    "toeplitz_envelope_sensitivity_sq",
    "toeplitz_sensitivity_sq",
    "tree_sensitivity_sq",
]


@dataclass(frozen=True)
class Participation:
    """Each participant enters at most ``max_participations`` steps, ``min_separation`` apart.

    Parameters
    ----------
    max_participations : int
        k >= 1 (1: every element of the stream is its own participant).
    min_separation : int
        b >= 1: any two steps of one participant differ by at least b (epochs over n
        records in a fixed order: k = epochs, b = n).

    Examples
    --------
    >>> p = Participation(3, 100)
    >>> p.within(250), p.unit, Participation().single
    (3, 'one participant (<= 3 steps, >= 100 apart)', True)
    """

    max_participations: int = 1
    min_separation: int = 1

    def __post_init__(self) -> None:
        check_int("max_participations", self.max_participations, low=1)
        check_int("min_separation", self.min_separation, low=1)

    @property
    def single(self) -> bool:
        """Whether each participant enters once (the papers' setting)."""
        return self.max_participations == 1

    def within(self, horizon: int) -> int:
        """How many steps of one participant fit in ``horizon`` steps."""
        return min(self.max_participations, 1 + (horizon - 1) // self.min_separation)

    @property
    def unit(self) -> str:
        """The unit a guarantee protects (``PrivacyGuarantee.unit``)."""
        if self.single:
            return "one stream element"
        return (f"one participant (<= {self.max_participations} steps, >= "
                f"{self.min_separation} apart)")


#: one participation per element: the papers' setting and every counter's default
SINGLE = Participation()


def parse_participation(value: object) -> Participation:
    """A :class:`Participation` from ``"single"``, None, a ``(k, b)`` pair or itself.

    Examples
    --------
    >>> parse_participation((2, 10)), parse_participation("single") == SINGLE
    (Participation(max_participations=2, min_separation=10), True)
    """
    if value is None or (isinstance(value, str) and value == "single"):
        return SINGLE
    if isinstance(value, Participation):
        return value
    if isinstance(value, tuple | list) and len(value) == 2:
        k = check_int("participation[0] (max_participations)", value[0], low=1)
        return Participation(k, check_int("participation[1] (min_separation)", value[1], low=1))
    raise fail("participation", "be 'single', a Participation or a pair (max_participations, "
               "min_separation)", value)


def toeplitz_sensitivity_sq(coefficients: np.ndarray, horizon: int,
                            participation: Participation) -> float | None:
    """max_pi ||sum_{i in pi} C e_i||^2 for lower-triangular Toeplitz C, or None.

    With the first column c non-negative and non-increasing, X_ij = sum_{m <= T-1-j}
    c_{m + j - i} c_m (i <= j) shrinks as j - i grows and as both move later. A pattern
    p_0 < ... < p_{k-1} has p_j - p_i >= (j - i) b and p_j >= j b, so each X_{p_i p_j} <=
    X_{ib, jb}, and X >= 0 makes k steps the worst: the pattern 0, b, 2b, ... attains the
    maximum (the argument of Kalinin and Lampert 2024, Theorem 2, for any such C).
    Returns None when c is not non-negative and non-increasing.
    """
    c = np.asarray(coefficients, dtype=np.float64)[:horizon]
    if np.any(c < 0.0) or np.any(np.diff(c) > 0.0):
        return None
    return _pattern_sum_sq(c, horizon, participation)


def toeplitz_envelope_sensitivity_sq(coefficients: np.ndarray, horizon: int,
                                     participation: Participation) -> float:
    """An upper bound on max_pi ||sum_{i in pi} C e_i||^2 for any lower-triangular
    Toeplitz C: exact when c is non-negative and non-increasing.

    The envelope e_m = max_{m' >= m} |c_m'| bounds |c| and is non-increasing, so its Gram
    entries bound |X_ij| and :func:`toeplitz_sensitivity_sq` maximises them.

    Examples
    --------
    >>> c = np.array([1.0, 0.5, 0.6])  # grows at m = 2: the envelope 1, 0.6, 0.6 (truth 4.06)
    >>> toeplitz_sensitivity_sq(c, 4, Participation(2, 2))
    >>> round(toeplitz_envelope_sensitivity_sq(c, 4, Participation(2, 2)), 6)
    4.28
    """
    c = np.abs(np.asarray(coefficients, dtype=np.float64)[:horizon])
    return _pattern_sum_sq(np.maximum.accumulate(c[::-1])[::-1], horizon, participation)


def _pattern_sum_sq(c: np.ndarray, horizon: int, participation: Participation) -> float:
    """||sum_{j < k} C e_{jb}||^2 for the first column c (the pattern 0, b, 2b, ...)."""
    full = np.zeros(horizon)
    full[: c.size] = c
    total = np.zeros(horizon)
    b = participation.min_separation
    for j in range(participation.within(horizon)):
        total[j * b:] += full[: horizon - j * b]
    return float(total @ total)


def tree_sensitivity_sq(horizon: int, participation: Participation, *,
                        complete: bool = True) -> float:
    """An upper bound on max_pi ||C 1_pi||^2 for a tree of dyadic nodes.

    ||C 1_pi||^2 sums (steps of pi in a node)^2 over nodes; at level l a node holds at most
    ceil(2^l / b) steps, so a level contributes at most q cap^2 + r^2 (q full nodes, r the
    rest) over its N_l nodes (``complete``: every dyadic node, Honaker; else the binary
    counter's). Exact for the complete tree when b is a power of two; up to 20% above
    the maximum for the binary counter (brute-forced tiny trees).

    Examples
    --------
    >>> tree_sensitivity_sq(8, Participation(2, 4)), tree_sensitivity_sq(8, SINGLE)
    (10.0, 4.0)
    """
    k = participation.within(horizon)
    b = participation.min_separation
    total = 0
    for level in range(horizon.bit_length()):
        size = 1 << level
        cap = -(-size // b)
        nodes = (horizon >> level) - (0 if complete else horizon >> (level + 1))
        full = min(k // cap, nodes)
        rest = min(k - full * cap, cap) if full < nodes else 0
        total += full * cap * cap + rest * rest
    return float(total)


def max_pattern_sum(values: np.ndarray, participation: Participation) -> np.ndarray:
    """max over patterns pi of sum_{i in pi} v_i, for non-negative v along the last axis.

    A dynamic programme over the steps: best_m[i], the largest sum of m steps b apart
    ending at i, is best_{m-1} up to i - b (a running maximum) plus v_i; O(k T) per row.

    Examples
    --------
    >>> float(max_pattern_sum(np.array([3.0, 5.0, 1.0, 4.0]), Participation(2, 2)))
    9.0
    """
    v = np.asarray(values, dtype=np.float64)
    b = participation.min_separation
    best = v.copy()
    overall = best.max(axis=-1)
    for _ in range(1, participation.within(v.shape[-1])):
        reach = np.maximum.accumulate(best, axis=-1)  # best sum ending at or before i
        best = np.full(v.shape, -np.inf)
        best[..., b:] = reach[..., :-b] + v[..., b:]
        overall = np.maximum(overall, best.max(axis=-1))
    return overall


def gram_sensitivity_sq(gram: np.ndarray, participation: Participation) -> float:
    """An upper bound on max_pi sum_{i, j in pi} |X_ij| for any Gram matrix X = C^T C.

    The smaller of two bounds that enlarge the set of patterns: (a) each i in pi brings
    |X_ii| plus the k - 1 largest |X_ij| over j at least b away; (b) each row brings its
    largest sum over any pattern (Choquette-Choo et al. 2023, "(Amplified) banded matrix
    factorization", Algorithm 4). Either is then summed over the worst pattern by
    :func:`max_pattern_sum`. Exact for one participation (the largest column norm).

    Examples
    --------
    >>> gram_sensitivity_sq(np.eye(4), Participation(2, 2))
    2.0
    """
    x = np.abs(np.asarray(gram, dtype=np.float64))
    horizon = x.shape[0]
    k, b = participation.within(horizon), participation.min_separation
    if k == 1:
        return float(np.max(np.diag(x)))
    idx = np.arange(horizon)
    far = np.where(np.abs(idx[:, None] - idx[None, :]) >= b, x, 0.0)
    own = np.diag(x) + (-np.sort(-far, axis=1)[:, : k - 1]).sum(axis=1)
    rows = max_pattern_sum(x, participation)
    return float(min(max_pattern_sum(own, participation), max_pattern_sum(rows, participation)))


def brute_force_sensitivity_sq(encoder: np.ndarray, participation: Participation) -> float:
    """max_pi sum_{i, j in pi} |X_ij| by enumerating every pattern (tiny T: tests, audits).

    Examples
    --------
    >>> brute_force_sensitivity_sq(np.tril(np.ones((4, 4))), Participation(2, 2))
    10.0
    """
    x = np.abs(encoder.T @ encoder)
    horizon = x.shape[0]
    best = 0.0
    for size in range(1, participation.within(horizon) + 1):
        for pattern in itertools.combinations(range(horizon), size):
            if size > 1 and min(np.diff(pattern)) < participation.min_separation:
                continue
            best = max(best, float(x[np.ix_(pattern, pattern)].sum()))
    return best
