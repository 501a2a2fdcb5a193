"""``dpol sweep report``: a summary table and plots from a results store (layer L5)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from dpol.experiments.sweeps.store import ResultStore

__all__ = ["GROUP", "summarize", "sweep_plots"]

#: the configuration a summary row stands for (its seeds are averaged)
GROUP = ("dataset", "learner", "counter", "epsilon", "delta", "calibration", "options")


def _mean(values: list) -> float:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else math.nan


def summarize(rows: list[dict]) -> list[dict]:
    """One row per configuration: cells done and failed, means over the finished seeds.

    Examples
    --------
    >>> cells = [{"dataset": "d", "learner": "pqftl", "counter": None, "epsilon": 1.0,
    ...           "delta": None, "calibration": "tight", "options": {}, "status": s,
    ...           "real_epsilon": 1.0, "average_regret": r, "mean_loss": 0.5,
    ...           "accuracy": None, "seconds": 1.0, "error": e}
    ...          for s, r, e in (("done", 0.1, None), ("done", 0.3, None),
    ...                          ("failed", None, "ValueError: x"))]
    >>> row = summarize(cells)[0]
    >>> row["done"], row["failed"], round(row["average_regret"], 3), row["first_error"]
    (2, 1, 0.2, 'ValueError: x')
    """
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[tuple(str(r[k]) if k == "options" else r[k] for k in GROUP)].append(r)
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(v) for v in k)):
        cells = groups[key]
        ok = [c for c in cells if c["status"] == "done"]
        errors = [c["error"] for c in cells if c["status"] != "done"]
        row = dict(zip(GROUP, key, strict=True))
        row.update(done=len(ok), failed=len(errors),
                   real_epsilon=_mean([c["real_epsilon"] for c in ok]),
                   average_regret=_mean([c["average_regret"] for c in ok]),
                   mean_loss=_mean([c["mean_loss"] for c in ok]),
                   accuracy=_mean([c["accuracy"] for c in ok]),
                   seconds=_mean([c["seconds"] for c in ok]),
                   first_error=errors[0] if errors else "")
        out.append(row)
    return out


def sweep_plots(store: str | Path, out: str | Path) -> list[Path]:
    """Per data set, the mean average regret (+- std over seeds) against epsilon, one
    line per learner (and counter, and options); finite epsilons only. PNGs in ``out``."""
    from dpol.experiments.plots import plot_versus_epsilon

    with ResultStore(store) as s:
        rows = [r for r in s.rows() if r["status"] == "done" and math.isfinite(r["epsilon"])]
    by_set: dict[str, dict[str, dict[float, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for r in rows:
        label = " ".join(str(p) for p in (r["learner"], r["counter"] or "", r["calibration"],
                                          r["options"] or "") if p)
        by_set[r["dataset"]][label][r["epsilon"]].append(r["average_regret"])
    figures = []
    for dataset, lines in sorted(by_set.items()):
        series = {}
        for label, per_eps in sorted(lines.items()):
            eps = np.array(sorted(per_eps))
            series[label] = (eps, np.array([np.mean(per_eps[e]) for e in eps]),
                             np.array([np.std(per_eps[e]) for e in eps]))
        figures.append(plot_versus_epsilon(series, Path(out) / f"sweep_{dataset}_regret.png",
                                           title=f"Average regret on {dataset}",
                                           ylabel="average regret R_T / T"))
    return figures
