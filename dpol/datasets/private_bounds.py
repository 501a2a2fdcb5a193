"""Bounds estimated privately from the data: a private quantile of the row norms and labels.

A learner's guarantee needs public bounds ``||x|| <= R_x`` and ``|y| <= R_y`` (rows
beyond them are clipped). When none is known, :func:`private_bounds` releases the
``quantile`` of the row l2 norms and of ``|y|`` with OpenDP's private quantile, over a
public grid of candidates, at a declared epsilon; its :meth:`PrivateBounds.privacy_events`
compose with the learner's into one guarantee
(:func:`dpol.accounting.events.compose_guarantee`).

Needs the ``opendp`` extra; :func:`private_bounds` enables OpenDP's ``"contrib"`` feature
itself (its mechanisms are not yet vetted by OpenDP's own review).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_real, fail
from dpol.accounting.events import MechanismEvent
from dpol.clipping import clip_norms
from dpol.noise._dp_accounting import dp_accounting

__all__ = ["GRID", "PrivateBounds", "above_grid", "parse_bound", "private_bounds",
           "pure_events", "release_quantile"]

#: the public candidate grid: 20 points per decade from 1e-3 to 1e6 (181 values, ratio
#: 10**(1/20) ~ 1.122 between neighbours); the released bound is one of them
GRID = tuple(float(v) for v in np.geomspace(1e-3, 1e6, 181))
#: a neighbour under replace-one is at symmetric distance 2 (one row out, one row in)
REPLACE_ONE_DISTANCE = 2


@dataclass(frozen=True)
class PrivateBounds:
    """Bounds released by :func:`private_bounds` and the mechanisms that released them.

    Attributes
    ----------
    x_bound, y_bound : float or None
        The released quantile of the row norms, of ``|y|`` (None: not estimated).
    epsilons : tuple of float
        Each release's pure epsilon (OpenDP's privacy map), in the order x, y.
    quantile : float
        The quantile level estimated.
    n, n_candidates : int
        Rows read; candidates offered.
    """

    x_bound: float | None
    y_bound: float | None
    epsilons: tuple[float, ...]
    quantile: float
    n: int
    n_candidates: int

    @property
    def epsilon(self) -> float:
        """The total epsilon of the releases (basic composition)."""
        return float(sum(self.epsilons))

    def min_rows(self, beta: float = 0.05) -> int:
        """Rows below which a release may land above the data with probability ``beta``.

        A candidate above every value scores ``(1 - a) n`` (a the quantile), one near the
        quantile about 0. OpenDP reports the noisy max with exponential noise of scale
        ``2 / epsilon_i``, under which a candidate worse by g beats the best with
        probability ``exp(-epsilon_i g / 2) / 2``; the ``K`` candidates above the data
        then win with probability at most ``beta`` once
        ``n >= 2 ln(K / beta) / (epsilon_i (1 - a))``.
        """
        return math.ceil(2.0 * math.log(self.n_candidates / beta)
                         / (min(self.epsilons) * (1.0 - self.quantile)))

    def note(self) -> str | None:
        """A warning when ``n < min_rows()``: the estimate is then mostly noise."""
        if self.n >= self.min_rows():
            return None
        return (f"the private bounds are unreliable at this size: {self.n} rows, epsilon "
                f"{min(self.epsilons):g} per bound and quantile {self.quantile:g} need at "
                f"least {self.min_rows()} rows (else the estimate can land far above the "
                "data); declare the bounds or give them a larger share of the budget")

    def privacy_events(self) -> tuple[MechanismEvent, ...]:
        """One pure-DP event per release (replace-one, unit: one stream element)."""
        return pure_events(self.epsilons, "private quantile")


def pure_events(epsilons: tuple[float, ...], name: str) -> tuple[MechanismEvent, ...]:
    """One pure-DP replace-one event per private-quantile release of ``epsilons``."""
    return tuple(MechanismEvent(dp_accounting.UnsupportedDpEvent(), "replace_one",
                                pure_epsilon=e, name=name) for e in epsilons)


def above_grid(values: np.ndarray, candidates) -> np.ndarray:
    """``values`` with those above every candidate (inf included: a huge finite row's norm)
    set to twice the largest: the quantile's scores count values on either side of each
    candidate, so the release's law is unchanged, and OpenDP gets finite numbers.

    >>> above_grid(np.array([0.5, np.inf]), [1.0, 2.0]).tolist()
    [0.5, 4.0]
    """
    return np.minimum(values, 2.0 * max(candidates))


def parse_bound(name: str, value: object) -> float | str:
    """``"auto"`` or a declared bound > 0 (from a number or its text).

    Examples
    --------
    >>> parse_bound("x_bound", "2.5"), parse_bound("x_bound", "auto")
    (2.5, 'auto')
    >>> parse_bound("y_bound", "big")
    Traceback (most recent call last):
    dpol.errors.InvalidInputError: y_bound must be a number > 0 or 'auto'; got 'big'
    """
    if value == "auto":
        return "auto"
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise fail(name, "be a number > 0 or 'auto'", value) from None
    return check_real(name, value, low=0.0, low_open=True)


def release_quantile(values: np.ndarray, epsilon: float, quantile: float,
             candidates: list[float]) -> tuple[float, float]:
    """(released candidate, its epsilon) of OpenDP's private ``quantile`` of ``values``
    at ``epsilon`` over the public ``candidates`` (replace-one; see :func:`private_bounds`)."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise ImportError("private bounds need the 'opendp' extra: pip install "
                          "'dpol[opendp]'", name=exc.name) from None
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=len(values))

    def make(scale: float):
        return dp.m.make_private_quantile(domain, dp.symmetric_distance(),
                                          dp.max_divergence(), candidates=candidates,
                                          alpha=quantile, scale=scale)

    # epsilon is proportional to 1 / scale: calibrate from the map at scale 1, then
    # state the map of the mechanism that ran
    scale = make(1.0).map(REPLACE_ONE_DISTANCE) / epsilon
    mechanism = make(scale)
    spent = float(mechanism.map(REPLACE_ONE_DISTANCE))
    if spent > epsilon * (1.0 + 1e-12):  # pragma: no cover - OpenDP's map is linear
        scale *= spent / epsilon
        mechanism = make(scale)
        spent = float(mechanism.map(REPLACE_ONE_DISTANCE))
    return float(mechanism([float(v) for v in values])), spent


def private_bounds(X: object = None, y: object = None, *, epsilon: float,
                   quantile: float = 0.95, candidates: object = GRID) -> PrivateBounds:
    """Release the ``quantile`` of the row l2 norms of ``X`` and of ``|y|`` privately.

    Parameters
    ----------
    X : array of shape (n, d), optional
        Rows whose norm bound is wanted (None: not estimated).
    y : array of shape (n,), optional
        Labels whose bound ``|y|`` is wanted (None: not estimated); with X, the same n.
    epsilon : float
        Total epsilon of the estimate, split equally between the releases.
    quantile : float in (0, 1)
        Level of the quantile (about ``1 - quantile`` of the rows are clipped to it).
    candidates : sequence of float
        Public, positive, finite candidate bounds (default :data:`GRID`); the release is
        one of them.

    Returns
    -------
    PrivateBounds

    Notes
    -----
    OpenDP's noise comes from OS randomness (no seed). Few rows or a small budget can
    release a candidate above all the data: :meth:`PrivateBounds.min_rows` says how many
    rows a reliable estimate needs (utility bound: docs/derivations/private_bounds.md).

    Privacy
    -------
    Replace-one (n public). Each release is OpenDP's ``make_private_quantile``: Smith
    2011's quantile score, selected by permute-and-flip (McKenna, Sheldon 2020), pure
    epsilon-DP at the exponential mechanism's epsilon, on the sized domain of n values.
    Sensitivity of the score: 1 under one replacement (one value crosses c at most).
    Calibration: the scale that OpenDP's privacy map sends to ``epsilon / k`` for k
    releases, composed by basic composition (Dwork, Roth, Theorem 3.16) to ``epsilon``.
    Derivation: docs/derivations/private_bounds.md.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(10_000, 4))
    >>> b = private_bounds(X, None, epsilon=1.0)
    >>> 2.5 < b.x_bound < 5.0, b.y_bound, b.epsilon
    (True, None, 1.0)
    """
    epsilon = check_real("epsilon", epsilon, low=0.0, low_open=True)
    quantile = check_real("quantile", quantile, low=0.0, high=1.0, low_open=True,
                          high_open=True)
    grid = _checked_candidates(candidates)
    columns = _bounded_columns(X, y)
    share = epsilon / len(columns)
    released = [release_quantile(above_grid(v, grid), share, quantile, grid) for v in columns]
    bounds = [r[0] for r in released]
    return PrivateBounds(bounds[0] if X is not None else None,
                         bounds[-1] if y is not None else None,
                         tuple(r[1] for r in released), quantile, len(columns[0]), len(grid))


def _checked_candidates(candidates: object) -> list[float]:
    """The public candidates, sorted and without repeats: at least 2, finite, > 0.

    >>> _checked_candidates([2, 1, 2.0])
    [1.0, 2.0]
    """
    try:
        grid = np.asarray(candidates, dtype=float)
    except (TypeError, ValueError):
        raise fail("candidates", "be a sequence of numbers", candidates) from None
    if grid.ndim != 1 or grid.size < 2 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise fail("candidates", "be at least 2 finite numbers > 0", candidates)
    return sorted(set(grid.tolist()))


def _bounded_columns(X: object, y: object) -> list[np.ndarray]:
    """The values whose quantiles bound the data: the row l2 norms of ``X`` (a huge
    finite row's is inf, as the learner's clip computes it), then ``|y|``; checked.

    >>> _bounded_columns(np.array([[3.0, 4.0]]), np.array([-2.0]))
    [array([5.]), array([2.])]
    """
    columns = []
    if X is not None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] == 0:
            raise fail("X", "be a non-empty 2-d array", X)
        if not np.all(np.isfinite(X)):
            raise fail("X", "be finite", X)
        columns.append(clip_norms(X))
    if y is not None:
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or y.size == 0:
            raise fail("y", "be a non-empty 1-d array", y)
        if X is not None and len(y) != len(X):
            raise fail("y", f"have the {len(X)} rows of X", y)
        columns.append(np.abs(y))
    if not columns:
        raise fail("X", "be given, or y (nothing to estimate)", None)
    if y is not None and not np.all(np.isfinite(y)):
        raise fail("y", "be finite", y)
    return columns
