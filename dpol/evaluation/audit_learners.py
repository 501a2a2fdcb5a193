"""Empirical DP audits of full-information learners: many runs on neighbouring streams.

:func:`audit_learner` reads what a user sees, the released iterates of many runs on a
neighbouring pair that attains the declared sensitivity
(:func:`~dpol.evaluation.audit_pairs.worst_case_learner_streams`). Row k of a run is the
iterate after k elements, so element p enters rows p + 1 on (a window W: rows p + 1 ..
p + W, :func:`~dpol.evaluation.audit.audited_rows`).
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable, Iterator

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import check_int
from dpol.accounting.guarantee import PrivacyGuarantee
from dpol.evaluation.audit import (
    AuditResult,
    _check_position,
    audit_releases,
    audited_rows,
)
from dpol.evaluation.audit_pairs import first_data_position, worst_case_learner_streams

__all__ = ["audit_learner", "learner_releases"]


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
    try:  # a guarantee derived once and cached is copied with the template: every run's
        _ = template.privacy  # trace reuses it (composing it again cost ~2 ms a run)
    except NotImplementedError:  # a learner not yet stating its events
        pass

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
def learner_releases(factory: Callable, X: object, y: object, n_runs: int, *,
                     rows: slice | None = None, seed: object = None,
                     fresh: bool = False) -> np.ndarray:
    """``n_runs`` independent runs of ``factory(seed)`` on (X, y); iterates flattened.

    A run releases ``trace.weights`` then ``trace.final_weights`` (T + 1 iterates; ``rows``
    keeps a slice). By default runs are deep copies of one factory call with every
    ``np.random.Generator`` reseeded (construction-time draws are then held fixed, which
    a guarantee for every such draw allows); ``fresh=True`` (or no Generator found) calls
    the factory per run.

    Examples
    --------
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> make = lambda s: PrivateQuadraticFTL(2, horizon=4, epsilon=1.0, delta=1e-5, seed=s)
    >>> learner_releases(make, np.eye(4, 2), np.ones(4), 50, seed=0).shape  # 5 iterates of 2
    (50, 10)
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    rows = slice(None) if rows is None else rows
    out = []
    for learner in _copies(factory, n_runs, seed, fresh)[1]:
        trace = learner.run(X, y)
        released = np.vstack([trace.weights, trace.final_weights[None, :]])
        out.append(released[rows].ravel())
    return np.asarray(out)


def audit_learner(factory: Callable, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                  streams: tuple | None = None, position: int | None = None,
                  seed: object = None, fresh: bool = False, **options) -> AuditResult:
    """Audit a full-information learner built by ``factory(seed)`` on its released iterates.

    Parameters
    ----------
    factory : callable
        ``factory(seed) -> OnlineLearner``, a fresh learner at its horizon.
    n_runs : int
        Runs per stream (half fit the statistic, half are held out; see
        :func:`~dpol.evaluation.audit.expected_gaussian_audit` to choose it).
    claimed : PrivacyGuarantee, optional
        The guarantee to test (default the learner's ``privacy``; give the original's to
        audit an under-noised twin against it).
    streams : ((X_a, y_a), (X_b, y_b)), optional
        Default :func:`~dpol.evaluation.audit_pairs.worst_case_learner_streams` at
        ``position``, which attains the learner's declared sensitivity.
    position : int, optional
        The differing element (default
        :func:`~dpol.evaluation.audit_pairs.first_data_position`); a window claim audits
        rows ``position + 1 .. position + W``.
    seed, fresh, **options
        ``seed`` of the runs; ``fresh`` as :func:`learner_releases`; ``statistic``,
        ``confidence``, ``train_fraction`` go to :func:`~dpol.evaluation.audit.audit_releases`.

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
    position = (first_data_position(template) if position is None
                else _check_position(position, template.horizon))
    if streams is None:
        streams = worst_case_learner_streams(template, position=position)
    rows = audited_rows(claimed, position + 1, template.horizon + 1)
    seed_a, seed_b = spawn_seeds(seed, 2)
    a, b = (learner_releases(factory, X, yv, n_runs, rows=rows, seed=q, fresh=fresh)
            for (X, yv), q in zip(streams, (seed_a, seed_b), strict=True))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=type(template).__name__, **options)
