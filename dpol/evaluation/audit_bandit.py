"""Empirical DP audits of bandit learners: their played points, or their counter's releases.

A bandit's proof runs through its counter: given its data-free sphere directions u, the
releases s~ are DP, so the pair (u, s~) is and the played points inherit it.
:func:`audit_bandit` audits the played points (``release="points"``, what a user sees;
weak) or that pair (``"sums"``; stronger). Round p's loss enters batch b = p // K, whose
sum is in releases b, b + 1, ...; release r steers batch r + 2. A window W reads releases
b .. b + W - 1 or the points of batches b + 2 .. b + W + 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, as_vector, check_choice, check_int, fail
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.evaluation.audit import (
    AuditResult,
    _check_position,
    audit_releases,
    audited_rows,
)
from dpol.evaluation.audit_learners import _copies
from dpol.evaluation.audit_pairs import worst_case_bandit_losses

__all__ = [
    "BANDIT_RELEASES",
    "audit_bandit",
    "bandit_releases",
    "worst_case_bandit_losses",
]

#: what :func:`bandit_releases` records of one bandit run
BANDIT_RELEASES = ("points", "sums")


def _sphere_direction(learner: object, trace: object, t: int) -> np.ndarray:
    """u_t, read off the played point and its batch centre (undoing shrink mode's map)."""
    x = trace.points[t]
    if learner.mode == "shrink":  # x = c' + s (x~ + zeta u - c')
        x = learner.ball_center + (x - learner.ball_center) / learner.shrink
    u = (x - trace.iterates[t]) / learner.zeta
    return u / np.linalg.norm(u)


def _reflect(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Rows times the Householder reflection H = H^T that swaps the unit vector u and e_1."""
    v = u.copy()
    v[0] -= 1.0
    vv = float(v @ v)  # 2 (1 - u_1): zero only when u = e_1, where H = I
    if vv < 1e-24:
        return rows.copy()
    return rows - np.outer(rows @ v, (2.0 / vv) * v)


def bandit_releases(factory: Callable, losses: tuple, n_runs: int, *, position: int = 0,
                    release: str = "points", rows: slice | None = None, seed: object = None,
                    fresh: bool = False) -> np.ndarray:
    """``n_runs`` runs of ``factory(seed).run_linear(C, b)``, turned so that u_position = e_1.

    ``losses = (C, b)`` (``b`` may be None). ``release="sums"``: the counter's releases
    (``trace.noisy_sums``); ``"points"``: the played points minus the centre c. Each run's
    rows are reflected so that its own sphere direction u_position becomes e_1 (else the
    neighbours' mean difference averages out); the turn is post-processing of (u, s~), the
    pair the proof covers (of the points alone when ``position`` is in the first batch),
    and isotropic noise stays the counter's. Runs as in
    :func:`~dpol.evaluation.audit_learners.learner_releases` (``fresh``).

    Returns an array (n_runs, k * dim): the rows ``rows`` (a slice, default all) of the
    m - 1 releases (``"sums"``) or of the T points (``"points"``).

    Examples
    --------
    Without noise the turned sums are exactly the differing element, (n/zeta) B e_1:

    >>> from dpol.learners import BanditFrankWolfe
    >>> from dpol.sets import Box
    >>> make = lambda s: BanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=9, seed=s)
    >>> m = make(0)
    >>> (C, b), _ = worst_case_bandit_losses(m)
    >>> sums = bandit_releases(make, (C, b), 3, seed=0, release="sums")
    >>> sums.shape, bool(np.allclose(sums, np.tile([2 / m.zeta * m.loss_bound, 0.0], 2)))
    ((3, 4), True)
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    release = check_choice("release", release, BANDIT_RELEASES)
    if not isinstance(losses, tuple) or len(losses) != 2:
        raise fail("losses", "be a pair (C, offsets) of linear losses", losses)
    template, learners = _copies(factory, n_runs, seed, fresh)
    C = as_matrix("losses[0]", losses[0], template.dim)
    if len(C) != template.horizon:
        raise fail("losses[0]", f"have horizon={template.horizon} rows", C)
    b = None if losses[1] is None else as_vector("losses[1]", losses[1], len(C))
    position = _check_position(position, template.horizon)
    if release == "sums" and template.n_releases == 0:
        raise fail("factory", "build a bandit with at least two batches (the counter "
                   "releases nothing with one)", template)
    rows = slice(None) if rows is None else rows
    out = []
    for learner in learners:
        trace = learner.run_linear(C, b)
        u = _sphere_direction(learner, trace, position)
        seen = trace.noisy_sums if release == "sums" else trace.points - learner.center
        out.append(_reflect(seen[rows], u).ravel())
    return np.asarray(out)


def _bandit_rows(learner: object, claimed: PrivacyGuarantee, position: int,
                 release: str) -> slice:
    """The rows a claim covers (module docstring: release indexing)."""
    batch = position // learner.batch_size
    if release == "sums":
        return audited_rows(claimed, batch, learner.n_releases)
    if claimed.window is None:
        return slice(0, learner.horizon)
    K, T = learner.batch_size, learner.horizon
    start, stop = min(T, (batch + 2) * K), min(T, (batch + 2 + claimed.window) * K)
    if start == stop:
        raise fail("position", "lie in a batch whose sum steers some played point", position)
    return slice(start, stop)


def audit_bandit(factory: Callable, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                 losses: tuple | None = None, position: int = 0, release: str = "points",
                 seed: object = None, fresh: bool = False, **options) -> AuditResult:
    """Audit a bandit learner built by ``factory(seed)`` (ask/tell, with ``run_linear``).

    Parameters
    ----------
    factory : callable
        ``factory(seed) -> bandit learner`` such as
        :class:`~dpol.learners.PrivateBanditFrankWolfe`, fresh, at its horizon.
    n_runs : int
        Runs per loss sequence (half fit the statistic, half are held out; see
        :func:`~dpol.evaluation.audit.expected_gaussian_audit` to choose it).
    claimed : PrivacyGuarantee, optional
        The guarantee to test (default the learner's ``privacy``). Under a window claim
        only the rows it covers are read (module docstring).
    losses : ((C_a, b_a), (C_b, b_b)), optional
        Neighbouring linear loss sequences; default :func:`worst_case_bandit_losses` at
        ``position`` (default 0: in the first batch, which every release holds).
    release : {"points", "sums"}
        What is audited (:func:`bandit_releases`): the played points (default; what a
        user sees, a weak audit: Frank-Wolfe and exploration hide the sums) or the
        counter's releases, which the proof protects (stronger).
    seed, fresh, **options
        ``seed`` of the runs; ``fresh`` as
        :func:`~dpol.evaluation.audit_learners.learner_releases`; ``statistic``,
        ``confidence``, ``train_fraction`` go to :func:`~dpol.evaluation.audit.audit_releases`.

    Examples
    --------
    >>> from dpol.learners import PrivateBanditFrankWolfe
    >>> from dpol.sets import Box
    >>> make = lambda s: PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=9,
    ...                                          epsilon=1.0, delta=1e-2, seed=s)
    >>> print(audit_bandit(make, n_runs=400, seed=0, release="sums").summary())
    ... # doctest: +ELLIPSIS
    DP audit of PrivateBanditFrankWolfe (sums): epsilon >= ... at delta=0.01 with 95% ...
      PASSED: no violation found (an audit cannot prove privacy)
    """
    template = factory(0)
    claimed = template.privacy if claimed is None else claimed
    position = _check_position(position, template.horizon)
    release = check_choice("release", release, BANDIT_RELEASES)
    if losses is None:
        losses = worst_case_bandit_losses(template, position=position)
    if not isinstance(losses, tuple) or len(losses) != 2:
        raise fail("losses", "be a pair ((C_a, b_a), (C_b, b_b)) of loss sequences", losses)
    if release == "sums" and template.n_releases == 0:
        raise fail("factory", "build a bandit with at least two batches (the counter "
                   "releases nothing with one)", template)
    rows = _bandit_rows(template, claimed, position, release)
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = (bandit_releases(factory, pair, n_runs, position=position, release=release,
                            rows=rows, seed=q, fresh=fresh)
            for pair, q in zip(losses, (seed_a, seed_b), strict=True))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=f"{type(template).__name__} ({release})", **options)
