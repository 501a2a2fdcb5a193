"""Empirical DP audits of counters: worst-case streams and batched runs (layer L5).

The runs behind :func:`audit_counter`; :func:`~dpol.evaluation.audit.audit_releases` turns
them into an epsilon lower bound.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import as_matrix, check_choice, check_int, check_real, fail
from dpol.accounting.guarantee import NEIGHBOURING_RELATIONS, PrivacyGuarantee
from dpol.clipping import clip_rows_l2
from dpol.counters import parse_participation
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning
from dpol.evaluation.audit import (
    AuditResult,
    _check_position,
    audit_releases,
    audited_rows,
)
from dpol.noise.kinds import Gaussian, Laplace

__all__ = ["audit_counter", "counter_releases", "worst_case_streams"]


def worst_case_streams(horizon: int, dim: int = 1, bound: float = 1.0, *, position: int = 0,
                       neighbouring: str = "replace_one", participation: object = "single",
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Two neighbouring counter streams that differ by the most one participant can.

    Zeros everywhere except row ``position``: ``+bound e_1`` against ``-bound e_1``
    (replace-one: the change 2 bound is the sensitivity) or against zero (add/remove).
    With several participations (k steps b apart) the participant also differs at rows
    position + b, ..., position + (k - 1) b that fit: from ``position = 0`` the pattern
    whose encoder change is largest for a factorisation with C^T C >= 0 and decreasing
    columns (Toeplitz; :mod:`dpol.counters.strategies._participation`).

    Examples
    --------
    >>> a, b = worst_case_streams(3, 2, 0.5)
    >>> a[0], b[0], bool(np.all(a[1:] == b[1:]))
    (array([0.5, 0. ]), array([-0.5,  0. ]), True)
    """
    horizon, dim = check_int("horizon", horizon, low=1), check_int("dim", dim, low=1)
    bound = check_real("bound", bound, low=0.0, low_open=True)
    position = _check_position(position, horizon)
    relation = check_choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
    p = parse_participation(participation)
    rows = position + p.min_separation * np.arange(p.max_participations)
    rows = rows[rows < horizon]
    a, b = np.zeros((horizon, dim)), np.zeros((horizon, dim))
    a[rows, 0] = bound
    b[rows, 0] = -bound if relation == "replace_one" else 0.0
    return a, b


def counter_releases(counter: object, stream: object, n_runs: int, *,
                     rows: slice | None = None, seed: object = None,
                     batch_size: int = 65_536) -> np.ndarray:
    """``n_runs`` independent runs of a fresh copy of ``counter`` on ``stream``, flattened.

    Gaussian and Laplace noise are i.i.d. across coordinates, so B runs are one counter
    of dimension B*dim with the same per-coordinate noise scale (checked); other noises
    run one copy per run. Returns (n_runs, k * dim): the releases ``rows`` of each run.

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(8, epsilon=1.0, delta=1e-5)
    >>> counter_releases(c, np.ones((8, 1)), 100, rows=slice(0, 3), seed=0).shape
    (100, 3)
    """
    n_runs = check_int("n_runs", n_runs, low=1)
    batch_size = check_int("batch_size", batch_size, low=1)
    values = as_matrix("stream", stream, counter.dim)
    if counter.horizon is not None and len(values) > counter.horizon:
        raise fail("stream", f"have at most horizon={counter.horizon} rows", values)
    rows = slice(None) if rows is None else rows
    n_rows = len(range(len(values))[rows])
    values, _ = clip_rows_l2(values, counter.bound)
    params = counter.get_state()["params"]
    rng = np.random.default_rng(spawn_seeds(seed, 1)[0])
    out, done = [], 0
    while done < n_runs:
        size = min(batch_size, n_runs - done)
        batched = _batched_counter(counter, params, size, rng) if size > 1 else None
        if batched is None:
            out.extend(_fresh_counter(counter, params, rng).run(values)[rows].ravel()
                       for _ in range(size))
        else:
            release = batched.run(np.tile(values, (1, size)))  # (T, size * dim)
            if batched.n_clipped_:  # impossible by the choice of bound; never audit it
                raise RuntimeError("the batched audit counter clipped an element")
            out.extend(release[rows].reshape(n_rows, size, counter.dim).transpose(1, 0, 2)
                       .reshape(size, n_rows * counter.dim))
        done += size
    return np.asarray(out)


def _fresh_counter(counter: object, params: dict, rng: np.random.Generator, **changes):
    with warnings.catch_warnings():  # the template already warned about its calibration
        warnings.simplefilter("ignore", PaperCalibrationWarning)
        warnings.simplefilter("ignore", NonPrivateWarning)
        return type(counter)(**{**params, "seed": int(rng.integers(2**63)), **changes})


def _batched_counter(counter: object, params: dict, size: int, rng: np.random.Generator):
    kind = counter.noise_kind
    if not isinstance(kind, (Gaussian, Laplace)):  # i.i.d. float noise per coordinate only
        return None
    node = counter.node_sensitivity  # an l1 calibration grows with sqrt(dim): undo it
    element = node if kind.norm == "l2" else node / math.sqrt(size)
    try:
        batched = _fresh_counter(counter, params, rng, dim=counter.dim * size,
                                 bound=counter.bound * math.sqrt(size) * (1.0 + 1e-9),
                                 element_sensitivity=element)
    except (TypeError, ValueError):
        return None
    same = (math.isclose(batched.noise_scale, counter.noise_scale, rel_tol=1e-9)
            and batched.levels == counter.levels and batched.noise_kind is kind)
    return batched if same else None


def audit_counter(counter: object, *, n_runs: int, claimed: PrivacyGuarantee | None = None,
                  streams: tuple | None = None, position: int = 0, seed: object = None,
                  length: int | None = None, **options) -> AuditResult:
    """Audit a counter: ``n_runs`` runs per stream of fresh copies of ``counter``.

    Parameters
    ----------
    counter : Counter
        A template (its parameters are copied; it is not run).
    n_runs : int
        Runs per stream (half fit the statistic, half are held out; see
        :func:`~dpol.evaluation.audit.expected_gaussian_audit` to choose it).
    claimed : PrivacyGuarantee, optional
        The guarantee to test (default ``counter.privacy``; give the original's to audit
        an under-noised twin against it).
    streams : (stream_a, stream_b), optional
        Default :func:`worst_case_streams` at ``position``; a window W audits releases
        ``position .. position + W - 1`` (:func:`~dpol.evaluation.audit.audited_rows`).
    length : int, optional
        The stream length for an endless counter (``horizon=None``), unless ``streams``.
    seed, **options
        ``seed`` of the runs; ``statistic``, ``confidence``, ``train_fraction`` go to
        :func:`~dpol.evaluation.audit.audit_releases`.

    Examples
    --------
    >>> from dpol.counters import BinaryTreeCounter
    >>> c = BinaryTreeCounter(8, epsilon=1.0, delta=1e-5)
    >>> result = audit_counter(c, n_runs=20_000, seed=0)
    >>> round(result.epsilon_lower, 3), result.passed
    (0.44, True)
    """
    claimed = counter.privacy if claimed is None else claimed
    horizon = counter.horizon
    if horizon is None:  # an endless counter: audit a finite prefix of its stream
        horizon = len(streams[0]) if streams is not None else check_int("length", length,
                                                                         low=1)
    position = _check_position(position, horizon)
    if streams is None:
        streams = worst_case_streams(horizon, counter.dim, counter.bound,
                                     position=position, neighbouring=claimed.neighbouring,
                                     participation=counter.participation)
    seed_a, seed_b = spawn_seeds(seed, 2)
    rows = audited_rows(claimed, position, horizon)
    a, b = (counter_releases(counter, s, n_runs, rows=rows, seed=q)
            for s, q in zip(streams, (seed_a, seed_b), strict=True))
    return audit_releases(a, b, epsilon=claimed.epsilon, delta=claimed.delta,
                          name=type(counter).__name__, **options)
