"""``dpol run``: one learner on a table or a named data set, with regret and a report (L5).

Writes into the output folder:

* ``iterates.npy`` — every released iterate, shape (T + 1, d): row t is the model
  released before element t + 1, the last row the model after the stream. This is the
  private output.
* ``losses.csv`` — per step: the loss suffered, the cumulative and average regret against
  the best fixed point in hindsight (:func:`dpol.adapters.comparator`).
* ``regret.png``, ``loss.png`` — average regret and running mean loss on log axes (symlog
  where a value is <= 0), beside the learner's non-private twin (``epsilon=inf``).
* ``report.md`` — the guarantee, the calibration and the noise, the parameters, the data
  and its normalisation, the results, the plots and the terms used.

Classifiers are also scored by their online accuracy, and with ``test_fraction`` the
final model (``predict_one``: the post-processed releases,
:mod:`dpol.learners.postprocess`) by its held-out score
(:mod:`dpol.experiments.run_scores`), beside the trivial baselines. Losses, regret,
scores and plots are computed from the raw stream: they are **not** private.
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.events import compose_guarantee
from dpol.adapters.registry import LEARNERS, comparator, make_learner
from dpol.datasets import DATASETS, Stream, load_dataset, read_table
from dpol.datasets.files import NORMALIZATIONS, clip_to_bounds, split_label, table_stream
from dpol.datasets.private_bounds import parse_bound, private_bounds
from dpol.errors import NonPrivateWarning
from dpol.experiments import run_scores as scores
from dpol.experiments.account import describe_noise
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ERRATA, ExperimentResult, glossary, markdown_table
from dpol.learners import Trace

__all__ = ["load_run_stream", "run_learner"]

CURVE_POINTS = 400
#: the entries of docs/errata.md that each learner of dpol.adapters.LEARNERS decides
ERRATA_IDS = {"pqftl": "JKT-4, JKT-5", "igd": "JKT-1", "giga": "JKT-1, JKT-3",
              "ftal": "WDP-1, WDP-2, WDP-4", "frank-wolfe": "WDP-1, WDP-2, WDP-4 to WDP-7",
              "incremental-regression": "KNJ-1 to KNJ-4", "incremental-erm": "KNJ-4",
              "kernel": "NW-1 to NW-4", "pol": "JKT-6", "ridge": "JKT-4, JKT-5",
              "ridge-classifier": "JKT-4, JKT-5"}
#: rows per call of ``run`` between two progress updates (at least; ~100 updates a run)
CHUNK_ROWS = 1024


def _rows(data: object, *, task: str, target_col, normalize: str, x_bound: float,
          y_bound: float, seed: object, horizon: int | None):
    """(X, y, name, normalisation so far) of ``data`` before clipping, all rows."""
    if isinstance(data, str) and data in DATASETS and not Path(data).exists():
        if task == "classification" and DATASETS[data][1] != "classification":
            raise fail("data", "be a classification data set for a classification learner",
                       data)
        generated = DATASETS[data][2].startswith("generated")  # made with T rows
        named = load_dataset(data, seed=seed, horizon=horizon if generated else None)
        return named.X, named.y, named.name, named.normalization
    table, names = read_table(data)
    label = "standard input" if data == "-" else Path(str(data)).name
    if normalize == "standardize":
        s = table_stream(table, names, target_col=target_col, task=task,
                         normalize=normalize, x_bound=x_bound, y_bound=y_bound, name=label)
        return s.X, s.y, s.name, s.normalization
    X, y, what, note = split_label(table, names, target_col=target_col, task=task)
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


def _thin(curve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.unique(np.geomspace(1, len(curve), CURVE_POINTS).astype(int)) - 1
    return idx + 1, curve[idx]


def _run(model, X, y, u, tick: Callable[[int], None]) -> Trace:
    """``model.run`` in slices (the same releases, bit for bit: a learner's ``run`` after
    ``run`` continues its stream), so progress can be shown; their traces joined."""
    step = max(CHUNK_ROWS, -(-len(y) // 100))
    parts = []
    for start in range(0, len(y), step):
        parts.append(model.run(X[start:start + step], y[start:start + step], comparator=u))
        tick(min(start + step, len(y)))
    offsets = np.cumsum([0.0] + [p.regret[-1] for p in parts[:-1]])
    return Trace(weights=np.vstack([p.weights for p in parts]),
                 losses=np.concatenate([p.losses for p in parts]),
                 predictions=np.concatenate([p.predictions for p in parts]),
                 final_weights=parts[-1].final_weights, privacy=parts[-1].privacy,
                 n_clipped=parts[-1].n_clipped,
                 regret=np.concatenate([p.regret + o for p, o in zip(parts, offsets,
                                                                      strict=True)]))


def _summary(label: str, trace, ref: np.ndarray) -> dict:
    n = len(trace.losses)
    return {"model": label, "guarantee": str(trace.privacy),
            "average_regret": float(trace.regret[-1] / n), "final_regret": float(trace.regret[-1]),
            "mean_loss": float(trace.losses.mean()), "comparator_mean_loss": float(ref.mean())}


def _write_losses(path: Path, trace) -> Path:
    t = np.arange(1, len(trace.losses) + 1)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["t", "loss", "prediction", "cumulative_regret", "average_regret"])
        for row in zip(t, trace.losses, trace.predictions, trace.regret, trace.regret / t,
                       strict=True):
            writer.writerow([int(row[0]), *(f"{v:.10g}" for v in row[1:])])
    return path


def run_learner(learner: str, data: object, out_dir: str | Path, *, epsilon: float = 1.0,
                delta: float | None = None, horizon: int | None = None, counter: str | None = None,
                seed: int = 0, calibration: str = "tight", target_col: int | str | None = None,
                normalize: str = "clip", x_bound: float | str = 1.0,
                y_bound: float | str = 1.0, bounds_budget: float = 0.1,
                options: dict | None = None, baseline: bool = True,
                test_fraction: float | None = None,
                progress: Callable[..., None] | None = None,
                command: str | None = None) -> ExperimentResult:
    """Run ``learner`` (a name of :data:`dpol.adapters.LEARNERS`) on ``data``; write outputs.

    ``horizon`` is the length the noise is calibrated for (default: the number of rows;
    a smaller value keeps the first ``horizon`` rows). ``baseline`` also runs the
    non-private twin for comparison. ``test_fraction`` holds out a fixed random share of
    the rows (:func:`~dpol.experiments.run_scores.holdout_split`) on which the final
    released model is scored. ``progress(done, total, label)`` is called as rows are
    learned (``label``: the learner's name, then the twin's). ``command``, when given, is
    quoted in the report (how to reproduce it). The result's ``notes`` are what a user
    must not miss (heavy clipping, a horizon that is not the number of rows).

    A bound ``"auto"`` is estimated privately from the rows the learner sees
    (:func:`~dpol.datasets.private_bounds.private_bounds`) with ``bounds_budget * epsilon``;
    the learner gets the rest, and the reported guarantee composes both.

    Examples
    --------
    >>> import tempfile
    >>> res = run_learner("pqftl", "synthetic-regression", tempfile.mkdtemp(), horizon=500)
    >>> res.rows[0]["model"], round(res.rows[0]["average_regret"], 4), res.notes
    ('pqftl', 0.242, [])
    """
    if not isinstance(learner, str) or learner not in LEARNERS:
        raise fail("learner", f"be one of {', '.join(LEARNERS)}", learner)
    spec = LEARNERS[learner]
    # cheap arguments first: a refused run reads no data and writes nothing
    check_real("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True)
    if delta is not None:  # None: the learner's default, 1e-5 or 1/T if smaller
        check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    check_choice("calibration", calibration, ("tight", "paper"))
    check_choice("normalize", normalize, NORMALIZATIONS)
    x_bound, y_bound = parse_bound("x_bound", x_bound), parse_bound("y_bound", y_bound)
    auto = (x_bound == "auto", y_bound == "auto")
    if any(auto):
        _check_auto(bounds_budget, epsilon, normalize, auto[1] and spec.task != "regression")
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
    if test_fraction is not None:
        check_real("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True,
                   high_open=True)
    if counter is not None and spec.counter is None:
        raise fail("counter", f"be left unset: {learner} adds its noise without a counter",
                   counter)
    classification = spec.task == "classification"

    X_all, y_all, name, how = _rows(data, task=spec.task, target_col=target_col,
                                    normalize=normalize, x_bound=x_bound, y_bound=y_bound,
                                    seed=seed, horizon=horizon)
    n_rows = len(y_all)
    train, test = (scores.holdout_split(n_rows, test_fraction) if test_fraction is not None
                   else (np.arange(n_rows), None))
    available = len(train)
    train = train[:horizon]
    horizon = available if horizon is None else horizon
    total, estimate = epsilon, None
    if any(auto):  # from the rows the learner sees, before clipping
        estimate = private_bounds(X_all[train] if auto[0] else None,
                                  y_all[train] if auto[1] else None,
                                  epsilon=bounds_budget * epsilon)
        x_bound = estimate.x_bound if auto[0] else x_bound
        y_bound = estimate.y_bound if auto[1] else y_bound
        epsilon = (1.0 - bounds_budget) * epsilon
    X, y, clip = clip_to_bounds(X_all[train], y_all[train], x_bound, y_bound)
    stream = Stream(X, y, name, "; ".join(p for p in (how, clip.summary()) if p),
                    n_clipped=clip.clipped)
    build = dict(horizon=horizon, epsilon=epsilon, delta=delta, counter=counter,
                 x_bound=x_bound, y_bound=y_bound, calibration=calibration, options=options)
    model = make_learner(learner, X.shape[1], seed=seed, **build)
    u = comparator(model, X, y)
    ref = model._loss_value(u, X, y)

    def ticker(label: str) -> Callable[[int], None]:
        return lambda done: progress(done, len(y), label) if progress else None

    trace = _run(model, X, y, u, ticker(learner))
    fits = [(learner, model, trace)]
    if baseline:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            twin_model = make_learner(learner, X.shape[1], seed=seed,
                                      **{**build, "epsilon": math.inf, "calibration": "tight"})
        twin = _run(twin_model, X, y, u, ticker("non-private twin"))
        fits.append((f"{learner}, non-private twin", twin_model, twin))
    rows = [_summary(label, t, ref) for label, _, t in fits]
    guarantee = trace.privacy
    if estimate is not None:  # the one guarantee of everything that read the data
        guarantee = compose_guarantee([*estimate.privacy_events(), *model.privacy_events()],
                                      model.delta, target=total)
        rows[0]["guarantee"] = str(guarantee)
        rows[0]["privacy_split"] = _split_text(estimate, x_bound, y_bound, auto, epsilon)
    zero_loss = model._loss_value(np.zeros(X.shape[1]), X, y)
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
            row["accuracy"] = scores.online_accuracy(t.predictions, y)
        if X_test is not None:  # the model a user gets: predict_one after the stream
            pred = np.array([fitted.predict_one(x) for x in X_test])
            row.update(scores.heldout_scores(pred, y_test, classification))
    rows += scores.trivial_rows(y, y_all[train], y_test, classification, zero)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    rows = [{k: r.get(k, math.nan) for k in keys} for r in rows]
    notes = [n for n in (scores.clip_note(clip, trace.n_clipped, classification),
                         scores.horizon_note(horizon, len(y), available,
                                             0 if test is None else len(test)),
                         estimate and estimate.note()) if n]

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "iterates.npy", np.vstack([trace.weights, trace.final_weights]))
    losses = _write_losses(out / "losses.csv", trace)
    t = np.arange(1, len(y) + 1)
    label = f"{learner}, {guarantee}".split(", unit")[0]
    regret = {label: _thin(trace.regret / t)}
    mean_loss = {label: _thin(np.cumsum(trace.losses) / t)}
    if baseline:
        regret[f"{learner}, non-private"] = _thin(fits[1][2].regret / t)
        mean_loss[f"{learner}, non-private"] = _thin(np.cumsum(fits[1][2].losses) / t)
    mean_loss["best fixed point (hindsight)"] = _thin(np.cumsum(ref) / t)
    figures = [
        plot_curves(regret, out / "regret.png", ylabel="average regret R_t / t",
                    title=f"Average regret, {learner} on {stream.name}, T={len(y)}",
                    baselines={"predict 0": zero["average_regret"]}),
        plot_curves(mean_loss, out / "loss.png", ylabel="mean loss up to t",
                    title=f"Running mean loss, {learner} on {stream.name}"),
    ]
    info = {"learner": learner, "spec": spec, "model": model, "stream": stream,
            "n_rows": n_rows, "available": available, "horizon": horizon, "seed": seed,
            "counter": counter, "x_bound": x_bound, "y_bound": y_bound,
            "options": options or {}, "n_clipped": trace.n_clipped, "data": data,
            "command": command, "test": None if test is None else (len(test), test_fraction),
            "notes": notes, "guarantee": guarantee, "epsilon": total,
            "split": rows[0].get("privacy_split")}
    report = _report(out, info, rows, figures)
    return ExperimentResult(f"run_{learner}", rows, report, losses, figures, notes)


def _check_auto(budget: float, epsilon: float, normalize: str, classifier: bool) -> None:
    check_real("bounds_budget", budget, low=0.0, high=1.0, low_open=True, high_open=True)
    if math.isinf(epsilon):
        raise fail("epsilon", "be finite for a bound 'auto' (a share of it estimates the "
                   "bound)", epsilon)
    if normalize != "clip":
        raise fail("normalize", "be 'clip' for a bound 'auto' (standardize scales the rows "
                   "to declared bounds)", normalize)
    if classifier:
        raise fail("y_bound", "be left unset for a classification learner (labels are "
                   "+-1, never clipped)", "auto")


def _split_text(estimate, x_bound, y_bound, auto, epsilon: float) -> str:
    parts = [f"{name} <= {b:g}" for name, b, a in (("||x||", x_bound, auto[0]),
                                                    ("|y|", y_bound, auto[1])) if a]
    return (f"bounds {', '.join(parts)} estimated privately (OpenDP's private quantile "
            f"{estimate.quantile:g} of the rows, epsilon = {estimate.epsilon:g}, pure "
            f"DP); learner epsilon = {epsilon:g}; composed")


def _report(out: Path, info: dict, rows: list[dict], figures: list[Path]) -> Path:
    model, stream, spec = info["model"], info["stream"], info["spec"]
    g = info["guarantee"]
    counter = info["counter"] or spec.counter or "none (noise added without a counter)"
    scope = (f"window DP, W = {g.window}: each element is protected in the {g.window} "
             "releases from its arrival" if g.window is not None else
             "the whole sequence of released iterates")
    real = ("exactly the requested epsilon" if math.isclose(g.epsilon, info["epsilon"])
            else f"epsilon = {g.epsilon:.4g} against the requested {info['epsilon']:g}")
    calibration = ("tight (the smallest noise dp-accounting certifies for the requested "
                   "epsilon)" if model.calibration == "tight" else
                   "paper (the published formula verbatim; the guarantee above is what that "
                   f"noise really gives; {ERRATA} in the dpol sources says where and why "
                   "the published formulas fall short)")
    relation = ("replace-one (one element replaced by any other within the bounds)"
                if g.neighbouring == "replace_one" else
                "add/remove (one element replaced by zero)")
    used = len(stream.y)
    params = [{"parameter": k, "value": v} for k, v in (
        ("learner", f"{info['learner']} ({type(model).__name__}): {spec.summary}"),
        ("data", f"{info['data']} ({stream.name})"),
        ("rows used / available / in the data", f"{used} / {info['available']} / "
                                                 f"{info['n_rows']}"),
        ("dimension d", model.dim), ("horizon T (noise calibrated for)", info["horizon"]),
        ("epsilon requested", info["epsilon"]), ("delta", model.delta),
        ("bounds (R)", f"||x|| <= {info['x_bound']:g}, |y| <= {info['y_bound']:g}"),
        ("counter", counter), ("seed", info["seed"]),
        ("options", ", ".join(f"{k}={v!r}" for k, v in info["options"].items()) or "none"))]
    columns = [c for c in ("model", "guarantee", "average_regret", "final_regret",
                           "mean_loss", "comparator_mean_loss", "accuracy",
                           "heldout_accuracy", "heldout_mse", "heldout_r2") if c in rows[0]]
    heldout = []
    if info["test"] is not None:
        n_test, fraction = info["test"]
        heldout = [f"* **Held out:** {n_test} of the {info['n_rows']} rows (a fixed random "
                   f"{fraction:g}, drawn with seed {scores.SPLIT_SEED} whatever the noise "
                   "seed), never seen by the learner. The final model (its `predict_one` "
                   "after the stream: the mean of the released iterates weighted by the "
                   "step squared, a least-squares prediction clipped to the label bound; "
                   "post-processing of the releases, covered by the guarantee) scores "
                   "them; rows are clipped to the bounds as in training, labels are scored "
                   "unclipped."]
    lines = [
        f"# dpol run: {info['learner']} on {stream.name}", "",
        *([f"`{info['command']}`", ""] if info["command"] else []),
        *([f"> **Note:** {n}" for n in info["notes"]] + [""] if info["notes"] else []),
        "## Privacy guarantee", "",
        f"* **Guarantee:** ({g.epsilon:g}, {g.delta:g})-DP for {scope}; the unit protected "
        f"is {g.unit}. The noise added gives {real}." if g.is_private else
        "* **Guarantee:** none. epsilon = inf: the releases carry no noise and are not "
        "private.",
        f"* **Neighbouring streams:** {relation}.",
        *([f"* **Bounds and budget:** {info['split']} into the guarantee above "
           "(basic composition: the epsilons add)."] if info["split"] else []),
        f"* **Calibration:** {calibration}.",
        *([f"* **Errata of the paper decided here:** {ERRATA_IDS[info['learner']]} in "
           f"{ERRATA}."] if info["learner"] in ERRATA_IDS else []),
        f"* **Noise:** {describe_noise(model)}.",
        f"* **Counter:** {counter}.",
        f"* **Data within the bounds:** {stream.normalization}; {stream.n_clipped} rows "
        f"clipped while loading, {info['n_clipped']} more by the learner. The proof "
        "needs the bounds; clipping enforces them.",
        "* **What is private:** `iterates.npy` (the released models). `losses.csv`, the "
        "regret, the scores and the plots are computed from the raw stream: they are not "
        "private, keep them with the data.", "",
        "## Parameters", "", markdown_table(params), "",
        "## Results", "",
        "Regret is against the best fixed point in hindsight for the learner's own loss "
        "and constraint set (computed offline on the whole stream)."
        + (" Accuracy is online (each label predicted before it was learned)."
           if "accuracy" in columns else ""), "", *heldout, *([""] if heldout else []),
        markdown_table(rows, columns), "",
        "## Plots", "",
    ] + [f"![{f.stem}]({f.name})" for f in figures] + [
        "", "Files: `iterates.npy` (T + 1 released iterates), `losses.csv` (per-step loss, "
        "prediction, cumulative and average regret), `report.md`.", "",
        "## Terms", "", glossary([t for t, used in (
            ("replace-one", True), ("add/remove", True), ("R (the bounds)", True),
            ("tight calibration", True), ("paper calibration", True),
            ("window DP", g.window is not None), ("average regret", True),
            ("non-private twin", len(rows) > 1 and "twin" in rows[1]["model"]),
            ("trivial baselines", True), ("online accuracy", "accuracy" in columns),
            ("held-out score", bool(heldout))) if used]), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path
