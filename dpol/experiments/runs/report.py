"""The report of ``dpol run`` (``report.md``): guarantee, parameters, results, plots, terms."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from dpol.datasets.private_scaling import PrivateScaling
from dpol.experiments.account import describe_noise
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ERRATA, glossary, markdown_table
from dpol.experiments.runs import scores
from dpol.experiments.runs.output import CHECKPOINT_SUFFIX, RUN_FILE, write_run_file
from dpol.experiments.runs.request import interval_text
from dpol.learners import PrivateKernelRegression, PrivateOfflineLearner
from dpol.learners._base import OnlineLearner
from dpol.learners._wrapper import LearnerWrapper, innermost
from dpol.learners.postprocess import label_bound
from dpol.learners.random_features import WithRandomFeatures

__all__ = ["ERRATA_IDS", "final_model_text", "prediction_heads", "split_text",
           "write_losses", "write_plots", "write_report"]

#: points of a plotted curve (log-spaced)
CURVE_POINTS = 400

#: the entries of docs/errata.md that each learner of dpol.adapters.LEARNERS decides
ERRATA_IDS = {"pqftl": "JKT-4, JKT-5", "igd": "JKT-1", "giga": "JKT-1, JKT-3",
              "ftal": "WDP-1, WDP-2, WDP-4",
              "online_frank_wolfe": "WDP-1, WDP-2, WDP-4 to WDP-7",
              "incremental_regression": "KNJ-1 to KNJ-4", "incremental_erm": "KNJ-4",
              "kernel": "NW-1 to NW-4", "pol": "JKT-6", "ridge": "JKT-4, JKT-5",
              "ridge_classifier": "JKT-4, JKT-5", "ridge_classifier_rff": "JKT-4, JKT-5"}


#: what a reader reproducing a run with a private estimate must know
_UNSEEDED = ("; OpenDP draws from the operating system's randomness, so --seed does not "
             "reproduce the estimate (--resume reads it back from the checkpoint)")


#: how the report says where the noise came from, by whether it was seeded
_NOISE_SOURCE = {
    False: "fresh operating-system entropy (128 bits), recorded nowhere (but in the "
           "run's own checkpoints, deleted when it finished): nobody can replay it.",
    True: "a seed the user gave (--seed): the releases are a fixed function of the data "
          "and the seed, so the guarantee holds only against whoever does not know the "
          "seed, and only for a seed as hard to guess as a key (a small one like 42 is "
          "found by trying seeds). Publishing the seed with these outputs voids it: anyone "
          "could recompute the noise and subtract it.",
}


def split_text(estimate, x_bound, y_bound, auto, epsilon: float) -> str:
    """How the budget was split between the private estimate and the learner."""
    if isinstance(estimate, PrivateScaling):
        label = "" if estimate.y_scale is None else (
            f"; label (y - {estimate.y_center:.4g}) / {estimate.y_scale:.4g}, |y| <= "
            f"{y_bound:g}")
        return (f"features scaled privately (each feature's 10% / 90% quantiles onto "
                f"[-1, 1]), ||x|| <= {x_bound:g} after scaling{label}: {len(estimate.epsilons)}"
                f" releases of OpenDP's private quantile, epsilon = {estimate.epsilon:g} in "
                f"all, pure DP; learner epsilon = {epsilon:g}; composed{_UNSEEDED}")
    parts = [f"{name} <= {b:g}" for name, b, a in (("||x||", x_bound, auto[0]),
                                                    ("|y|", y_bound, auto[1])) if a]
    return (f"bounds {', '.join(parts)} estimated privately (OpenDP's private quantile "
            f"{estimate.quantile:g} of the rows, epsilon = {estimate.epsilon:g}, pure "
            f"DP); learner epsilon = {epsilon:g}; composed{_UNSEEDED}")


def _model_text(model: object) -> str:
    """The learner's class and the features it is fed (intercept, random features)."""
    parts = []
    while isinstance(model, LearnerWrapper):
        if isinstance(model, WithRandomFeatures):
            c = model.linear_weight
            beside = f"on x (weight {c:g}) beside " if c else "on "
            parts.append(f"{beside}{model.feature_map.n_features} random Fourier features "
                         f"(bandwidth {model.bandwidth:g} x the bound on ||x||)")
        else:
            parts.append("with an intercept")
        model = model.learner
    return " ".join([type(model).__name__, *parts])


def final_model_text(model: object) -> str:
    """What ``predict_one`` predicts with after the stream, in words (the learner's
    post-processing of its releases, :mod:`dpol.learners.postprocess`).

    Examples
    --------
    >>> from dpol.adapters import make_learner
    >>> final_model_text(make_learner("igd", 2, horizon=8, epsilon=1.0))
    'the mean of the released iterates weighted by the step squared'
    >>> print(final_model_text(make_learner("pol", 2, horizon=8, epsilon=1.0)))
    its one data-dependent release, after the last row
    """
    base = innermost(model)
    how = base.postprocess
    if isinstance(base, PrivateOfflineLearner):
        return "its one data-dependent release, after the last row"
    if isinstance(base, PrivateKernelRegression) and base.mode != "random_features":
        return "its last release"
    if how == "last" or (type(base).predict_one is not OnlineLearner.predict_one
                         and not isinstance(base, PrivateKernelRegression)):
        return "the last released iterate"
    text = "the mean of the released iterates weighted by " + (
        "the inverse of their sensitivity squared" if isinstance(base, PrivateKernelRegression)
        else "the step squared")
    if how == "shrink":
        text += (", shrunk towards " + ("the intercept" if base._intercept_index is not None
                                        else "0") + " by its public noise level (James-Stein)")
    if isinstance(base, PrivateKernelRegression) or label_bound(base) is not None:
        text += ", its predictions clipped to the label bound"
    return text


def write_report(out: Path, info: dict, rows: list[dict], figures: list[Path], *,
                 out_name: str = "") -> Path:
    """Write ``out / "report.md"`` and ``run.json`` from the run's ``info``, result rows
    and figures (``out_name``: the name of the folder they are published as)."""
    g, stream = info["guarantee"], info["stream"]
    columns = [c for c in ("model", "guarantee", "average_regret", "final_regret",
                           "mean_loss", "comparator_mean_loss", "accuracy",
                           "heldout_accuracy", "heldout_mse", "heldout_r2") if c in rows[0]]
    heldout = _heldout_text(info)
    lines = [
        f"# dpol run: {info['learner']} on {stream.name}", "",
        *([f"`{info['command']}`", ""] if info["command"] else []),
        *([f"> **Note:** {n}" for n in info["notes"]] + [""] if info["notes"] else []),
        *_privacy_section(info, out_name), *_fallback_lines(rows[0]), "",
        "## Parameters", "", markdown_table(_parameters(info)), "",
        *_results_section(info, rows, columns, heldout),
        "## Plots", "",
        *[f"![{f.stem}]({f.name})" for f in figures],
        "", "Files: `iterates.npy` (T + 1 released iterates), `losses.csv` ("
        f"{info.get('losses', 'per-step loss, prediction, cumulative and average regret')}"
        f"), `report.md`, `{RUN_FILE}` (the run's id, guarantee and settings).", "",
        "## Terms", "", glossary([t for t, used in (
            ("replace-one", True), ("add/remove", True), ("R (the bounds)", True),
            ("tight calibration", True), ("paper calibration", True),
            ("window DP", g.window is not None), ("average regret", True),
            ("non-private twin", len(rows) > 1 and "twin" in rows[1]["model"]),
            ("trivial baselines", True), ("online accuracy", "accuracy" in columns),
            ("held-out score", bool(heldout))) if used]), ""]
    write_run_file(out, {"run_id": info["run_id"], "learner": info["learner"],
                         "data": str(info["data"]), "rows": len(stream.y), "guarantee": str(g),
                         "epsilon": g.epsilon, "delta": g.delta, "seeded": g.seeded,
                         "label_shift": info.get("y_centre", 0.0),
                         "command": info["command"]})
    (out / "report.md").write_text("\n".join(lines))  # out is a staging folder: whole
    return out / "report.md"


def _label_bound(info: dict) -> str:
    """|y| <= B, or a declared range: what the learner fits within it."""
    c, h = info.get("y_centre", 0.0), info["y_bound"]
    return (f"y in {interval_text(c, h)} (the learner fits y - {c:g} within "
            f"|y - {c:g}| <= {h:g}; its iterates and predictions are of y - {c:g})" if c
            else f"|y| <= {h:g}")


def _counter_text(info: dict) -> str:
    model = info["model"]
    return (info["counter"] or info["spec"].counter_for(model.calibration)
            or "none (noise added without a counter)")


def _privacy_section(info: dict, out_name: str) -> list[str]:
    """The report's "Privacy guarantee": what is protected, how, and what is not private."""
    model, stream, g = info["model"], info["stream"], info["guarantee"]
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
    return [
        "## Privacy guarantee", "",
        f"* **Guarantee:** ({g.epsilon:g}, {g.delta:g})-DP for {scope}; the unit protected "
        f"is {g.unit}. The noise added gives {real}"
        f"{', while the seed stays secret' if g.seeded else ''}." if g.is_private else
        "* **Guarantee:** none. epsilon = inf: the releases carry no noise and are not "
        "private.",
        f"* **Neighbouring streams:** {relation}.",
        f"* **Noise source:** {_NOISE_SOURCE[g.seeded]}",
        *([f"* **Bounds and budget:** {info['split']} into the guarantee above "
           "(basic composition: the epsilons add)."] if info["split"] else []),
        f"* **Calibration:** {calibration}.",
        *([f"* **Errata of the paper decided here:** {ERRATA_IDS[info['learner']]} in "
           f"{ERRATA}."] if info["learner"] in ERRATA_IDS else []),
        f"* **Noise:** {describe_noise(getattr(model, 'base', model))}.",
        f"* **Counter:** {_counter_text(info)}.",
        f"* **Data within the bounds:** {stream.normalization}; {stream.n_clipped} rows "
        f"clipped while loading, {info['n_clipped']} more by the learner. The proof "
        "needs the bounds; clipping enforces them.",
        "* **What is private:** `iterates.npy` (the released models). `losses.csv`, the "
        "regret, the scores and the plots are computed from the raw stream: they are not "
        "private, keep them with the data.",
        *([f"* **Checkpoints:** saved every {info['checkpoint_every']} rows in the folder "
           + info.get("checkpoints_in", f"`{out_name}{CHECKPOINT_SUFFIX}` beside this one")
           + " (owner-only) and deleted when "
           "the run finished. A checkpoint holds the un-noised sums and the noise "
           "generators' states, so it can remove the noise from every release: keep any "
           "copy like the raw data, never with these outputs."]
          if info.get("checkpoint_every") else [])]


def _fallback_lines(row: dict) -> list[str]:
    """The trivial fallback's share of the budget and the model it chose (none: ``[]``)."""
    if not isinstance(row.get("fallback_split"), str):
        return []
    return [f"* **Trivial fallback:** {row['fallback_split']}, inside the guarantee above. "
            f"The final model predicts with {row['predicts']}; `iterates.npy` holds the "
            "learner's releases either way."]


def _parameters(info: dict) -> list[dict]:
    """The report's "Parameters" table: learner, data, rows, horizon, budget, bounds."""
    model, stream, g = info["model"], info["stream"], info["guarantee"]
    return [{"parameter": k, "value": v} for k, v in (
        ("learner", f"{info['learner']} ({_model_text(model)}): {info['spec'].summary}"),
        ("data", f"{info['data']} ({stream.name})"),
        ("rows used / available / in the data", f"{len(stream.y)} / {info['available']} / "
                                                 f"{info['n_rows']}"),
        ("dimension d", model.dim), ("horizon T (noise calibrated for)", info["horizon"]),
        ("epsilon requested", info["epsilon"]), ("delta", model.delta),
        ("bounds (R)", f"||x|| <= {info['x_bound']:g}, {_label_bound(info)}"),
        ("counter", _counter_text(info)),
        ("noise seed", "given (not printed here: published with the releases, it would "
                       "void the guarantee)" if g.seeded else
                       "none: fresh operating-system entropy"),
        ("options", ", ".join(f"{k}={v!r}" for k, v in info["options"].items()) or "none"))]


def _heldout_text(info: dict) -> list[str]:
    """What the held-out rows are and which model scores them (none: ``[]``)."""
    if info["test"] is None:
        return []
    n_test, fraction = info["test"]
    return [f"* **Held out:** {n_test} of the {info['n_rows']} rows (a fixed random "
            f"{fraction:g}, drawn with seed {scores.SPLIT_SEED} whatever the noise "
            "seed), never seen by the learner. The final model (its `predict_one` "
            f"after the stream: {final_model_text(info['model'])}; post-processing of the "
            "releases, covered by the guarantee) scores them; rows are clipped to "
            "the bounds as in training, labels are scored unclipped."]


def _results_section(info: dict, rows: list[dict], columns: list[str],
                     heldout: list[str]) -> list[str]:
    """The report's "Results": what the scores measure, then their table."""
    return [
        "## Results", "",
        "Regret is against the best fixed point in hindsight for the learner's own loss "
        "and constraint set (computed offline on the whole stream)."
        + (" Accuracy is online (each label predicted before it was learned)."
           if "accuracy" in columns else "")
        + (" With K classes a prediction is the class of the largest of the K margins."
           if info["options"].get("outputs", 1) > 1 else ""), "", *heldout,
        *([""] if heldout else []),
        markdown_table(rows, columns), ""]


def _thin(curve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.unique(np.geomspace(1, len(curve), CURVE_POINTS).astype(int)) - 1
    return idx + 1, curve[idx]


def write_losses(path: Path, trace) -> None:
    """losses.csv: per step the loss, the prediction, the cumulative and average regret
    (K outputs: K predictions a step, ``prediction_e1`` .. ``prediction_eK``, in the
    order of the classes' one-hot rows)."""
    t = np.arange(1, len(trace.losses) + 1)
    pred = trace.predictions.reshape(len(t), -1)
    heads = prediction_heads(trace.predictions)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["t", "loss", *heads, "cumulative_regret", "average_regret"])
        for i, loss, p, c, a in zip(t, trace.losses, pred, trace.regret, trace.regret / t,
                                    strict=True):
            writer.writerow([int(i), *(f"{v:.10g}" for v in (loss, *p, c, a))])


def prediction_heads(predictions: np.ndarray) -> list[str]:
    """The prediction columns of a losses file: one, or one per class of K outputs."""
    if np.ndim(predictions) == 1:
        return ["prediction"]
    return [f"prediction_e{k + 1}" for k in range(np.shape(predictions)[1])]


def write_plots(folder: Path, learner: str, name: str, guarantee, traces: list, ref: np.ndarray,
           zero_regret: float, zero_label: str = "predict 0") -> list[Path]:
    """regret.png and loss.png: the learner beside its twin (if run) and the comparator
    (``zero_label``: the trivial prediction's, a declared label range's centre)."""
    t = np.arange(1, len(ref) + 1)
    labels = [f"{learner}, {guarantee}".split(", unit")[0], f"{learner}, non-private"]
    regret = {k: _thin(tr.regret / t) for k, tr in zip(labels, traces, strict=False)}
    mean_loss = {k: _thin(np.cumsum(tr.losses) / t) for k, tr in zip(labels, traces,
                                                                     strict=False)}
    mean_loss["best fixed point (hindsight)"] = _thin(np.cumsum(ref) / t)
    plot_curves(regret, folder / "regret.png", ylabel="average regret R_t / t",
                title=f"Average regret, {learner} on {name}, T={len(t)}",
                baselines={zero_label: zero_regret})
    plot_curves(mean_loss, folder / "loss.png", ylabel="mean loss up to t",
                title=f"Running mean loss, {learner} on {name}")
    return [folder / "regret.png", folder / "loss.png"]
