"""Summaries over seeds and the utility targets at epsilon = 1, for ``benchmarks/utility.py``.

Scores are accuracy (classification) and MSE in the label's units (regression); a loss
is 1 - accuracy or the MSE, so "no worse" is a loss at most the other's. The targets
concern the default learner of each task (``OnlineClassifier()`` / ``OnlineRegressor()``):

* **T1**: on every data set, its prequential loss and its final model's held-out loss
  are at most the trivial baseline's, in the mean over seeds and in every seed;
* **T2**: on every data set of at least 5,000 rows, it closes at least half of the gap
  from the trivial baseline to its non-private twin (epsilon = inf), i.e.
  (L_trivial - L) / (L_trivial - L_twin) >= 1/2 on the seed means, prequential and
  held out (not applicable where the twin is no better than the trivial baseline);
* **T3**: its final model's mean held-out loss is at most diffprivlib's at the same
  epsilon on at least half of the data sets (the JSON also compares the medians over
  seeds: diffprivlib's LinearRegression fails badly in some seeds, which drags its mean).
"""

from __future__ import annotations

import math

import numpy as np

TARGET_EPSILON = "1"
LARGE = 5_000
PARTS = ("prequential", "held_out")


def eps_key(epsilon: float | None) -> str:
    """'0.1', '1', '10', 'inf' for the twin, '-' for methods without epsilon."""
    if epsilon is None:
        return "-"
    return "inf" if math.isinf(epsilon) else f"{epsilon:g}"


def _stats(values: list[float]) -> dict[str, float]:
    v = np.asarray(values, dtype=float)
    return {"mean": float(v.mean()), "median": float(np.median(v)), "min": float(v.min()),
            "max": float(v.max()), "n": int(v.size)}


def summarise(records: list[dict], info: dict) -> dict:
    """summary[data set][method][epsilon key] = {part: {metric: mean/min/max/n}, ...}."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        if r["kind"] == "adapter":
            continue
        eps = math.inf if r["kind"] == "twin" else r.get("epsilon")
        groups.setdefault((r["dataset"], r["method"], eps_key(eps)), []).append(r)
    summary: dict = {name: {} for name in info}
    for (name, method, key), rows in groups.items():
        entry: dict = {"kind": rows[0]["kind"] if rows[0]["kind"] != "twin" else "dpol"}
        for part in (*PARTS, "held_out_raw"):
            if rows[0].get(part) is None:
                entry[part] = None
                continue
            entry[part] = {m: _stats([r[part][m] for r in rows]) for m in rows[0][part]}
        if "n_clipped" in rows[0]:
            entry["n_clipped"] = _stats([r["n_clipped"] for r in rows])
            entry["path"] = sorted({r["path"] for r in rows})
            entry["seconds"] = _stats([r["seconds"] for r in rows])
            entry["privacy"] = sorted({r["privacy"] for r in rows})
            entry["warnings"] = sorted({w for r in rows for w in r["warnings"]})
        summary[name].setdefault(method, {})[key] = entry
    adapters = {r["dataset"]: {k: r[k] for k in ("method", "max_abs_difference", "agrees")}
                for r in records if r["kind"] == "adapter"}
    for name, check in adapters.items():
        summary[name]["adapter_check"] = check
    return summary


def metric(task: str) -> str:
    return "accuracy" if task == "classification" else "mse"


def losses(entry: dict | None, part: str, task: str, centre: str = "mean"
           ) -> tuple[float, float] | None:
    """(mean or median loss, worst seed's loss) of a summary entry, or None."""
    if entry is None or entry.get(part) is None:
        return None
    s = entry[part][metric(task)]
    if task == "classification":
        return 1.0 - s[centre], 1.0 - s["min"]
    return s[centre], s["max"]


def _closure(trivial: float, private: float, twin: float) -> float | None:
    gap = trivial - twin
    return None if gap <= 0 else (trivial - private) / gap


def targets(summary: dict, info: dict, has_diffprivlib: bool) -> dict:
    """Each target per data set (pass / fail / n/a with its figures) and overall."""
    per, t3_wins, t3_median_wins, t3_counted = {}, 0, 0, 0
    for name, methods in summary.items():
        task, default = info[name]["task"], info[name]["default"]
        learner = methods.get(default, {})
        private = learner.get(TARGET_EPSILON)
        twin = learner.get("inf")
        trivial = methods.get("trivial", {}).get("-")
        if private is None or trivial is None:
            per[name] = {"measured": False}
            continue
        row: dict = {"measured": True, "learner": default}
        for part in PARTS:
            mine, worst = losses(private, part, task)
            base = losses(trivial, part, task)[0]
            row[f"T1_{part}"] = {"pass": bool(mine <= base and worst <= base),
                                 "loss_mean": mine, "loss_worst_seed": worst,
                                 "trivial_loss": base,
                                 "twin_loss": (losses(twin, part, task) or [None])[0]}
        if info[name]["rows"] >= LARGE and twin is not None:
            closures = {part: _closure(losses(trivial, part, task)[0],
                                       losses(private, part, task)[0],
                                       losses(twin, part, task)[0]) for part in PARTS}
            applicable = [c for c in closures.values() if c is not None]
            row["T2"] = {"closure": closures,
                         "pass": None if not applicable else all(c >= 0.5 for c in applicable)}
        else:
            row["T2"] = {"closure": None, "pass": None}
        dpl = methods.get("diffprivlib", {}).get(TARGET_EPSILON)
        if has_diffprivlib and dpl is not None:
            mine, theirs = losses(private, "held_out", task)[0], losses(dpl, "held_out",
                                                                          task)[0]
            medians = [losses(e, "held_out", task, "median")[0] for e in (private, dpl)]
            row["T3"] = {"pass": bool(mine <= theirs), "loss": mine, "diffprivlib_loss": theirs,
                         "pass_on_medians": bool(medians[0] <= medians[1]),
                         "median_loss": medians[0], "diffprivlib_median_loss": medians[1]}
            t3_counted += 1
            t3_wins += int(mine <= theirs)
            t3_median_wins += int(medians[0] <= medians[1])
        else:
            row["T3"] = {"pass": None}
        per[name] = row
    measured = [r for r in per.values() if r["measured"]]
    t1 = all(r[f"T1_{p}"]["pass"] for r in measured for p in PARTS) if measured else None
    t2_rows = [r["T2"]["pass"] for r in measured if r["T2"]["pass"] is not None]
    overall = {
        "T1": t1,
        "T2": all(t2_rows) if t2_rows else None,
        "T3": (t3_wins >= t3_counted / 2) if t3_counted else None,
        "T3_count": f"{t3_wins} of {t3_counted}",
        "T3_on_medians": (t3_median_wins >= t3_counted / 2) if t3_counted else None,
        "T3_count_on_medians": f"{t3_median_wins} of {t3_counted}",
        "not_measured": sorted(n for n, r in per.items() if not r["measured"]),
    }
    return {"epsilon": 1.0, "per_dataset": per, "overall": overall}
