"""Empirical DP audits of learners: full-information learners and bandits (layer L5).

The runs behind :func:`audit_learner` and :func:`audit_bandit`: many independent runs of a
learner on two neighbouring streams, whose releases
:func:`~dpol.evaluation.audit.audit_releases` turns into an epsilon lower bound. The
statistics live in :mod:`dpol.evaluation.audit`, which re-exports the functions here.

Bandits (:class:`~dpol.learners.PrivateBanditFrankWolfe`) see one loss function per round
and only its value at the played point. Their privacy proof (the learner's Privacy section)
runs through the counter: given the learner's own sphere directions u_t (free of data), the
batch sums of neighbouring loss sequences differ in one batch, by (n/zeta)(F - F') u_t0, and
the counter's releases s~_R are (epsilon, delta)-DP for that sensitivity; so the pair
(u, s~) is, and the played points, a function of it, are too. :func:`audit_bandit` audits
either that pair (``release="sums"``, the default: the statement the proof establishes and
the played points inherit, so the stronger test) or the played points themselves
(``release="points"``, the stated claim; weak, since Frank-Wolfe and the exploration noise
blur what the points show of the sums).
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable, Iterator

import numpy as np

from dpol._validation import as_matrix, as_vector, check_choice, check_int, fail, spawn_seeds
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.evaluation.audit import (
    AuditResult,
    _check_position,
    _protected_rows,
    audit_releases,
)

__all__ = [
    "BANDIT_RELEASES",
    "audit_bandit",
    "audit_learner",
    "bandit_releases",
    "learner_releases",
    "worst_case_bandit_losses",
    "worst_case_learner_streams",
]

#: what :func:`bandit_releases` records of one bandit run
BANDIT_RELEASES = ("sums", "points")


# ---------------------------------------------------------------------------- runs
def _generators(obj: object) -> list[np.random.Generator]:
    """Every np.random.Generator reachable from ``obj`` (attributes, dicts, sequences)."""
    found, seen, todo = [], set(), [obj]
    while todo:
        item = todo.pop()
        if id(item) in seen or isinstance(item, (str, bytes, int, float, np.ndarray, type,
                                                 types.ModuleType)):
            continue
        seen.add(id(item))
        if isinstance(item, np.random.Generator):
            found.append(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set)):
            todo.extend(item)
        elif isinstance(getattr(item, "__dict__", None), dict):
            todo.extend(item.__dict__.values())
    return found


def _copies(factory: Callable, n_runs: int, seed: object,
            fresh: bool) -> tuple[object, Iterator]:
    """A template and an iterator over ``n_runs`` independent learners (see learner_releases)."""
    rng = np.random.default_rng(spawn_seeds(seed, 1)[0])
    template = factory(int(rng.integers(2**63)))
    fresh = fresh or not _generators(template)

    def learners() -> Iterator:
        for _ in range(n_runs):
            if fresh:
                yield factory(int(rng.integers(2**63)))
            else:
                learner = copy.deepcopy(template)
                for gen in _generators(learner):
                    gen.bit_generator.state = type(gen.bit_generator)(
                        rng.integers(2**63)).state
                yield learner

    return template, learners()


# ---------------------------------------------------------------------------- learners
def worst_case_learner_streams(learner: object, *, position: int = 0) -> tuple[tuple, tuple]:
    """Neighbouring streams ``((X_a, y_a), (X_b, y_b))`` for a full-information learner.

    Row ``position`` is ``x = x_bound e_1`` with label ``+y_bound`` against ``-y_bound``
    (replace-one: for a linear model at w = 0 the gradient flips sign, a change of twice
    its norm) or against the null element ``(0, 0)`` (add/remove); every other row is
    ``(0, y_bound)``, identical in both streams.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> m = PrivateQuadraticFTL(2, horizon=3, epsilon=1.0, delta=1e-5, seed=0)
    >>> (Xa, ya), (Xb, yb) = worst_case_learner_streams(m)
    >>> Xa[0], ya, yb
    (array([1., 0.]), array([1., 1., 1.]), array([-1.,  1.,  1.]))
    """
    position = _check_position(position, learner.horizon)
    X, y = np.zeros((learner.horizon, learner.dim)), np.full(learner.horizon, learner.y_bound)
    X[position, 0] = learner.x_bound
    Xb, yb = X.copy(), y.copy()
    if learner.neighbouring == "replace_one":
        yb[position] = -y[position]
    else:
        Xb[position], yb[position] = 0.0, 0.0
    return (X, y), (Xb, yb)


def learner_releases(factory: Callable, X: object, y: object, n_runs: int, *,
                     rows: int | None = None, seed: object = None,
                     fresh: bool = False) -> np.ndarray:
    """``n_runs`` independent runs of ``factory(seed)`` on (X, y); iterates flattened.

    The release of one run is ``trace.weights`` followed by ``trace.final_weights``
    (T + 1 iterates; ``rows`` keeps the first ones). ``fresh=True`` calls the factory for
    every run. By default it is called once and every run is a deep copy whose
    ``np.random.Generator`` objects all get fresh independent states (much faster when
    the constructor calibrates noise); randomness drawn at construction (random
    features, projections) is then shared by all runs, i.e. the audit holds it fixed, as
    a guarantee valid for every such draw allows. Without any Generator to reseed, the
    factory is called for every run. Generators are searched in attributes, dicts, lists,
    tuples and sets; a learner keeping randomness elsewhere needs ``fresh=True``.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> make = lambda s: PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, seed=s)
    >>> learner_releases(make, np.eye(4, 2), np.ones(4), 50, seed=0).shape  # 5 iterates of 2
    (50, 10)
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    out = []
    for learner in _copies(factory, n_runs, seed, fresh)[1]:
        trace = learner.run(X, y)
        released = np.vstack([trace.weights, trace.final_weights[None, :]])
        out.append(released[:rows].ravel())
    return np.asarray(out)


def audit_learner(factory: Callable, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                  streams: tuple | None = None, position: int = 0, seed: object = None,
                  fresh: bool = False, **options) -> AuditResult:
    """Audit a full-information learner built by ``factory(seed)``.

    Parameters
    ----------
    factory : callable
        ``factory(seed) -> OnlineLearner``, a fresh learner at its horizon.
    n_runs, claimed, position, seed, **options
        As :func:`~dpol.evaluation.audit.audit_counter` (``claimed`` defaults to the
        learner's ``privacy``).
    streams : ((X_a, y_a), (X_b, y_b)), optional
        Default :func:`worst_case_learner_streams`.
    fresh : bool
        See :func:`learner_releases`.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> make = lambda s: PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, seed=s)
    >>> print(audit_learner(make, n_runs=400, seed=0).summary())  # doctest: +ELLIPSIS
    DP audit of PrivateQuadraticFTL: epsilon >= 0 at delta=1e-05 with 95% confidence ...
      PASSED: no violation found (an audit cannot prove privacy)
    """
    template = factory(0)
    claimed = template.privacy if claimed is None else claimed
    position = _check_position(position, template.horizon)
    if streams is None:
        streams = worst_case_learner_streams(template, position=position)
    rows = _protected_rows(claimed, position + 1, template.horizon + 1)
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = (learner_releases(factory, X, yv, n_runs, rows=rows, seed=q, fresh=fresh)
            for (X, yv), q in zip(streams, (seed_a, seed_b), strict=True))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=type(template).__name__, **options)


# ---------------------------------------------------------------------------- bandits
def worst_case_bandit_losses(learner: object, *, position: int = 0) -> tuple[tuple, tuple]:
    """Neighbouring linear loss sequences ``((C_a, b_a), (C_b, b_b))`` for a bandit learner.

    For :meth:`run_linear`: f_t(x) = <C[t], x> + b[t]. Every loss is zero except at round
    ``position``: the constant ``+B`` against ``-B`` (replace-one) or against zero
    (add/remove), B = ``learner.loss_bound``. Constant losses are 0-Lipschitz and bounded by
    B, so they are never clipped, and the batch sums then differ by exactly
    (n/zeta)(B - (-B)) u_position, whatever the direction: the ``element_sensitivity``
    2 (n/zeta) B the learner's counter is calibrated for (half under add/remove).

    Examples
    --------
    >>> from dpol.learners import BanditFrankWolfe
    >>> from dpol.sets import Box
    >>> m = BanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=5, loss_bound=2.0, seed=0)
    >>> (Ca, ba), (Cb, bb) = worst_case_bandit_losses(m, position=1)
    >>> Ca.shape, ba, bb, bool(np.all(Ca == Cb) and not Ca.any())
    ((5, 2), array([0., 2., 0., 0., 0.]), array([ 0., -2.,  0.,  0.,  0.]), True)
    """
    position = _check_position(position, learner.horizon)
    C = np.zeros((learner.horizon, learner.dim))
    b_a, b_b = np.zeros(learner.horizon), np.zeros(learner.horizon)
    b_a[position] = learner.loss_bound
    b_b[position] = -learner.loss_bound if learner.neighbouring == "replace_one" else 0.0
    return (C, b_a), (C.copy(), b_b)


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
                    release: str = "sums", seed: object = None,
                    fresh: bool = False) -> np.ndarray:
    """``n_runs`` runs of ``factory(seed).run_linear(C, b)``, turned so that u_position = e_1.

    ``losses = (C, b)`` (``b`` may be None). ``release="sums"``: the counter's releases
    s~_1 .. s~_(m-1) (``trace.noisy_sums``); ``"points"``: the played points minus the
    learner's centre c. Each run's rows are multiplied by the reflection that maps its own
    sphere direction u_position to e_1: one loss changes the batch sums along that random
    direction, so without the turn the mean difference between neighbours averages out
    and a linear statistic sees nothing. The turn is invertible given u_position, i.e. a
    post-processing of (u, s~), the pair the privacy proof covers; for ``"points"`` with
    ``position`` in the first batch it is a post-processing of the played points alone
    (u = (x_position - c) / zeta there, x~_0 = c being public). Gaussian noise is isotropic,
    so the turned sums are the counter's releases on a fixed direction.

    Runs are reseeded deep copies of one template, or fresh factory calls (``fresh``), as in
    :func:`learner_releases`; every copy draws new sphere directions and new counter noise.

    Returns an array (n_runs, rows * dim): m - 1 rows for ``"sums"``, T for ``"points"``.

    Examples
    --------
    Without noise the turned sums are exactly the differing element, (n/zeta) B e_1:

    >>> from dpol.learners import BanditFrankWolfe
    >>> from dpol.sets import Box
    >>> make = lambda s: BanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=9, seed=s)
    >>> m = make(0)
    >>> (C, b), _ = worst_case_bandit_losses(m)
    >>> sums = bandit_releases(make, (C, b), 3, seed=0)
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
    out = []
    for learner in learners:
        trace = learner.run_linear(C, b)
        u = _sphere_direction(learner, trace, position)
        rows = trace.noisy_sums if release == "sums" else trace.points - learner.center
        out.append(_reflect(rows, u).ravel())
    return np.asarray(out)


def audit_bandit(factory: Callable, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                 losses: tuple | None = None, position: int = 0, release: str = "sums",
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
        The guarantee to test (default the learner's ``privacy``).
    losses : ((C_a, b_a), (C_b, b_b)), optional
        Neighbouring linear loss sequences; default :func:`worst_case_bandit_losses` at
        ``position`` (the round whose loss differs; default 0, in the first batch, whose sum
        every counter release holds).
    release : {"sums", "points"}
        What is audited (:func:`bandit_releases`). ``"sums"`` (default): the counter's
        releases with the sphere directions, the statement the privacy proof establishes
        and the played points inherit by post-processing; the stronger audit. ``"points"``:
        the played points, the claim as stated; Frank-Wolfe and the exploration noise hide
        most of the sums from them, so this audit is weak.
    seed, fresh, **options
        ``seed`` of the runs; ``fresh`` as :func:`learner_releases`; ``statistic``,
        ``confidence``, ``train_fraction`` go to :func:`~dpol.evaluation.audit.audit_releases`.

    Examples
    --------
    >>> from dpol.learners import PrivateBanditFrankWolfe
    >>> from dpol.sets import Box
    >>> make = lambda s: PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=9,
    ...                                          epsilon=1.0, delta=1e-2, seed=s)
    >>> print(audit_bandit(make, n_runs=400, seed=0).summary())  # doctest: +ELLIPSIS
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
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = (bandit_releases(factory, pair, n_runs, position=position, release=release,
                            seed=q, fresh=fresh)
            for pair, q in zip(losses, (seed_a, seed_b), strict=True))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=f"{type(template).__name__} ({release})", **options)
