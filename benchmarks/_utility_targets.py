"""Summaries over seeds and the utility targets, per group, for ``benchmarks/utility.py``.

Scores are accuracy (classification, multiclass) and MSE in the label's units
(regression); a loss is 1 - accuracy or the MSE, so "no worse" is a loss at most the
other's. The targets concern the default learner of each task (``OnlineClassifier()`` /
``OnlineRegressor()``) and are judged separately on each group of data sets
(``_utility_data.GROUPS``: the defaults may be tuned on "tuning", never on
"evaluation"), at epsilon = 1 and at epsilon = 0.1:

* **T1**: on every data set, its prequential loss and its final model's held-out loss
  are at most the *private* trivial model's (``_utility_trivial``: the trivial model
  learned privately on the whole budget, same epsilon, ``BASELINE_SEEDS`` seeds) plus a
  tolerance, in the mean over seeds (against its mean) and in the worst of its k seeds
  (against its expected worst of k seeds; results written before it: its worst seed of
  the same k). The private trivial model's check groups, judged by the same rule, say
  how often T1 fails a method exactly as good as its baseline (``T1_false_alarms``).
  The tolerance is one standard error of the trivial model's held-out score
  (``_utility_baselines.trivial_standard_error``: sqrt(p (1 - p) / n) for accuracy,
  sd((y - c)^2) / sqrt(n) for the MSE), used for the prequential loss too. Results
  without the private trivial model (older runs) are judged against the non-private one;
  the non-private comparison is kept in every row (``beats_majority``);
* **T2** (epsilon = 1 only): on every data set of at least 5,000 rows, it closes at least
  half of the gap from the trivial baseline to its non-private twin (epsilon = inf),
  i.e. (L_trivial - L) / (L_trivial - L_twin) >= 1/2 on the seed means, prequential and
  held out (not applicable where the twin is no better than the trivial baseline);
* **T3**: its final model's mean held-out loss is at most diffprivlib's at the same
  epsilon on at least two thirds of the data sets (the JSON also compares the medians
  over seeds: diffprivlib's LinearRegression fails badly in some seeds, which drags its
  mean).

A data set whose default learner has no score (a multiclass set where the estimator
refuses K > 2 classes, or a run not made) is "not measured" and left out of the counts;
the report lists it.
"""

from __future__ import annotations

import math

import numpy as np
from _utility_data import GROUPS, group_of
from _utility_trivial import chance_as_bad, expected_worst, t1_holds

#: the epsilon of the headline tables and of T2
TARGET_EPSILON = "1"
#: the epsilons at which T1 and T3 are judged (those of them the run measured)
TARGET_EPSILONS = ("1", "0.1")
LARGE = 5_000
#: share of the data sets on which T3 asks the default to match diffprivlib
T3_SHARE = 2.0 / 3.0
PARTS = ("prequential", "held_out")


def eps_key(epsilon: float | None) -> str:
    """'0.1', '1', '10', 'inf' for the twin, '-' for methods without epsilon."""
    if epsilon is None:
        return "-"
    return "inf" if math.isinf(epsilon) else f"{epsilon:g}"


def _stats(values: list[float], k: int | None = None) -> dict[str, float]:
    """Mean, median, min, max and count; with ``k``, also the expected min and max of k
    seeds (``_utility_trivial.expected_worst``)."""
    v = np.asarray(values, dtype=float)
    out = {"mean": float(v.mean()), "median": float(np.median(v)), "min": float(v.min()),
           "max": float(v.max()), "n": int(v.size)}
    if k is not None:  # the baseline's: its seeds kept for the chance of a miss
        out.update(k=k, expected_min=-expected_worst(-v, k), expected_max=expected_worst(v, k),
                   values=sorted(float(x) for x in v))
    return out


def _entry(rows: list[dict], k: int | None = None) -> dict:
    """{part: {metric: stats}} of one method's seeds."""
    return {part: None if rows[0].get(part) is None else
            {m: _stats([r[part][m] for r in rows], k) for m in rows[0][part]}
            for part in (*PARTS, "held_out_raw")}


def summarise(records: list[dict], info: dict) -> dict:
    """summary[data set][method][epsilon key] = {part: {metric: mean/min/max/n}, ...}."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        if r["kind"] == "adapter":
            continue
        eps = math.inf if r["kind"] == "twin" else r.get("epsilon")
        groups.setdefault((r["dataset"], r["method"], eps_key(eps)), []).append(r)
    summary: dict = {name: {} for name in info}
    k = len({r["seed"] for r in records if r["kind"] == "dpol"}) or 1  # the learners' seeds
    for (name, method, key), rows in groups.items():
        entry: dict = {"kind": rows[0]["kind"] if rows[0]["kind"] != "twin" else "dpol"}
        if method == "private-trivial-check":  # groups of k seeds, judged as a learner
            rows = sorted(rows, key=lambda r: r["seed"])
            entry["groups"] = [_entry(rows[i:i + k]) for i in range(0, len(rows) - k + 1, k)]
            summary[name].setdefault(method, {})[key] = entry
            continue
        entry.update(_entry(rows, k if method == "private-trivial" else None))
        if method == "private-trivial":  # its first k seeds: the bar before the 100 seeds
            entry["first_seeds"] = _entry(sorted(rows, key=lambda r: r["seed"])[:k])
        if rows[0].get("unsupported"):
            entry["unsupported"] = rows[0]["unsupported"]
        if "n_clipped" in rows[0]:
            entry["n_clipped"] = _stats([r["n_clipped"] for r in rows])
            entry["path"] = sorted({r["path"] for r in rows})
            entry["seconds"] = _stats([r["seconds"] for r in rows])
            entry["privacy"] = sorted({r["privacy"] for r in rows})
        if "warnings" in rows[0]:  # dpol's runs and the raw-label pipelines
            entry["warnings"] = sorted({w for r in rows for w in r["warnings"]})
        summary[name].setdefault(method, {})[key] = entry
    adapters = {r["dataset"]: {k: r[k] for k in ("method", "max_abs_difference", "agrees")}
                for r in records if r["kind"] == "adapter"}
    for name, check in adapters.items():
        summary[name]["adapter_check"] = check
    return summary


def metric(task: str) -> str:
    return "mse" if task == "regression" else "accuracy"


def losses(entry: dict | None, part: str, task: str, centre: str = "mean",
           expected: bool = False) -> tuple[float, float] | None:
    """(mean or median loss, worst seed's loss) of a summary entry, or None; ``expected``:
    the expected worst of the learners' k seeds in place of the worst seed (an entry
    summarised with k: the private trivial model's)."""
    if entry is None or entry.get(part) is None:
        return None
    s = entry[part][metric(task)]
    low, high = ("expected_min", "expected_max") if expected else ("min", "max")
    if task != "regression":
        return 1.0 - s[centre], 1.0 - s[low]
    return s[centre], s[high]


def _closure(trivial: float, private: float, twin: float) -> float | None:
    gap = trivial - twin
    return None if gap <= 0 else (trivial - private) / gap


def group(info: dict, name: str) -> str:
    """The group of a data set, as the run recorded it (older results: from GROUPS)."""
    return info[name].get("group") or group_of(name)


def tolerance(trivial: dict, task: str) -> float:
    """T1's tolerance in loss units: the standard error of the trivial held-out score
    (0 for results written before it was recorded)."""
    se = (trivial.get("held_out") or {}).get(metric(task) + "_se")
    return 0.0 if se is None else float(se["mean"])


def _t1(private: dict, trivial: dict, private_trivial: dict | None, twin: dict | None,
        part: str, task: str) -> dict:
    if private.get(part) is None:  # e.g. an estimator without partial_fit on K classes
        return {"pass": None}
    mine, worst = losses(private, part, task)
    base, tol = losses(trivial, part, task)[0], tolerance(trivial, task)
    beats_majority = bool(max(mine, worst) <= base + tol)
    row = {"loss_mean": mine, "loss_worst_seed": worst, "trivial_loss": base,
           "tolerance": tol, "beats_majority": beats_majority,
           "twin_loss": (losses(twin, part, task) or [None])[0]}
    old = private_trivial is not None and "expected_min" not in (
        (private_trivial.get(part) or {}).get(metric(task)) or {})  # results before k
    found = losses(private_trivial, part, task, expected=not old)
    if found is None:
        return {**row, "pass": beats_majority, "baseline": "majority"}
    p_mean, p_worst = found
    stats = private_trivial[part][metric(task)]
    seeds = None if old else np.asarray(stats["values"])
    if seeds is not None and task != "regression":
        seeds = 1.0 - seeds  # losses
    return {**row, "pass": t1_holds(mine, worst, p_mean, p_worst, tol),
            "baseline": "private trivial", "private_trivial_loss": p_mean,
            "private_trivial_worst_seed": p_worst, "expected_worst": not old,
            # how often the baseline's own worst of k seeds is this bad: a miss with a
            # large chance is weak evidence
            "baseline_as_bad": None if seeds is None else chance_as_bad(seeds, stats["k"],
                                                                        worst)}


def _false_alarms(check: dict | None, private_trivial: dict | None, trivial: dict,
                  task: str) -> dict | None:
    """{bar: {part: [T1 passed, ...]}} of the private trivial model's check groups judged
    against its own baseline, by its expected worst ("expected") and by its first k seeds
    ("own_seeds", the bar before), or None where the run has none."""
    if not check or private_trivial is None:
        return None
    tol = tolerance(trivial, task)
    out: dict = {}
    for part in PARTS:
        bars = {"expected": losses(private_trivial, part, task, expected=True),
                "own_seeds": losses(private_trivial.get("first_seeds"), part, task)}
        for bar, base in bars.items():
            if base is not None:
                out.setdefault(bar, {})[part] = [t1_holds(*losses(g, part, task), *base, tol)
                                                 for g in check["groups"]]
    return out


def _t2(private: dict, trivial: dict, twin: dict | None, rows: int, task: str) -> dict:
    if rows < LARGE or twin is None:
        return {"closure": None, "pass": None}
    closures = {}
    for part in PARTS:
        found = [losses(e, part, task) for e in (trivial, private, twin)]
        closures[part] = None if None in found else _closure(*(f[0] for f in found))
    applicable = [c for c in closures.values() if c is not None]
    return {"closure": closures,
            "pass": None if not applicable else all(c >= 0.5 for c in applicable)}


def _targets_at(summary: dict, info: dict, names: list[str], eps: str,
                has_diffprivlib: bool) -> dict:
    """T1, T2 (at epsilon = 1) and T3 on the data sets ``names`` at epsilon ``eps``."""
    per, t3 = {}, {"wins": 0, "median_wins": 0, "counted": 0}
    for name in names:
        methods, task = summary[name], info[name]["task"]
        default = info[name]["default"]
        learner = methods.get(default, {})
        private, twin = learner.get(eps), learner.get("inf")
        trivial = methods.get("trivial", {}).get("-")
        private_trivial = methods.get("private-trivial", {}).get(eps)
        if private is None or trivial is None or private.get("held_out") is None:
            why = (f"not supported: {private['unsupported']}" if private and
                   private.get("unsupported") else "not run")
            per[name] = {"measured": False, "why": why}
            continue
        row: dict = {"measured": True, "learner": default}
        for part in PARTS:
            row[f"T1_{part}"] = _t1(private, trivial, private_trivial, twin, part, task)
        row["T1_check"] = _false_alarms(methods.get("private-trivial-check", {}).get(eps),
                                        private_trivial, trivial, task)
        row["T2"] = _t2(private, trivial, twin, info[name]["rows"], task) \
            if eps == TARGET_EPSILON else {"closure": None, "pass": None}
        dpl = methods.get("diffprivlib", {}).get(eps)
        if has_diffprivlib and dpl is not None and dpl.get("held_out") is not None:
            mine, theirs = losses(private, "held_out", task)[0], losses(dpl, "held_out",
                                                                          task)[0]
            medians = [losses(e, "held_out", task, "median")[0] for e in (private, dpl)]
            row["T3"] = {"pass": bool(mine <= theirs), "loss": mine, "diffprivlib_loss": theirs,
                         "pass_on_medians": bool(medians[0] <= medians[1]),
                         "median_loss": medians[0], "diffprivlib_median_loss": medians[1]}
            t3["counted"] += 1
            t3["wins"] += int(mine <= theirs)
            t3["median_wins"] += int(medians[0] <= medians[1])
        else:
            row["T3"] = {"pass": None}
        per[name] = row
    measured = [r for r in per.values() if r["measured"]]
    t1 = {p: [r[f"T1_{p}"]["pass"] for r in measured if r[f"T1_{p}"]["pass"] is not None]
          for p in PARTS}
    t2_rows = [r["T2"]["pass"] for r in measured if r["T2"]["pass"] is not None]
    counted = t3["counted"]
    overall = {
        "T1": all(t1["prequential"] + t1["held_out"]) if measured else None,
        "T1_prequential": all(t1["prequential"]) if t1["prequential"] else None,
        "T1_held_out": all(t1["held_out"]) if t1["held_out"] else None,
        "T2": all(t2_rows) if t2_rows else None,
        "T3": (t3["wins"] >= T3_SHARE * counted) if counted else None,
        "T3_count": f"{t3['wins']} of {counted}",
        "T3_on_medians": (t3["median_wins"] >= T3_SHARE * counted) if counted else None,
        "T3_count_on_medians": f"{t3['median_wins']} of {counted}",
        "not_measured": {n: r["why"] for n, r in per.items() if not r["measured"]},
        "T1_false_alarms": _count_alarms(measured),
    }
    return {"epsilon": float(eps), "per_dataset": per, "overall": overall}


def _count_alarms(measured: list[dict]) -> dict | None:
    """T1's misses over the check groups and cells of a group (None: not run), against
    the expected worst and against the private trivial model's own first k seeds (the
    bar before ``BASELINE_SEEDS``)."""
    out: dict = {}
    for bar in ("expected", "own_seeds"):
        cells = [passed for r in measured
                 for passed in ((r.get("T1_check") or {}).get(bar) or {}).values()]
        judged = [p for cell in cells for p in cell]
        if judged:
            out.update({"judged": len(judged), "groups": len(cells[0]),
                        "misses" if bar == "expected" else "misses_against_own_seeds":
                        judged.count(False)})
    return out or None


def targets(summary: dict, info: dict, has_diffprivlib: bool) -> dict:
    """targets["groups"][group][epsilon key] = {"per_dataset": {...}, "overall": {...}}:
    each target per data set (pass / fail / n/a with its figures) and over the group, at
    each epsilon of ``TARGET_EPSILONS`` the run measured."""
    measured = {k for name in summary for k in summary[name].get(info[name]["default"], {})}
    epsilons = [e for e in TARGET_EPSILONS if e in measured]
    out: dict = {"epsilons": epsilons, "groups": {}}
    for g in GROUPS:
        names = [n for n in summary if group(info, n) == g]
        if names:
            out["groups"][g] = {e: _targets_at(summary, info, names, e, has_diffprivlib)
                                for e in epsilons}
    return out
