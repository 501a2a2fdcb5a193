"""``dpol run``: one learner on a table or a named data set, with regret and a report (L5).

Writes into the output folder:

* ``iterates.npy`` — every released iterate, shape (T + 1, d) (d + 1 with the
  intercept, its coordinate last; D (+ 1) on random features): row t is the model
  released before element t + 1, the last row the model after the stream. This is the
  private output.
* ``losses.csv`` — per step: the loss suffered, the cumulative and average regret against
  the best fixed point in hindsight (:func:`dpol.adapters.comparator`).
* ``regret.png``, ``loss.png`` — average regret and running mean loss on log axes (symlog
  where a value is <= 0), beside the learner's non-private twin (``epsilon=inf``).
* ``report.md`` — the guarantee, the calibration and the noise, the parameters, the data
  and its normalisation, the results, the plots and the terms used.

Classification labels of K > 2 classes (whole numbers) are one-hot rows for the ridge
classifiers (``outputs=K``), scored by the class of the largest margin.
Classifiers are also scored by their online accuracy, and with ``test_fraction`` the
final model (``predict_one``: the post-processed releases,
:mod:`dpol.learners.postprocess`) by its held-out score
(:mod:`dpol.experiments.runs.scores`), beside the trivial baselines. Losses, regret,
scores and plots are computed from the raw stream: they are **not** private.
"""

from __future__ import annotations

import math
import secrets
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol._clip_warning import label_offset_advice
from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.calibration import check_epsilon
from dpol.accounting.events import compose_guarantee
from dpol.adapters.registry import LEARNERS, comparator, make_learner, zero_point
from dpol.datasets import DATASETS, Stream, load_dataset, read_table
from dpol.datasets.files import NORMALIZATIONS, clip_to_bounds, split_label, table_stream
from dpol.datasets.private_bounds import parse_bound, private_bounds
from dpol.datasets.private_scaling import private_scaling
from dpol.errors import NonPrivateWarning
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs import scores
from dpol.experiments.runs.checkpoint import (
    CHECKPOINT,
    data_fingerprint,
    load_checkpoint,
    save_checkpoint,
    stream_slices,
)
from dpol.experiments.runs.chunked import chunked_arguments, feature_arguments, run_chunked
from dpol.experiments.runs.output import (
    check_out,
    checkpoint_folder,
    find_checkpoint,
    remove_checkpoint,
    staged_output,
)
from dpol.experiments.runs.report import (
    ERRATA_IDS,
    split_text,
    write_losses,
    write_plots,
    write_report,
)

__all__ = ["ERRATA_IDS", "RUN_NORMALIZATIONS", "load_run_stream", "resume_run",
           "run_learner"]

#: ``normalize`` of :func:`run_learner`: a table's own, or "private" (scaling released
#: privately on the ``bounds_budget`` share, inside the guarantee)
RUN_NORMALIZATIONS = (*NORMALIZATIONS, "private")


def _rows(data: object, *, task: str, target_col, normalize: str, x_bound: float,
          y_bound: float, seed: object, horizon: int | None):
    """(X, y, name, normalisation so far) of ``data`` before clipping, all rows."""
    if isinstance(data, str) and data in DATASETS and not Path(data).exists():
        if task == "classification" and DATASETS[data][1] != "classification":
            raise fail("data", "be a classification data set for a classification learner",
                       data)
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
    X, y, name, how = _rows(data, task=task, target_col=target_col, normalize=normalize,
                            x_bound=x_bound, y_bound=y_bound, seed=seed, horizon=horizon)
    X, y, clip = clip_to_bounds(X, y, x_bound, y_bound)
    return Stream(X, y, name, "; ".join(p for p in (how, clip.summary()) if p),
                  n_clipped=clip.clipped)


def _summary(label: str, trace, ref: np.ndarray) -> dict:
    n = len(trace.losses)
    return {"model": label, "guarantee": str(trace.privacy),
            "average_regret": float(trace.regret[-1] / n), "final_regret": float(trace.regret[-1]),
            "mean_loss": float(trace.losses.mean()), "comparator_mean_loss": float(ref.mean())}


def run_learner(learner: str, data: object, out_dir: str | Path, *, epsilon: float = 1.0,
                delta: float | None = None, horizon: int | None = None, counter: str | None = None,
                seed: int | None = None, calibration: str = "tight",
                target_col: int | str | None = None, normalize: str = "clip",
                x_bound: float | str = 1.0,
                y_bound: float | str = 1.0, bounds_budget: float = 0.1,
                options: dict | None = None, baseline: bool = True,
                test_fraction: float | None = None,
                progress: Callable[..., None] | None = None,
                command: str | None = None, checkpoint_every: int | None = None,
                chunk_rows: int | None = None, fit_intercept: bool | None = None,
                random_features: int | None = None, bandwidth: float | None = None,
                replace: bool = False, _resumed: dict | None = None) -> ExperimentResult:
    """Run ``learner`` (a name of :data:`dpol.adapters.LEARNERS`) on ``data``; write outputs.

    ``horizon`` is the length the noise is calibrated for (default: the number of rows;
    a smaller value keeps the first ``horizon`` rows). ``baseline`` also runs the
    non-private twin for comparison. ``test_fraction`` holds out a fixed random share of
    the rows (:func:`~dpol.experiments.runs.scores.holdout_split`) on which the final
    released model is scored. ``progress(done, total, label)`` is called as rows are
    learned (``label``: the learner's name, then the twin's). ``command``, when given, is
    quoted in the report (how to reproduce it). The result's ``notes`` are what a user
    must not miss (heavy clipping, a horizon that is not the number of rows).

    ``seed`` None (default) draws the noise from fresh operating-system entropy, which
    nobody can replay; a seed makes the run reproducible and its guarantee *seeded*:
    private only against whoever does not know the seed (a named synthetic data set is
    generated with the public seed 0, never the noise's). The outputs appear in
    ``out_dir`` together or not at all (:mod:`dpol.experiments.runs.output`); a folder
    holding files is refused unless ``replace``. ``checkpoint_every`` saves the learners'
    state with their releases every that many rows into the folder ``OUT.checkpoint``
    beside ``out_dir``, owner-only and signed: it can de-noise the releases
    (:mod:`dpol.experiments.runs.checkpoint`); :func:`resume_run` continues from it, with
    releases identical to an uninterrupted run's, and it is removed once the outputs are
    published. ``chunk_rows`` reads and learns the file that many rows at a time
    (:mod:`dpol.experiments.runs.chunked`), for streams larger than memory.

    ``fit_intercept`` (default: True for a linear learner, as in the adapters) runs the
    learner with an intercept (:class:`~dpol.learners.intercept.WithIntercept`; the
    iterates and the comparator then have d + 1 coordinates, the intercept's last);
    ``random_features`` = D runs it on D random Fourier features of the rows, with the
    kernel's ``bandwidth`` in units of the bound on ||x||
    (:class:`~dpol.learners.random_features.WithRandomFeatures`; default bandwidth
    its ``BANDWIDTH``, refused without ``random_features``: it would change nothing).

    A bound ``"auto"`` is estimated privately from the rows the learner sees
    (:func:`~dpol.datasets.private_bounds.private_bounds`) with ``bounds_budget * epsilon``;
    the learner gets the rest, and the reported guarantee composes both. ``normalize=
    "private"`` scales the features (and a regression label) by quantiles released
    privately on that share, then releases the bounds
    (:func:`~dpol.datasets.private_scaling.private_scaling`); regret and scores are then
    in the scaled units.

    Examples
    --------
    >>> import tempfile
    >>> res = run_learner("pqftl", "synthetic-regression", tempfile.mkdtemp(), horizon=500,
    ...                   seed=0)
    >>> res.rows[0]["model"], round(res.rows[0]["average_regret"], 4), len(res.notes)
    ('pqftl', 0.2677, 1)
    >>> res.notes[0][:38]  # a seed given: the one note
    'the noise is seeded (--seed): whoever '
    """
    args = {k: v for k, v in locals().items() if k not in ("progress", "_resumed")}
    if isinstance(data, (str, Path)) and str(data) != "-" and Path(data).is_file():
        args["data"] = str(Path(data).absolute())  # a resume may start in another folder
    if not isinstance(learner, str) or learner not in LEARNERS:
        raise fail("learner", f"be one of {', '.join(LEARNERS)}", learner)
    spec = LEARNERS[learner]
    # cheap arguments first: a refused run reads no data and writes nothing
    check_epsilon(epsilon)
    out, run_id = Path(out_dir), (_resumed or {}).get("run_id") or secrets.token_hex(8)
    check_out(out, replace=replace, run_id=_resumed and run_id)
    if _resumed is None and (checkpoint_folder(out) / CHECKPOINT).is_file():
        raise fail("out", f"have no unfinished run's checkpoint beside it (resume it with "
                   f"--resume {out}, or delete {checkpoint_folder(out)})", str(out))
    if delta is not None:  # None: the learner's default, 1e-5 or 1/T if smaller
        check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    check_choice("calibration", calibration, ("tight", "paper"))
    check_choice("normalize", normalize, RUN_NORMALIZATIONS)
    x_bound, y_bound = parse_bound("x_bound", x_bound), parse_bound("y_bound", y_bound)
    private = normalize == "private"  # the bounds are then released after the scaling
    for name, value in (("x_bound", x_bound), ("y_bound", y_bound)):
        if private and value not in ("auto", 1.0):  # 1.0: the default, left unset
            raise fail(name, "be 'auto' or left unset with normalize='private' (the bounds "
                       "are released after the private scaling)", value)
    auto = (x_bound == "auto" or private,
            y_bound == "auto" or (private and spec.task == "regression"))
    if any(auto):
        _check_auto(bounds_budget, epsilon, normalize,
                    y_bound == "auto" and spec.task != "regression")
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
    if test_fraction is not None:
        check_real("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True,
                   high_open=True)
    if counter is not None and spec.counter is None:
        raise fail("counter", f"be left unset: {learner} adds its noise without a counter",
                   counter)
    features = feature_arguments(spec, learner, fit_intercept, random_features, bandwidth)
    if checkpoint_every is not None:
        checkpoint_every = check_int("checkpoint_every", checkpoint_every, low=1)
        if isinstance(data, str) and data == "-":
            raise fail("checkpoint_every", "be unset for data read from standard input (a "
                       "resumed run must read the same rows again)", checkpoint_every)
    if chunk_rows is not None:  # streams larger than memory: another path, same outputs
        return run_chunked(learner, data, out_dir, **chunked_arguments(
            {**args, "x_bound": x_bound, "y_bound": y_bound}, chunk_rows, any(auto)),
            progress=progress, features=features)
    classification = spec.task == "classification"

    X_all, y_all, name, how = _rows(data, task=spec.task, target_col=target_col,
                                    normalize=normalize, x_bound=x_bound, y_bound=y_bound,
                                    seed=0, horizon=horizon)  # public data: never the noise's
    options = scores.class_options(learner, y_all, options, calibration)  # K: K outputs
    n_rows = len(y_all)
    train, test = (scores.holdout_split(n_rows, test_fraction) if test_fraction is not None
                   else (np.arange(n_rows), None))
    available = len(train)
    train = train[:horizon]
    horizon = available if horizon is None else horizon
    total, estimate = epsilon, None
    if _resumed is not None:  # released once, before the crash: read back, never redrawn
        estimate = _resumed["estimate"]
    if private:  # from the rows the learner sees, before clipping
        estimate = estimate or private_scaling(X_all[train], y_all[train] if auto[1] else None,
                                   epsilon=bounds_budget * epsilon)
        X_all = estimate.transform(X_all)
        y_all = estimate.transform_y(y_all) if auto[1] else y_all
        x_bound = estimate.x_bound
        y_bound = estimate.y_bound if auto[1] else y_bound
        epsilon = (1.0 - bounds_budget) * epsilon
    elif any(auto):
        estimate = estimate or private_bounds(X_all[train] if auto[0] else None,
                                  y_all[train] if auto[1] else None,
                                  epsilon=bounds_budget * epsilon)
        x_bound = estimate.x_bound if auto[0] else x_bound
        y_bound = estimate.y_bound if auto[1] else y_bound
        epsilon = (1.0 - bounds_budget) * epsilon
    X, y, clip = clip_to_bounds(X_all[train], y_all[train], x_bound, y_bound)
    stream = Stream(X, y, name, "; ".join(p for p in (how, clip.summary()) if p),
                    n_clipped=clip.clipped)
    build = dict(horizon=horizon, epsilon=epsilon, delta=delta, counter=counter,
                 x_bound=x_bound, y_bound=y_bound, calibration=calibration, options=options,
                 **features)
    state = {"args": args, "estimate": estimate, "fingerprint": data_fingerprint(X, y),
             "done": {}, "parts": {}, "models": {}, "run_id": run_id}
    if _resumed is not None:
        if _resumed["fingerprint"] != state["fingerprint"]:
            raise fail("resume", "find the rows the checkpointed run read (the data "
                       "changed since)", str(out))
        state.update({k: _resumed[k] for k in ("done", "parts", "models")})
    model = state["models"].get("private") or make_learner(learner, X.shape[1], seed=seed,
                                                           **build)
    u = comparator(model, X, y)
    ref = model._loss_value(u, X, y)

    def ticker(label: str) -> Callable[[int], None]:
        return lambda done: progress(done, len(y), label) if progress else None

    def save() -> None:
        save_checkpoint(checkpoint_folder(out), state)

    trace = stream_slices("private", model, X, y, u, ticker(learner), state, checkpoint_every,
                    save)
    fits = [(learner, model, trace)]
    if baseline:
        twin_model = state["models"].get("twin")
        if twin_model is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonPrivateWarning)
                twin_model = make_learner(learner, X.shape[1], seed=seed, **{
                    **build, "epsilon": math.inf, "calibration": "tight"})
        twin = stream_slices("twin", twin_model, X, y, u, ticker("non-private twin"), state,
                       checkpoint_every, save)
        fits.append((f"{learner}, non-private twin", twin_model, twin))
    rows = [_summary(label, t, ref) for label, _, t in fits]
    guarantee = trace.privacy
    if estimate is not None:  # the one guarantee of everything that read the data
        guarantee = compose_guarantee([*estimate.privacy_events(), *model.privacy_events()],
                                      model.delta, target=total,
                                      seeded=model.privacy.seeded)
        rows[0]["guarantee"] = str(guarantee)
        rows[0]["privacy_split"] = split_text(estimate, x_bound, y_bound, auto, epsilon)
    zero_loss = model._loss_value(zero_point(model), X, y)  # predict 0
    zero = {"model": "predict 0 (trivial)", "guarantee": "(0, 0)-DP",
            "average_regret": float(np.mean(zero_loss - ref)),
            "final_regret": float(np.sum(zero_loss - ref)), "mean_loss": float(zero_loss.mean()),
            "comparator_mean_loss": float(ref.mean())}
    X_test = y_test = None
    if test is not None:  # rows clipped like the training rows; labels scored unclipped
        X_test, _, _ = clip_to_bounds(X_all[test], y_all[test], x_bound, y_bound)
        y_test = y_all[test]
    for row, (_, fitted, t) in zip(rows, fits, strict=True):
        if classification:
            row["accuracy"] = scores.online_accuracy(t.prequential_predictions, y)
        if X_test is not None:  # the model a user gets: predict_one after the stream
            pred = np.array([fitted.predict_one(x) for x in X_test])
            row.update(scores.heldout_scores(pred, y_test, classification))
    rows += scores.trivial_rows(y, y_all[train], y_test, classification, zero)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    rows = [{k: r.get(k, math.nan) for k in keys} for r in rows]
    offset = None if classification else label_offset_advice(
        y_all[train], "subtract {offset:g} from the label column", "--normalize private")
    notes = [n for n in (estimate and estimate.note(), offset,  # the cause before its effect
                         scores.clip_note(clip, trace.n_clipped, classification,
                                          released=scores.released_parts(estimate)),
                         scores.horizon_note(horizon, len(y), available,
                                             0 if test is None else len(test)),
                         scores.silent_note(learner, bool(np.any(trace.prequential_predictions)),
                                            test is None)) if n]

    if guarantee.seeded:
        notes.append(scores.SEEDED_NOTE)
    info = {"learner": learner, "spec": spec, "model": model, "stream": stream,
            "n_rows": n_rows, "available": available, "horizon": horizon,
            "counter": counter, "x_bound": x_bound, "y_bound": y_bound,
            "options": options or {}, "n_clipped": trace.n_clipped, "data": data,
            "command": command, "test": None if test is None else (len(test), test_fraction),
            "notes": notes, "guarantee": guarantee, "epsilon": total,
            "split": rows[0].get("privacy_split"), "checkpoint_every": checkpoint_every,
            "run_id": run_id}
    with staged_output(out, replace=replace, run_id=run_id,
                       then=lambda: remove_checkpoint(out)) as stage:
        np.save(stage / "iterates.npy",  # (T + 1, d), or (T + 1, d, K) with K outputs
                np.concatenate([trace.weights, trace.final_weights[None]]))
        write_losses(stage / "losses.csv", trace)
        figures = write_plots(stage, learner, stream.name, guarantee, [f[2] for f in fits], ref,
                         zero["average_regret"])
        write_report(stage, info, rows, figures, out_name=out.name)
    labels = how.split("; ")[0] if classification and " -> " in how else ""  # split_label's
    return ExperimentResult(f"run_{learner}", rows, out / "report.md", out / "losses.csv",
                            [out / f.name for f in figures], notes, labels)


def resume_run(out_dir: str | Path, *, progress: Callable[..., None] | None = None
               ) -> ExperimentResult:
    """Continue the run whose checkpoint is beside the output folder ``out_dir`` (or in
    ``out_dir``, its checkpoint folder; see :func:`run_learner`).

    The data are read again and must be the same rows; bounds or scaling released
    privately before the stream come from the checkpoint (never released twice), and the
    learners continue from their saved state: the releases are those of an
    uninterrupted run with the same seed.
    """
    folder, out = find_checkpoint(out_dir)
    saved = load_checkpoint(folder)
    args = {**saved["args"], "out_dir": out}
    return run_learner(**args, progress=progress, _resumed=saved)


def _check_auto(budget: float, epsilon: float, normalize: str, classifier: bool) -> None:
    check_real("bounds_budget", budget, low=0.0, high=1.0, low_open=True, high_open=True)
    if math.isinf(epsilon):
        raise fail("epsilon", "be finite for a bound 'auto' (a share of it estimates the "
                   "bound)", epsilon)
    if normalize == "standardize":
        raise fail("normalize", "be 'clip' or 'private' for a bound 'auto' (standardize "
                   "scales the rows to declared bounds)", normalize)
    if classifier:
        raise fail("y_bound", "be left unset for a classification learner (labels are "
                   "+-1, never clipped)", "auto")
