"""Regret growth of WDP-COCOP and WDP-COCOL under window DP (WDP Theorems 3-4 and 6-7).

WDP has no experiments; its theorems claim O(log T) regret for a fixed window. This
measures regret at T = 2^10 .. 2^16 on one strongly convex stream, fits
R(T) = a + b ln T and the log-log slope of R against T (log growth: slope -> 0;
sqrt(T) growth: 0.5), and reports both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dpol.evaluation import best_fixed_point
from dpol.experiments.plots import plot_curves
from dpol.experiments.report import ExperimentResult, markdown_table, write_csv, write_markdown
from dpol.experiments.sweeps.runner import run_sweep
from dpol.learners import PrivateFTAL, PrivateOnlineFrankWolfe
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import L2Ball, Simplex

__all__ = ["fit_growth", "wdp_regret_growth"]


def fit_growth(horizons: np.ndarray, regret: np.ndarray) -> dict:
    """Least-squares fits of R(T) = a + b ln T and ln R = c + s ln T.

    Examples
    --------
    >>> T = 2.0 ** np.arange(10, 17)
    >>> fit = fit_growth(T, 3 + 2 * np.log(T))
    >>> round(fit["log_coef"], 6), round(fit["log_intercept"], 6)
    (2.0, 3.0)
    """
    ln_t = np.log(horizons)
    b, a = np.polyfit(ln_t, regret, 1)
    resid = regret - (a + b * ln_t)
    r2 = 1.0 - float(resid @ resid) / float(((regret - regret.mean()) ** 2).sum())
    slope = float(np.polyfit(ln_t, np.log(np.maximum(regret, 1e-300)), 1)[0])
    return {"log_intercept": float(a), "log_coef": float(b), "log_r2": r2,
            "loglog_slope": slope}


def _stream(horizon: int, dim: int, seed: int, simplex: bool):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(horizon, dim))
    if simplex:
        X = np.abs(X)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    truth = rng.dirichlet(np.ones(dim)) if simplex else rng.normal(size=dim) / math.sqrt(dim)
    y = np.clip(X @ truth + 0.05 * rng.normal(size=horizon), -1.0, 1.0)
    return X, y


def _task(algorithm, horizon, dim, window, epsilon, delta, mu, seed):
    simplex = algorithm == "WDP-COCOL"
    X, y = _stream(horizon, dim, seed, simplex)
    loss = Regularized(SquaredLoss(), mu)
    domain = Simplex(dim) if simplex else L2Ball(dim)
    cls = PrivateOnlineFrankWolfe if simplex else PrivateFTAL
    learner = cls(dim, loss=loss, domain=domain, horizon=horizon, epsilon=epsilon,
                  delta=delta, window=window if math.isfinite(epsilon) else None, seed=seed)
    u = best_fixed_point(loss, X, y, domain)
    trace = learner.run(X, y, comparator=u)
    return {"algorithm": algorithm, "T": horizon, "epsilon": epsilon, "seed": seed,
            "regret": float(trace.regret[-1])}


def wdp_regret_growth(out_dir: str | Path, *, exponents=range(10, 17), dim: int = 10,
                      window: int = 64, epsilons=(1.0, math.inf), delta: float = 1e-5,
                      mu: float = 1.0, seeds: int = 3, workers: int = 1,
                      progress: Callable | None = None) -> ExperimentResult:
    """Regret of WDP-COCOP (L2 ball) and WDP-COCOL (simplex) against T, with fits.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = wdp_regret_growth(tmp, exponents=(4, 6), dim=2, window=4, seeds=1)
    ...     print(res.report.name, res.csv.name, res.figures[0].name)
    wdp_regret_growth.md wdp_regret_growth.csv wdp_regret_growth.png
    >>> for r in res.rows:  # regret at T = 2^4 and 2^6
    ...     print(r["algorithm"], r["epsilon"], r["window"], f"{r['R(2^4)']:.3g}",
    ...           f"{r['R(2^6)']:.3g}")
    WDP-COCOP 1.0 4 11 48.9
    WDP-COCOP inf none 0.113 0.203
    WDP-COCOL 1.0 4 0.888 2.19
    WDP-COCOL inf none 2.38 4.45
    >>> list(res.rows[0])[-5:]  # the fits of fit_growth
    ['ratio_last_first', 'log_intercept', 'log_coef', 'log_r2', 'loglog_slope']
    """
    out_dir = Path(out_dir)
    horizons = [2**k for k in exponents]
    tasks = [dict(algorithm=a, horizon=T, dim=dim, window=window, epsilon=e, delta=delta,
                  mu=mu, seed=s) for a in ("WDP-COCOP", "WDP-COCOL") for e in epsilons
             for T in horizons for s in range(seeds)]
    results = run_sweep(_task, tasks, workers=workers, progress=progress)
    rows, curves = [], {}
    for a in ("WDP-COCOP", "WDP-COCOL"):
        for e in epsilons:
            mean = np.array([np.mean([r["regret"] for r in results if r["algorithm"] == a
                                      and r["epsilon"] == e and r["T"] == T])
                             for T in horizons])
            fit = fit_growth(np.array(horizons, float), mean)
            rows.append({"algorithm": a, "epsilon": e, "window": window if math.isfinite(e)
                         else "none", **{f"R(2^{k})": float(v) for k, v in zip(
                             exponents, mean, strict=True)},
                         "ratio_last_first": float(mean[-1] / mean[0]), **fit})
            curves[f"{a} eps={e:g}"] = (np.array(horizons), mean)
    csv_path = write_csv(rows, out_dir / "wdp_regret_growth.csv")
    fig = plot_curves(curves, out_dir / "wdp_regret_growth.png", ylabel="regret R(T)",
                      title=f"Regret vs T, d={dim}, window W={window}, delta={delta:g}, "
                            f"mean of {seeds} seeds", logy=True)
    lines = [
        "# Regret growth of WDP-COCOP and WDP-COCOL", "",
        f"Squared loss + {mu:g}/2 ||w||^2 (strongly convex), d = {dim}, rows at norm 1, "
        f"window W = {window} (private runs), delta = {delta:g}, replace-one, tight "
        "calibration (window tree, Gaussian). COCOP projects on the unit L2 ball; COCOL "
        "runs on the simplex with the local linear oracle and the constants re-derived in "
        "docs/errata.md, WDP-6. "
        "Regret is against the best fixed point of the whole stream in the set.", "",
        markdown_table(rows), "",
        "log_coef and log_r2 fit R(T) = a + b ln T; loglog_slope fits ln R against ln T "
        "(0 for log growth, 0.5 for sqrt(T)).", "",
        "COCOL's private runs can show less regret than the non-private one at small T. "
        "This is not the noise helping. With mu = 1 the comparator sits at the simplex's "
        "barycentre, and noise-dominated oracle calls pick near-uniform random vertices, "
        "whose running average lands there. The noise-free run starts at a vertex "
        "(docs/errata.md, WDP-7) and needs its first few thousand steps to reach the "
        "barycentre. "
        "Measured at d = 10, W = 64, seed 0, regret at epsilon = 1 and inf: 32.6 and 58.6 "
        "at T = 2^10, 71.6 and 66.2 at T = 2^14. At T = 2^14 the distance ||w_T - u|| is "
        "0.047 and 0.008. A larger oracle radius does not change the noise-free regret.",
        "", f"![growth]({fig.name})", ""]
    report = out_dir / "wdp_regret_growth.md"
    write_markdown(report, lines)
    return ExperimentResult("wdp_regret_growth", rows, report, csv_path, [fig])
