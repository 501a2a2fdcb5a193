"""``dpol run``: one learner on a table or a named data set, with regret and a report (L5).

Writes into the output folder:

* ``iterates.npy`` — every released iterate, shape (T + 1, d): row t is the model
  released before element t + 1, the last row the model after the stream. This is the
  private output.
* ``losses.csv`` — per step: the loss suffered, the cumulative and average regret against
  the best fixed point in hindsight (:func:`dpol.adapters.comparator`).
* ``regret.png``, ``loss.png`` — average regret and running mean loss on log axes, beside
  the learner's non-private twin (``epsilon=inf``).
* ``report.md`` — the guarantee, the calibration and the noise, the parameters, the data
  and its normalisation, the results and the plots.

Losses, regret and plots are computed from the raw stream: they are **not** private.
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.adapters.registry import LEARNERS, comparator, make_learner
from dpol.datasets import DATASETS, Stream, load_dataset, read_table, table_stream
from dpol.errors import NonPrivateWarning
from dpol.experiments.account import describe_noise
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ExperimentResult, markdown_table

__all__ = ["load_run_stream", "run_learner"]

CURVE_POINTS = 400


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
    if isinstance(data, str) and data in DATASETS and not Path(data).exists():
        if task == "classification" and DATASETS[data][1] != "classification":
            raise fail("data", "be a classification data set for a classification learner",
                       data)
        named = load_dataset(data, seed=seed, horizon=horizon)
        table = np.column_stack([named.X, named.y])
        stream = table_stream(table, task="regression", x_bound=x_bound, y_bound=y_bound,
                              name=named.name)
        return Stream(stream.X, stream.y, named.name,
                      f"{named.normalization}; {stream.normalization}", named.truth,
                      stream.n_clipped)
    table, names = read_table(data)
    label = "standard input" if data == "-" else Path(str(data)).name
    return table_stream(table, names, target_col=target_col, task=task, normalize=normalize,
                        x_bound=x_bound, y_bound=y_bound, name=label)


def _thin(curve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.unique(np.geomspace(1, len(curve), CURVE_POINTS).astype(int)) - 1
    return idx + 1, curve[idx]


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
                delta: float = 1e-5, horizon: int | None = None, counter: str | None = None,
                seed: int = 0, calibration: str = "tight", target_col: int | str | None = None,
                normalize: str = "clip", x_bound: float = 1.0, y_bound: float = 1.0,
                options: dict | None = None, baseline: bool = True,
                progress: Callable[[int, int], None] | None = None,
                command: str | None = None) -> ExperimentResult:
    """Run ``learner`` (a name of :data:`dpol.adapters.LEARNERS`) on ``data``; write outputs.

    ``horizon`` is the length the noise is calibrated for (default: the number of rows;
    a smaller value keeps the first ``horizon`` rows). ``baseline`` also runs the
    non-private twin for comparison. ``progress(done, total)`` is called after each stage.
    ``command``, when given, is quoted in the report (how to reproduce it).

    Examples
    --------
    >>> import tempfile
    >>> res = run_learner("pqftl", "synthetic-regression", tempfile.mkdtemp(), horizon=500)
    >>> res.rows[0]["model"], round(res.rows[0]["average_regret"], 4)
    ('pqftl', 0.242)
    """
    if not isinstance(learner, str) or learner not in LEARNERS:
        raise fail("learner", f"be one of {', '.join(LEARNERS)}", learner)
    spec = LEARNERS[learner]
    # cheap arguments first: a refused run reads no data and writes nothing
    check_real("epsilon", epsilon, low=0.0, low_open=True, allow_inf=True)
    check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    check_choice("calibration", calibration, ("tight", "paper"))
    if horizon is not None:
        check_int("horizon", horizon, low=1)
    if counter is not None and spec.counter is None:
        raise fail("counter", f"be left unset: {learner} adds its noise without a counter",
                   counter)
    stages, done = 5 if baseline else 4, 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, stages)

    stream = load_run_stream(data, task=spec.task, target_col=target_col, normalize=normalize,
                             x_bound=x_bound, y_bound=y_bound, seed=seed, horizon=horizon)
    n_rows = len(stream.y)
    horizon = n_rows if horizon is None else check_int("horizon", horizon, low=1)
    X, y = stream.X[:horizon], stream.y[:horizon]
    build = dict(horizon=horizon, epsilon=epsilon, delta=delta, counter=counter,
                 x_bound=x_bound, y_bound=y_bound, calibration=calibration, options=options)
    model = make_learner(learner, X.shape[1], seed=seed, **build)
    step()
    u = comparator(model, X, y)
    ref = model._loss_value(u, X, y)
    step()
    trace = model.run(X, y, comparator=u)
    rows = [_summary(learner, trace, ref)]
    step()
    twin = None
    if baseline:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            twin_model = make_learner(learner, X.shape[1], seed=seed,
                                      **{**build, "epsilon": math.inf, "calibration": "tight"})
        twin = twin_model.run(X, y, comparator=u)
        rows.append(_summary(f"{learner}, non-private twin", twin, ref))
        step()
    zero = model._loss_value(np.zeros(X.shape[1]), X, y)
    rows.append({"model": "predict 0 (trivial)", "guarantee": "(0, 0)-DP",
                 "average_regret": float(np.mean(zero - ref)),
                 "final_regret": float(np.sum(zero - ref)), "mean_loss": float(zero.mean()),
                 "comparator_mean_loss": float(ref.mean())})

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "iterates.npy", np.vstack([trace.weights, trace.final_weights]))
    losses = _write_losses(out / "losses.csv", trace)
    t = np.arange(1, len(y) + 1)
    label = f"{learner}, {trace.privacy}".split(", unit")[0]
    regret = {label: _thin(trace.regret / t)}
    mean_loss = {label: _thin(np.cumsum(trace.losses) / t)}
    if twin is not None:
        regret[f"{learner}, non-private"] = _thin(twin.regret / t)
        mean_loss[f"{learner}, non-private"] = _thin(np.cumsum(twin.losses) / t)
    mean_loss["best fixed point (hindsight)"] = _thin(np.cumsum(ref) / t)
    figures = [
        plot_curves(regret, out / "regret.png", ylabel="average regret R_t / t",
                    title=f"Average regret, {learner} on {stream.name}, T={len(y)}",
                    baselines={"predict 0": rows[-1]["average_regret"]}),
        plot_curves(mean_loss, out / "loss.png", ylabel="mean loss up to t",
                    title=f"Running mean loss, {learner} on {stream.name}"),
    ]
    info = {"learner": learner, "spec": spec, "model": model, "stream": stream,
            "n_rows": n_rows, "horizon": horizon, "seed": seed, "counter": counter,
            "x_bound": x_bound, "y_bound": y_bound, "options": options or {},
            "n_clipped": trace.n_clipped, "data": data, "command": command}
    report = _report(out, info, rows, figures)
    step()
    return ExperimentResult(f"run_{learner}", rows, report, losses, figures)


def _report(out: Path, info: dict, rows: list[dict], figures: list[Path]) -> Path:
    model, stream, spec = info["model"], info["stream"], info["spec"]
    g = model.privacy
    counter = info["counter"] or spec.counter or "none (noise added without a counter)"
    scope = (f"window DP, W = {g.window}: each element is protected in the {g.window} "
             "releases from its arrival" if g.window is not None else
             "the whole sequence of released iterates")
    real = ("exactly the requested epsilon" if math.isclose(g.epsilon, model.epsilon)
            else f"epsilon = {g.epsilon:.4g} against the requested {model.epsilon:g}")
    calibration = ("tight (the smallest noise dp-accounting certifies for the requested "
                   "epsilon)" if model.calibration == "tight" else
                   "paper (the published formula verbatim; the guarantee above is what that "
                   "noise really gives)")
    relation = ("replace-one (one element replaced by any other within the bounds)"
                if g.neighbouring == "replace_one" else
                "add/remove (one element replaced by zero)")
    params = [{"parameter": k, "value": v} for k, v in (
        ("learner", f"{info['learner']} ({type(model).__name__}): {spec.summary}"),
        ("data", f"{info['data']} ({stream.name})"),
        ("rows used / in the data", f"{len(stream.y[:info['horizon']])} / {info['n_rows']}"),
        ("dimension d", model.dim), ("horizon T (noise calibrated for)", info["horizon"]),
        ("epsilon requested", model.epsilon), ("delta", model.delta),
        ("bounds", f"||x|| <= {info['x_bound']:g}, |y| <= {info['y_bound']:g}"),
        ("counter", counter), ("seed", info["seed"]),
        ("options", ", ".join(f"{k}={v!r}" for k, v in info["options"].items()) or "none"))]
    lines = [
        f"# dpol run: {info['learner']} on {stream.name}", "",
        *([f"`{info['command']}`", ""] if info["command"] else []),
        "## Privacy guarantee", "",
        f"* **Guarantee:** ({g.epsilon:g}, {g.delta:g})-DP for {scope}; the unit protected "
        f"is {g.unit}. The noise added gives {real}." if g.is_private else
        "* **Guarantee:** none. epsilon = inf: the releases carry no noise and are not "
        "private.",
        f"* **Neighbouring streams:** {relation}.",
        f"* **Calibration:** {calibration}.",
        f"* **Noise:** {describe_noise(model)}.",
        f"* **Counter:** {counter}.",
        f"* **Data within the bounds:** {stream.normalization}; {stream.n_clipped} rows "
        f"clipped while loading, {info['n_clipped']} more by the learner. The proof "
        "needs the bounds; clipping enforces them.",
        "* **What is private:** `iterates.npy` (the released models). `losses.csv`, the "
        "regret and the plots are computed from the raw stream: they are not private, keep "
        "them with the data.", "",
        "## Parameters", "", markdown_table(params), "",
        "## Results", "",
        "Regret is against the best fixed point in hindsight for the learner's own loss "
        "and constraint set (computed offline on the whole stream).", "",
        markdown_table(rows, ["model", "guarantee", "average_regret", "final_regret",
                              "mean_loss", "comparator_mean_loss"]), "",
        "## Plots", "",
    ] + [f"![{f.stem}]({f.name})" for f in figures] + [
        "", "Files: `iterates.npy` (T + 1 released iterates), `losses.csv` (per-step loss, "
        "prediction, cumulative and average regret), `report.md`.", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path
