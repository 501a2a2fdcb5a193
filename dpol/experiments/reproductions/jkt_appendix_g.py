"""Reproduction of JKT's Appendix G: PQFTL for online linear regression, PIGD for logistic.

Protocol where the paper is silent (docs/errata.md, JKT-7): rows scaled to ||x|| <= 1 and
|y| <= 1 (R = 1), delta = 1e-5, replace-one neighbours, the 1/2 loss convention, the
fixes of JKT-5, both calibrations, several seeds, and the trivial "predict 0"
baseline beside FTL.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol.datasets import (
    Stream,
    linear_regression_stream,
    load_covertype,
    load_fallback_classification,
    load_fallback_regression,
    load_year_prediction,
)
from dpol.evaluation import best_fixed_point
from dpol.experiments.plots import plot_curves, plot_versus_epsilon
from dpol.experiments.report import ExperimentResult, markdown_table, write_csv, write_markdown
from dpol.experiments.sweeps.runner import run_sweep
from dpol.learners import PrivateIGD, PrivateQuadraticFTL
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

__all__ = ["PAPER_EPSILONS", "logistic_regression", "synthetic_regression", "year_prediction"]

#: the epsilons of JKT Appendix G's figures
PAPER_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
CURVE_POINTS = 400


def _thin(curve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.unique(np.geomspace(1, len(curve), CURVE_POINTS).astype(int)) - 1
    return idx + 1, curve[idx]


#: PQFTL variants of the regression tables: label -> (calibration, noise ridge). The
#: noise ridge (beyond the paper: a ridge from the public noise level, AdaSSP's idea;
#: ``PrivateQuadraticFTL(noise_ridge=True)``) is what dpol's default regressor uses; the
#: "tight" and "paper" rows keep JKT's algorithm
VARIANTS = {"tight": ("tight", False), "paper": ("paper", False),
            "tight, noise ridge": ("tight", True)}


def _pqftl_task(X, y, comparator, epsilon, delta, alpha, calibration, counter, seed,
                keep_curve):
    cal, ridge = VARIANTS.get(calibration, (calibration, False))
    learner = PrivateQuadraticFTL(X.shape[1], horizon=len(y), epsilon=epsilon, delta=delta,
                                  alpha=alpha, calibration=cal, counter=counter,
                                  noise_ridge=ridge, seed=seed)
    trace = learner.run(X, y, comparator=comparator)
    avg = trace.average_regret
    return {"calibration": calibration, "epsilon": epsilon, "seed": seed,
            "avg_regret": float(avg[-1]), "real_epsilon": learner.privacy.epsilon,
            "curve": _thin(avg) if keep_curve else None}


def _regression(stream: Stream, out_dir: Path, name: str, *, epsilons, seeds, delta, alpha,
                calibrations, counter, workers, progress) -> ExperimentResult:
    X, y = stream.X, stream.y
    loss = Regularized(SquaredLoss(), alpha)
    u = best_fixed_point(loss, X, y)
    tasks = [dict(X=X, y=y, comparator=u, epsilon=eps, delta=delta, alpha=alpha,
                  calibration=cal, counter=counter, seed=seed, keep_curve=seed == 0)
             for cal in calibrations for eps in epsilons for seed in range(seeds)]
    tasks.append(dict(X=X, y=y, comparator=u, epsilon=math.inf, delta=0.0, alpha=alpha,
                      calibration="tight", counter=counter, seed=0, keep_curve=True))
    results = run_sweep(_pqftl_task, tasks, workers=workers, progress=progress)
    ftl = results.pop()
    zero = float(np.mean(loss.value(np.zeros(X.shape[1]), X, y) - loss.value(u, X, y)))
    rows = []
    for cal in calibrations:
        for eps in epsilons:
            runs = [r for r in results if r["calibration"] == cal and r["epsilon"] == eps]
            vals = np.array([r["avg_regret"] for r in runs])
            rows.append({"calibration": cal, "epsilon": eps, "mean_avg_regret": float(vals.mean()),
                         "std_avg_regret": float(vals.std()), "seeds": len(vals),
                         "real_epsilon": float(max(r["real_epsilon"] for r in runs)),
                         "warnings": ", ".join(sorted({r["warnings"] for r in runs} - {""}))})
    rows.append({"calibration": "FTL (non-private)", "epsilon": math.inf,
                 "mean_avg_regret": ftl["avg_regret"], "std_avg_regret": 0.0, "seeds": 1,
                 "real_epsilon": math.inf, "warnings": ""})
    rows.append({"calibration": "predict 0 (trivial)", "epsilon": 0.0,
                 "mean_avg_regret": zero, "std_avg_regret": 0.0, "seeds": 1,
                 "real_epsilon": 0.0, "warnings": ""})
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = write_csv(rows, out_dir / f"{name}.csv")
    shown = {min(epsilons), max(epsilons)} | ({1.0} & set(epsilons))
    curves = {f"PQFTL {r['calibration']} eps={r['epsilon']:g}": r["curve"]
              for r in results if r["curve"] is not None and r["epsilon"] in shown}
    curves["FTL (non-private)"] = ftl["curve"]
    fig_curve = plot_curves(curves, out_dir / f"{name}_regret.png",
                            title=f"Average regret, {stream.name}, T={len(y)}, delta={delta:g}",
                            ylabel="regret / t", baselines={"predict 0": zero})
    series = {}
    for cal in calibrations:
        sel = [r for r in rows if r["calibration"] == cal]
        series[f"PQFTL ({cal})"] = tuple(np.array([r[k] for r in sel]) for k in
                                         ("epsilon", "mean_avg_regret", "std_avg_regret"))
    fig_eps = plot_versus_epsilon(series, out_dir / f"{name}_epsilon.png",
                                  title=f"Final average regret vs epsilon, {stream.name}",
                                  ylabel="regret / T",
                                  baselines={"FTL": ftl["avg_regret"], "predict 0": zero})
    report = _regression_report(stream, rows, name, delta, alpha, counter, len(y), zero,
                                ftl["avg_regret"], [fig_curve, fig_eps], out_dir)
    return ExperimentResult(name, rows, report, csv_path, [fig_curve, fig_eps])


def _regression_report(stream, rows, name, delta, alpha, counter, horizon, zero, ftl,
                       figures, out_dir) -> Path:
    at_001 = {r["calibration"]: r["mean_avg_regret"] for r in rows if r["epsilon"] == 0.01}
    lines = [
        f"# JKT Appendix G.1 reproduction: {stream.name}", "",
        f"PQFTL (JKT Alg. 4) against non-private FTL, T = {horizon}, alpha = {alpha:g}, "
        f"delta = {delta:g}, replace-one neighbours, counter = {counter!r}.", "",
        f"**Data.** {stream.normalization}. R = 1 (||x|| <= 1, |y| <= 1); loss "
        "1/2 (y - <x, w>)^2 + alpha/2 ||w||^2 (the paper's Section 4 form; its appendix "
        "drops the halves). The comparator is the ridge solution over the whole stream.", "",
        "**Calibrations.** `tight`: both trees as one Gaussian mechanism calibrated exactly by "
        "dp-accounting (docs/errata.md, JKT-4). `paper`: JKT's PrivateSum sigma per tree at "
        "(eps/2, delta/2), log2 reading, R for the u tree as printed (JKT-4). Both with "
        "the free fixes of JKT-5 (symmetrised noise, PSD projection, norm clip).", "",
        "`tight, noise ridge`: tight, with PQFTL's noise ridge (beyond the paper: a ridge "
        "sized from the public noise level, so that the noisy system dominates the exact "
        "one; post-processing, no privacy cost), as in dpol's default regressor.", "",
        markdown_table(rows, ["calibration", "epsilon", "mean_avg_regret", "std_avg_regret",
                              "seeds", "real_epsilon", "warnings"]), "",
        against_trivial(rows, zero), "",
        f"**Against the paper.** JKT report average regret of order 1e-2 at epsilon = 0.01. "
        f"We measure {', '.join(f'{k}: {v:.3g}' for k, v in at_001.items()) or 'n/a'} at "
        f"epsilon = 0.01; FTL reaches {ftl:.3g} and always predicting 0 already gives "
        f"{zero:.3g}. With this normalisation and sound noise the published 1e-2 at "
        "epsilon = 0.01 is out of reach (an independent implementation of this protocol "
        "measured 0.53 / 0.18; docs/errata.md, JKT-7); the paper does not state delta, R or "
        "its normalisation, so its figure cannot be checked.", "",
    ] + [f"![{f.stem}]({f.name})" for f in figures] + [""]
    path = out_dir / f"{name}.md"
    write_markdown(path, lines)
    return path


def against_trivial(rows: list[dict], zero: float) -> str:
    """Which private rows beat always predicting 0, in words."""
    won: dict[str, list[str]] = {}
    for r in rows:
        if 0 < r["epsilon"] < math.inf and r["mean_avg_regret"] < zero:
            won.setdefault(r["calibration"], []).append(f"{r['epsilon']:g}")
    beat = [f"{label} at epsilon {', '.join(eps)}" for label, eps in won.items()]
    return (f"Against predicting 0 (average regret {zero:.3g}): "
            + (f"beaten by {'; '.join(beat)}; the other private rows lose to it (at this T "
               "the noise outweighs what is learned)." if beat else
               "no private row beats it at this T: the noise outweighs what is learned."))


def synthetic_regression(out_dir: str | Path, *, horizon: int = 100_000, dim: int = 10,
                         epsilons=PAPER_EPSILONS, seeds: int = 5, delta: float = 1e-5,
                         alpha: float = 1.0, calibrations=tuple(VARIANTS),
                         counter: str = "tree", workers: int = 1,
                         progress: Callable | None = None) -> ExperimentResult:
    """JKT Appendix G.1 (a): synthetic online linear regression, PQFTL vs FTL.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = synthetic_regression(tmp, horizon=64, dim=2, epsilons=(1.0,), seeds=1)
    ...     print(*sorted(os.listdir(tmp)), sep="\\n")
    jkt_synthetic_regression.csv
    jkt_synthetic_regression.md
    jkt_synthetic_regression_epsilon.png
    jkt_synthetic_regression_regret.png
    >>> for r in res.rows:  # the paper's noise over-noises here: real epsilon 0.508 < 1
    ...     print(r["calibration"], r["epsilon"], round(r["real_epsilon"], 3))
    tight 1.0 1.0
    paper 1.0 0.508
    tight, noise ridge 1.0 1.0
    FTL (non-private) inf inf
    predict 0 (trivial) 0.0 0.0
    >>> reg = {r["calibration"]: r["mean_avg_regret"] for r in res.rows}
    >>> reg["FTL (non-private)"] < reg["predict 0 (trivial)"] < reg["tight"] < reg["paper"]
    True
    """
    stream = linear_regression_stream(horizon, dim, seed=2012)
    return _regression(stream, Path(out_dir), "jkt_synthetic_regression", epsilons=epsilons,
                       seeds=seeds, delta=delta, alpha=alpha, calibrations=calibrations,
                       counter=counter, workers=workers, progress=progress)


def year_prediction(out_dir: str | Path, path: str | Path | None = None, *,
                    epsilons=PAPER_EPSILONS, seeds: int = 5, delta: float = 1e-5,
                    alpha: float = 1.0, workers: int = 1, progress: Callable | None = None,
                    limit: int | None = None) -> ExperimentResult:
    """JKT Appendix G.1 (b): YearPredictionMSD from a local copy, else scikit-learn's diabetes.

    Examples
    --------
    Without ``path``: the 442 rows of scikit-learn's diabetes data, too few for the noise.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = year_prediction(tmp, epsilons=(1.0,), seeds=1)
    ...     print(res.report.read_text().splitlines()[0])
    # JKT Appendix G.1 reproduction: diabetes (scikit-learn)
    >>> reg = {r["calibration"]: r["mean_avg_regret"] for r in res.rows}
    >>> sorted(reg)
    ['FTL (non-private)', 'paper', 'predict 0 (trivial)', 'tight', 'tight, noise ridge']
    >>> reg["FTL (non-private)"] < reg["predict 0 (trivial)"] < reg["tight, noise ridge"]
    True
    >>> reg["tight, noise ridge"] < reg["tight"]
    True
    """
    stream = load_year_prediction(path, limit) if path else load_fallback_regression()
    return _regression(stream, Path(out_dir), "jkt_year_prediction", epsilons=epsilons,
                       seeds=seeds, delta=delta, alpha=alpha,
                       calibrations=tuple(VARIANTS), counter="tree", workers=workers,
                       progress=progress)


def _igd_task(X, y, Xh, yh, epsilon, delta, alpha, seed):
    radius = math.sqrt(2.0 * math.log(2.0) / alpha)  # holds the regularised optimum
    learner = PrivateIGD(X.shape[1], loss=Regularized(LogisticLoss(), alpha),
                         domain=L2Ball(X.shape[1], radius), horizon=len(y), epsilon=epsilon,
                         delta=delta, seed=seed)
    trace = learner.run(X, y)
    online = float(np.mean(np.where(trace.predictions >= 0, 1.0, -1.0) == y))
    held = float(np.mean(np.where(Xh @ trace.final_weights >= 0, 1.0, -1.0) == yh))
    # the mean of all released iterates is post-processing (free) and averages the noise
    mean_w = np.vstack([trace.weights[1:], trace.final_weights]).mean(axis=0)
    held_avg = float(np.mean(np.where(Xh @ mean_w >= 0, 1.0, -1.0) == yh))
    return {"alpha": alpha, "epsilon": epsilon, "seed": seed, "online_accuracy": online,
            "heldout_accuracy": held, "heldout_accuracy_averaged": held_avg}


def logistic_regression(out_dir: str | Path, path: str | Path | None = None, *,
                        epsilons=PAPER_EPSILONS, seeds: int = 5, delta: float = 1e-5,
                        alphas=(1e-3, 1e-2), workers: int = 1, limit: int | None = None,
                        progress: Callable | None = None) -> ExperimentResult:
    """JKT Appendix G.2: PIGD vs IGD accuracy against epsilon (Covertype or breast cancer).

    Examples
    --------
    Without ``path``: scikit-learn's breast cancer data, 20% held out.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = logistic_regression(tmp, epsilons=(1.0,), seeds=1, alphas=(0.01,))
    ...     print(res.csv.name, [f.name for f in res.figures])
    jkt_logistic.csv ['jkt_logistic_accuracy.png']
    >>> for r in res.rows:  # epsilon, held-out accuracy: final iterate, mean of releases
    ...     print(r["epsilon"], round(r["heldout_accuracy_mean"], 2),
    ...           round(r["heldout_accuracy_averaged_mean"], 2))
    1.0 0.24 0.82
    inf 0.96 0.96
    """
    out_dir = Path(out_dir)
    stream = load_covertype(path, limit=limit) if path else load_fallback_classification()
    train, held = stream.split(0.2, seed=0)
    tasks = [dict(X=train.X, y=train.y, Xh=held.X, yh=held.y, epsilon=eps, delta=delta,
                  alpha=a, seed=s)
             for a in alphas for eps in (*epsilons, math.inf) for s in range(seeds)]
    results = run_sweep(_igd_task, tasks, workers=workers, progress=progress)
    rows = []
    for a in alphas:
        for eps in (*epsilons, math.inf):
            sel = [r for r in results if r["alpha"] == a and r["epsilon"] == eps]
            rows.append({"alpha": a, "epsilon": eps, **{
                f"{k}_{stat}": float(getattr(np, stat)([r[k] for r in sel]))
                for k in ("online_accuracy", "heldout_accuracy", "heldout_accuracy_averaged")
                for stat in ("mean", "std")}})
    csv_path = write_csv(rows, out_dir / "jkt_logistic.csv")
    majority = float(max(np.mean(held.y == 1), np.mean(held.y == -1)))
    series = {}
    for a in alphas:
        sel = [r for r in rows if r["alpha"] == a and math.isfinite(r["epsilon"])]
        for key, what in (("heldout_accuracy", "final iterate"),
                          ("heldout_accuracy_averaged", "averaged releases")):
            series[f"PIGD alpha={a:g}, {what}"] = (
                np.array([r["epsilon"] for r in sel]),
                np.array([r[f"{key}_mean"] for r in sel]),
                np.array([r[f"{key}_std"] for r in sel]))
    igd = {f"IGD alpha={r['alpha']:g}": r["heldout_accuracy_mean"] for r in rows
           if math.isinf(r["epsilon"])}
    fig = plot_versus_epsilon(series, out_dir / "jkt_logistic_accuracy.png",
                              title=f"Held-out accuracy vs epsilon, {stream.name}",
                              ylabel="accuracy", logy=False,
                              baselines={**igd, "majority class": majority})
    lines = [
        f"# JKT Appendix G.2 reproduction: {stream.name}", "",
        f"PIGD (JKT Alg. 2) vs non-private IGD on regularised logistic regression, "
        f"{len(train.y)} streamed rows, 20% held out ({len(held.y)} rows), delta = {delta:g}, "
        "tight calibration (exact Gaussian DP over all releases), replace-one.", "",
        f"**Data.** {stream.normalization}. C is the ball of radius sqrt(2 ln 2 / alpha), "
        "which holds the regularised optimum (docs/errata.md, JKT-7). Online accuracy is "
        "sign(<x_t, w_t>) before the update; held-out accuracy is that of the final iterate and "
        "of the mean of all released iterates (post-processing, no privacy cost).",
        "", markdown_table(rows), "",
        "**Against the paper.** Its Figure 2(c) is lost from our copy; the caption says PIGD "
        "learns a meaningful classifier for high epsilon. On small fallback data the noise "
        "needed for privacy (lam = 2L/alpha per step) dominates until epsilon is large.", "",
        f"![accuracy]({fig.name})", ""]
    report = out_dir / "jkt_logistic.md"
    write_markdown(report, lines)
    return ExperimentResult("jkt_logistic", rows, report, csv_path, [fig])
