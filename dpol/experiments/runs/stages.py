"""The stages of ``dpol run``, in the order the data goes through them (layer L5).

:func:`read_rows` (the table or named data set, its labels coded, the held-out split)
→ :func:`bound_rows` (bounds and scaling: declared, or released privately on a share of
the budget; the training rows clipped to them) → :func:`fit_learners` (the learner and
its non-private twin, in slices that checkpoints can resume) → :func:`score_run` (regret,
accuracy, held-out scores beside the trivial baselines, the notes a user must not miss)
→ :func:`publish` (iterates, losses, plots and report, in the output folder whole or not
at all). Each takes the :class:`~dpol.experiments.runs.request.RunRequest` and what the
stages before it made, and can be run alone.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpol._validation import check_choice, fail
from dpol.accounting.events import compose_guarantee
from dpol.adapters.registry import comparator, zero_point
from dpol.datasets import DATASETS, Stream, load_dataset, read_table
from dpol.datasets.files import NORMALIZATIONS, Clipping, clip_to_bounds, split_label, table_stream
from dpol.datasets.private_bounds import private_bounds
from dpol.datasets.private_scaling import private_scaling
from dpol.errors import NonPrivateWarning
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs import scores
from dpol.experiments.runs.checkpoint import data_fingerprint, save_checkpoint, stream_slices
from dpol.experiments.runs.fallback import fallback_rows, inner_learner, make_run_learner
from dpol.experiments.runs.output import checkpoint_folder, remove_checkpoint, staged_output
from dpol.experiments.runs.report import split_text, write_losses, write_plots, write_report
from dpol.experiments.runs.request import RunRequest
from dpol.learners import Trace

__all__ = ["Bounded", "Fits", "Rows", "Scored", "bound_rows", "fit_learners",
           "load_run_stream", "publish", "read_rows", "score_run"]


@dataclass(frozen=True)
class Rows:
    """A run's rows as read, before any bound: all of them, training and held out."""

    X: np.ndarray
    y: np.ndarray  # labels +-1, or one-hot rows of K classes, for a classifier
    name: str
    how: str  # the normalisation so far, and how the labels were coded
    options: dict | None  # the learner's options, with outputs=K for K classes
    train: np.ndarray  # the rows the learner sees, in order: the first `horizon` ones
    test: np.ndarray | None  # the held-out rows
    available: int  # training rows before the horizon cut
    horizon: int  # the length the noise is calibrated for


def read_rows(request: RunRequest) -> Rows:
    """Stage 1, read: the rows of ``request.data``, their labels coded for the learner
    (K > 2 classes: one-hot rows and ``outputs=K``), and the held-out split.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> rows = read_rows(run_request("pqftl", "synthetic-regression", tempfile.mkdtemp(),
    ...                              horizon=500, test_fraction=0.2))
    >>> rows.X.shape, len(rows.train), len(rows.test), rows.horizon  # 500 rows generated
    ((500, 10), 400, 100, 500)
    """
    X, y, name, how = _table(request.data, task=request.spec.task,
                             target_col=request.target_col, normalize=request.normalize,
                             x_bound=request.x_bound, y_bound=request.y_bound, seed=0,
                             horizon=request.horizon)  # public data: never the noise's seed
    if request.y_centre:  # a declared range (lo, hi): a public shift to y - c, |y - c| <= h
        y, how = y - request.y_centre, "; ".join(p for p in (how, request.range_text) if p)
    options = scores.class_options(request.learner, y, request.options, request.calibration)
    train, test = (scores.holdout_split(len(y), request.test_fraction)
                   if request.test_fraction is not None else (np.arange(len(y)), None))
    available = len(train)
    return Rows(X, y, name, how, options, train[:request.horizon], test, available,
                available if request.horizon is None else request.horizon)


def _table(data: object, *, task: str, target_col, normalize: str, x_bound: float,
           y_bound: float, seed: object, horizon: int | None):
    """(X, y, name, normalisation so far) of ``data`` before clipping, all rows."""
    if isinstance(data, str) and data in DATASETS and not Path(data).exists():
        if task == "classification" and DATASETS[data][1] != "classification":
            raise fail("data", "be a classification data set for a classification learner", data)
        generated = DATASETS[data][2].startswith("generated")  # made with T rows
        named = load_dataset(data, seed=seed, horizon=horizon if generated else None)
        how = named.normalization if generated else (
            f"{named.normalization}; uses statistics of the data (not covered by the privacy "
            "guarantee: the data set is public, the stream as normalised is what it protects)")
        return named.X, named.y, named.name, how
    table, names = read_table(data)
    label = "standard input" if data == "-" else Path(str(data)).name
    multi = task == "classification"  # K > 2 labels: one-hot (class_options decides)
    if normalize == "standardize":
        s = table_stream(table, names, target_col=target_col, task=task, multi_class=multi,
                         normalize=normalize, x_bound=x_bound, y_bound=y_bound, name=label)
        return s.X, s.y, s.name, s.normalization
    X, y, what, note = split_label(table, names, target_col=target_col, task=task,
                                   multi_class=multi)
    return X, y, f"{label} ({what})", note


def load_run_stream(data: object, *, task: str, target_col: int | str | None = None,
                    normalize: str = "clip", x_bound: float = 1.0, y_bound: float = 1.0,
                    seed: object = 0, horizon: int | None = None) -> Stream:
    """The stream of ``data``: a file path, ``"-"`` (CSV on standard input) or a name of
    :data:`dpol.datasets.DATASETS` (already normalised; only clipped to the bounds; a
    synthetic one is generated with ``horizon`` rows).

    Examples
    --------
    >>> s = load_run_stream("synthetic-regression", task="regression")
    >>> s.X.shape, s.n_clipped
    ((10000, 10), 0)
    """
    check_choice("normalize", normalize, NORMALIZATIONS)
    X, y, name, how = _table(data, task=task, target_col=target_col, normalize=normalize,
                             x_bound=x_bound, y_bound=y_bound, seed=seed, horizon=horizon)
    X, y, clip = clip_to_bounds(X, y, x_bound, y_bound)
    return Stream(X, y, name, "; ".join(p for p in (how, clip.summary()) if p),
                  n_clipped=clip.clipped)


@dataclass(frozen=True)
class Bounded:
    """The training stream within its bounds, and what bounding it released."""

    stream: Stream  # the training rows, clipped to the bounds
    clip: Clipping
    X: np.ndarray  # every row (training and held out) scaled, not clipped
    y: np.ndarray
    x_bound: float
    y_bound: float
    epsilon: float  # the learner's share of the budget
    estimate: object | None  # the bounds or scaling released privately, if any


def bound_rows(request: RunRequest, rows: Rows, estimate: object | None = None) -> Bounded:
    """Stage 2, bounds and scaling: the bounds as declared, or released privately from the
    training rows (a bound ``"auto"``: OpenDP's private quantile; ``normalize="private"``:
    each feature scaled by private quantiles, then the bounds) on ``bounds_budget`` times
    epsilon, the learner getting the rest; then the training rows clipped to them.
    ``estimate``: the one a resumed run released before its checkpoint (read back, never
    released twice).

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> request = run_request("pqftl", "synthetic-regression", tempfile.mkdtemp(), horizon=500)
    >>> bounded = bound_rows(request, read_rows(request))
    >>> bounded.x_bound, bounded.epsilon, bounded.estimate is None, bounded.clip.clipped
    (1.0, 1.0, True, 0)
    """
    X, y, x_bound, y_bound = rows.X, rows.y, request.x_bound, request.y_bound
    epsilon, auto, train = request.epsilon, request.auto, rows.train
    share = request.bounds_budget * epsilon
    if request.private:  # from the rows the learner sees, before clipping
        estimate = estimate or private_scaling(X[train], y[train] if auto[1] else None,
                                               epsilon=share)
        X = estimate.transform(X)
        y = estimate.transform_y(y) if auto[1] else y
        x_bound = estimate.x_bound
        y_bound = estimate.y_bound if auto[1] else y_bound
        epsilon = (1.0 - request.bounds_budget) * epsilon
    elif any(auto):
        estimate = estimate or private_bounds(X[train] if auto[0] else None,
                                              y[train] if auto[1] else None, epsilon=share)
        x_bound = estimate.x_bound if auto[0] else x_bound
        y_bound = estimate.y_bound if auto[1] else y_bound
        epsilon = (1.0 - request.bounds_budget) * epsilon
    X_train, y_train, clip = clip_to_bounds(X[train], y[train], x_bound, y_bound)
    stream = Stream(X_train, y_train, rows.name,
                    "; ".join(p for p in (rows.how, clip.summary()) if p),
                    n_clipped=clip.clipped)
    return Bounded(stream, clip, X, y, x_bound, y_bound, epsilon, estimate)


@dataclass(frozen=True)
class Fits:
    """The learners run on the stream, the private one first (then its non-private twin):
    (label, learner, trace) each; the comparator and its losses; the checkpoint state."""

    learners: list[tuple[str, object, Trace]]
    comparator: np.ndarray  # the best fixed point in hindsight
    ref: np.ndarray  # its losses, step by step
    state: dict

    @property
    def model(self):
        """The private learner: its releases are the run's private output."""
        return self.learners[0][1]

    @property
    def trace(self) -> Trace:
        return self.learners[0][2]


def fit_learners(request: RunRequest, rows: Rows, bounded: Bounded, resumed: dict | None = None,
                 progress: Callable[..., None] | None = None) -> Fits:
    """Stage 3, learner: the learner on the bounded stream (inside the trivial fallback
    with ``request.fallback``: :mod:`.fallback`), then (``request.baseline``) its
    non-private twin, fed in slices that show ``progress(done, total, label)`` and, every
    ``request.checkpoint_every`` rows, save both with their releases; ``resumed``: the
    checkpoint a resumed run continues (the same data, or refused).

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> request = run_request("igd", "synthetic-classification", tempfile.mkdtemp(),
    ...                       horizon=300, seed=0, baseline=False)
    >>> rows, ticks = read_rows(request), []
    >>> fits = fit_learners(request, rows, bound_rows(request, rows),
    ...                     progress=lambda *done: ticks.append(done))
    >>> [label for label, _, _ in fits.learners], fits.trace.weights.shape, ticks
    (['igd'], (300, 11), [(300, 300, 'igd')])
    """
    X, y = bounded.stream.X, bounded.stream.y
    build = dict(horizon=rows.horizon, delta=request.delta, counter=request.counter,
                 x_bound=bounded.x_bound, y_bound=bounded.y_bound, options=rows.options,
                 **request.features)
    state = _checkpoint_state(request, bounded, resumed)
    model = state["models"].get("private") or make_run_learner(
        request, X.shape[1], bounded.epsilon, request.calibration, **build)
    u = comparator(inner_learner(model), X, y)
    ref = model._loss_value(u, X, y)

    def run(key: str, learner, label: str) -> Trace:
        tick = (lambda done: progress(done, len(y), label)) if progress else (lambda _: None)
        return stream_slices(key, learner, X, y, u, tick, state, request.checkpoint_every,
                             lambda: save_checkpoint(checkpoint_folder(request.out), state))

    fits = [(request.learner, model, run("private", model, request.learner))]
    if request.baseline:
        twin = state["models"].get("twin")
        if twin is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonPrivateWarning)
                twin = make_run_learner(request, X.shape[1], math.inf, "tight", **build)
        fits.append((f"{request.learner}, non-private twin", twin,
                     run("twin", twin, "non-private twin")))
    return Fits(fits, u, ref, state)


def _checkpoint_state(request: RunRequest, bounded: Bounded, resumed: dict | None) -> dict:
    """What a checkpoint of the run holds; a resumed run's progress, on the same rows."""
    stream = bounded.stream
    state = {"args": request.args, "estimate": bounded.estimate,
             "fingerprint": data_fingerprint(stream.X, stream.y), "done": {}, "parts": {},
             "models": {}, "run_id": request.run_id}
    if resumed is not None:
        if resumed["fingerprint"] != state["fingerprint"]:
            raise fail("resume", "find the rows the checkpointed run read (the data "
                       "changed since)", str(request.out))
        state.update({k: resumed[k] for k in ("done", "parts", "models")})
    return state


@dataclass(frozen=True)
class Scored:
    """The run's result rows (the learners, then the trivial baselines), its guarantee
    (composed with that of a private estimate), and the notes a user must not miss."""

    rows: list[dict]
    guarantee: object  # a PrivacyGuarantee
    zero_regret: float  # predict 0's average regret, the plots' baseline
    notes: list[str]


def score_run(request: RunRequest, rows: Rows, bounded: Bounded, fits: Fits) -> Scored:
    """Stage 4, scores: regret and mean loss of each learner, its online accuracy (a
    classifier), the final model's held-out score (``test_fraction``), beside the trivial
    baselines; the guarantee of everything that read the data; the notes. Computed from
    the raw stream: none of it is private.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> request = run_request("pqftl", "synthetic-regression", tempfile.mkdtemp(),
    ...                       horizon=500, seed=0)
    >>> rows = read_rows(request)
    >>> bounded = bound_rows(request, rows)
    >>> scored = score_run(request, rows, bounded, fit_learners(request, rows, bounded))
    >>> [r["model"] for r in scored.rows], round(scored.rows[0]["average_regret"], 4)
    (['pqftl', 'pqftl, non-private twin', 'predict 0 (trivial)'], 0.2677)
    """
    X, y = bounded.stream.X, bounded.stream.y
    model, ref, classification = fits.model, fits.ref, request.classification
    table = [{**scores.summary_row(lb, t, ref), **fallback_rows(m)} for lb, m, t in fits.learners]
    guarantee = _guarantee(request, bounded, fits, table[0])
    zero = scores.zero_row(model._loss_value(zero_point(inner_learner(model)), X, y), ref,
                          request.y_centre)
    X_test = y_test = None
    if rows.test is not None:  # rows clipped like the training rows; labels scored unclipped
        X_test, _, _ = clip_to_bounds(bounded.X[rows.test], bounded.y[rows.test],
                                      bounded.x_bound, bounded.y_bound)
        y_test = bounded.y[rows.test]
    for row, (_, fitted, t) in zip(table, fits.learners, strict=True):
        if classification:
            row["accuracy"] = scores.online_accuracy(t.prequential_predictions, y)
        if X_test is not None:  # the model a user gets: predict_one after the stream
            pred = np.array([fitted.predict_one(x) for x in X_test])
            row.update(scores.heldout_scores(pred, y_test, classification))
    table += scores.trivial_rows(y, bounded.y[rows.train], y_test, classification, zero)
    keys = list(dict.fromkeys(k for r in table for k in r))
    table = [{k: r.get(k, math.nan) for k in keys} for r in table]
    return Scored(table, guarantee, zero["average_regret"],
                  scores.run_notes(request, rows, bounded, fits, guarantee))


def _guarantee(request: RunRequest, bounded: Bounded, fits: Fits, row: dict):
    """The one guarantee of everything that read the data: the learner's, composed with
    that of a private estimate (then said in ``row``, the learner's, with the split)."""
    estimate, model = bounded.estimate, fits.model
    if estimate is None:
        return fits.trace.privacy
    guarantee = compose_guarantee([*estimate.privacy_events(), *model.privacy_events()],
                                  model.delta, target=request.epsilon,
                                  seeded=model.privacy.seeded)
    row["guarantee"] = str(guarantee)
    row["privacy_split"] = split_text(estimate, bounded.x_bound, bounded.y_bound,
                                      request.auto, bounded.epsilon)
    return guarantee


def publish(request: RunRequest, rows: Rows, bounded: Bounded, fits: Fits,
            scored: Scored, keep_checkpoint: bool = False) -> ExperimentResult:
    """Stage 5, outputs: ``iterates.npy`` (the private output), ``losses.csv``, the plots,
    ``report.md`` and ``run.json``, written into a staging folder and renamed to
    ``request.out`` whole (then the run's checkpoint is deleted: nothing is left to
    resume; ``keep_checkpoint``: a run by key's, deleted with its run's).

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request
    >>> request = run_request("pqftl", "synthetic-regression", Path(tempfile.mkdtemp()) / "o",
    ...                       horizon=500, seed=0, baseline=False)
    >>> rows = read_rows(request)
    >>> bounded = bound_rows(request, rows)
    >>> fits = fit_learners(request, rows, bounded)
    >>> result = publish(request, rows, bounded, fits, score_run(request, rows, bounded, fits))
    >>> sorted(p.name for p in request.out.iterdir())
    ['iterates.npy', 'loss.png', 'losses.csv', 'regret.png', 'report.md', 'run.json']
    """
    out, trace, stream = request.out, fits.trace, bounded.stream
    with staged_output(out, replace=request.replace, run_id=request.run_id,
                       then=None if keep_checkpoint else lambda: remove_checkpoint(out)) as stage:
        np.save(stage / "iterates.npy",  # (T + 1, d), or (T + 1, d, K) with K outputs
                np.concatenate([trace.weights, trace.final_weights[None]]))
        write_losses(stage / "losses.csv", trace)
        figures = write_plots(stage, request.learner, stream.name, scored.guarantee,
                              [t for _, _, t in fits.learners], fits.ref, scored.zero_regret,
                              zero_label=f"predict {request.y_centre:g}")
        info = _report_info(request, rows, bounded, fits, scored)
        if keep_checkpoint:  # a key's run: its checkpoints are in its run's folder
            info["checkpoints_in"] = f"`{out.parent.parent.name}` beside the run by key's folder"
        write_report(stage, info, scored.rows, figures, out_name=out.name)
    labels = rows.how.split("; ")[0] if request.classification and " -> " in rows.how else ""
    return ExperimentResult(f"run_{request.learner}", scored.rows, out / "report.md",
                            out / "losses.csv", [out / f.name for f in figures],
                            scored.notes, labels)


def _report_info(request: RunRequest, rows: Rows, bounded: Bounded, fits: Fits,
                 scored: Scored) -> dict:
    """What :func:`~dpol.experiments.runs.report.write_report` says of the run."""
    test = None if rows.test is None else (len(rows.test), request.test_fraction)
    return {"learner": request.learner, "spec": request.spec, "model": fits.model,
            "stream": bounded.stream, "n_rows": len(rows.y), "available": rows.available,
            "horizon": rows.horizon, "counter": request.counter, "x_bound": bounded.x_bound,
            "y_bound": bounded.y_bound, "y_centre": request.y_centre,
            "options": rows.options or {},
            "n_clipped": fits.trace.n_clipped, "data": request.data,
            "command": request.command, "test": test, "notes": scored.notes,
            "guarantee": scored.guarantee, "epsilon": request.epsilon,
            "split": scored.rows[0].get("privacy_split"),
            "checkpoint_every": request.checkpoint_every, "run_id": request.run_id}
