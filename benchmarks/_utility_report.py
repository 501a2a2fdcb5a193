"""Tables (console and Markdown) of ``benchmarks/utility.py``, per group of data sets.

Scores shown: accuracy in % (classification, multiclass) and R^2 (regression; 1 - MSE /
variance of the scored labels, so on the same rows it orders methods exactly as the MSE
does). A dpol cell is "mean [worst, best]" over the noise seeds; "not supported" where
the estimator refused the data set (K > 2 classes).
"""

from __future__ import annotations

import math

from _utility_targets import TARGET_EPSILON, group

WIDTH = 100
BASELINES = ("trivial", "river", "sklearn")


def _value(entry: dict | None, part: str, task: str, key: str = "mean") -> float | None:
    if entry is None or entry.get(part) is None:
        return None
    s = entry[part]["r2" if task == "regression" else "accuracy"]
    return s[key] * (1.0 if task == "regression" else 100.0)


def _num(v: float | str | None, task: str) -> str:
    if isinstance(v, str):  # a non-finite score read back from the JSON
        return v
    if v is None or math.isnan(v):
        return "-"
    if task != "regression":
        return f"{v:.1f}"
    return f"{v:.2f}" if abs(v) < 10 else (f"{v:.0f}" if abs(v) < 1000 else f"{v:.0e}")


def cell(entry: dict | None, part: str, task: str, spread: bool = True) -> str:
    """'mean [min, max]' (or the mean alone) of a summary entry."""
    if entry is not None and entry.get("unsupported"):
        return "not supported"
    mean = _value(entry, part, task)
    if mean is None:
        return "-"
    lo, hi = _value(entry, part, task, "min"), _value(entry, part, task, "max")
    if not spread or lo == hi:
        return _num(mean, task)
    return f"{_num(mean, task)} [{_num(lo, task)}, {_num(hi, task)}]"


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("pass" if ok else "FAIL")


def _dpl(result: dict, methods: dict, task: str, part: str, eps: str) -> str:
    if result["diffprivlib"] is None:
        return "absent"
    return cell(methods.get("diffprivlib", {}).get(eps), part, task, spread=False)


def names_in(result: dict, group_name: str) -> list[str]:
    """The data sets of the run in one group, in the run's order."""
    return [n for n in result["summary"] if group(result["datasets"], n) == group_name]


def headline_rows(result: dict, part: str, learner: bool = True,
                  names: list[str] | None = None) -> list[list[str]]:
    """Per data set (of ``names``; all by default) at epsilon = 1: the default learner
    beside its twin and baselines (``learner=False``: without the column naming it)."""
    rows = []
    for name in names or list(result["summary"]):
        methods = result["summary"][name]
        task, default = result["datasets"][name]["task"], result["datasets"][name]["default"]
        mine = methods.get(default, {})
        row = [name, *([default] if learner else []), cell(mine.get(TARGET_EPSILON), part, task),
               cell(mine.get("inf"), part, task, spread=False),
               cell(methods.get("trivial", {}).get("-"), part, task)]
        if part == "held_out":
            row.append(_dpl(result, methods, task, part, TARGET_EPSILON))
        row += [cell(methods.get(b, {}).get("-"), part, task) for b in BASELINES[1:]]
        rows.append(row)
    return rows


def headline_headers(part: str, learner: bool = True) -> list[str]:
    head = ["data set", *(["learner"] if learner else []), "dpol eps=1", "twin", "trivial"]
    return head + (["dp-lib"] if part == "held_out" else []) + ["river", "sklearn"]


def _gap(t2: dict) -> str:
    if t2["closure"] is None:
        return "n/a (< 5,000 rows)"
    if t2["pass"] is None:
        return "n/a (twin <= trivial)"
    return _mark(t2["pass"]) + " " + " / ".join(
        "n/a" if c is None else f"{c:.2f}" for c in t2["closure"].values())


def target_rows(judged: dict, eps: str) -> list[list[str]]:
    """The targets of one group at one epsilon (``targets["groups"][group][eps]``), one
    row per data set and the group's verdict."""
    rows = []
    for name, t in judged["per_dataset"].items():
        if not t["measured"]:
            why = t.get("why", "not measured")
            rows.append([name, why.split(":")[0], "", "", ""])
            continue
        gap = _gap(t["T2"]) if eps == TARGET_EPSILON else "(eps=1 only)"
        t3 = _mark(t["T3"]["pass"])
        if t["T3"].get("pass_on_medians", t["T3"]["pass"]) != t["T3"]["pass"]:
            t3 += f" (median: {_mark(t['T3']['pass_on_medians'])})"
        rows.append([name, _mark(t["T1_prequential"]["pass"]), _mark(t["T1_held_out"]["pass"]),
                     gap, t3])
    o = judged["overall"]
    t3 = f"{_mark(o['T3'])} ({o['T3_count']})"
    if o.get("T3_on_medians") != o["T3"]:
        t3 += f"; medians {_mark(o['T3_on_medians'])} ({o['T3_count_on_medians']})"
    rows.append(["ALL", _mark(o["T1_prequential"]), _mark(o["T1_held_out"]),
                 _mark(o["T2"]) if eps == TARGET_EPSILON else "", t3])
    return rows


TARGET_HEADERS = ["data set", "T1 stream", "T1 held-out", "T2 gap closed (stream/held)",
                  "T3 >= dp-lib"]
GROUP_TITLES = {"tuning": "Tuning group (the defaults may be tuned on these)",
                "evaluation": "Evaluation group (never tuned on)"}


def _console_table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    try:
        from rich import box
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
        print(f"\n{title}")
        for r in [headers, *rows]:
            print("  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True))[:WIDTH])
        return
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=True)
    for r in rows:
        table.add_row(*r)
    Console(width=WIDTH).print(table)


def print_tables(result: dict) -> None:
    """The epsilon = 1 headline tables and the targets, within 100 columns."""
    defaults = {i["task"]: i["default"] for i in result["datasets"].values()}
    print("dpol's default learners: " + ", ".join(f"{k} {v}" for k, v in defaults.items()))
    print("scores: accuracy % (classification), R^2 (regression); dpol: mean [worst, best]")
    for g, by_eps in result["targets"]["groups"].items():
        names = names_in(result, g)
        print(f"\n== {GROUP_TITLES.get(g, g)}")
        for part, title in (("held_out", "Final model, held out"),
                            ("prequential", "Prequential")):
            _console_table(f"{title}, eps=1", headline_headers(part, False),
                           headline_rows(result, part, False, names))
        for eps, judged in by_eps.items():
            _console_table(f"Targets, {g}, eps={eps}", TARGET_HEADERS,
                           target_rows(judged, eps))
            alarms = judged["overall"].get("T1_false_alarms")
            if alarms:
                print(f"T1's false alarms (the private trivial model on {alarms['groups']} "
                      f"more seed groups): {alarms['misses']} of {alarms['judged']}; "
                      f"old bar {alarms.get('misses_against_own_seeds', 'n/a')}")
    if result["diffprivlib"] is None:
        print("diffprivlib is not installed here: its columns and T3 are skipped "
              "(pip install 'dpol[bench]')")


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def full_rows(result: dict, name: str) -> list[list[str]]:
    """Every method on one data set: held-out and prequential at each epsilon."""
    info, methods = result["datasets"][name], result["summary"][name]
    task, eps = info["task"], [f"{e:g}" for e in result["protocol"]["epsilons"]]
    order = ["trivial", "river", "sklearn", info["default"], "raw-labels",
             *[m for m in info["learners"] if m != info["default"]], "diffprivlib"]
    rows = []
    for method in [m for m in order if m in methods]:
        entry = methods[method]
        label = f"**{method}** (default)" if method == info["default"] else (
            "default on raw labels (pipeline)" if method == "raw-labels" else method)
        keys = ["-"] if "-" in entry else eps
        held = [cell(entry.get(k), "held_out", task) for k in keys]
        preq = [cell(entry.get(k), "prequential", task) for k in keys]
        if keys == ["-"]:
            held, preq = held * len(eps), preq * len(eps)
        twin = entry.get("inf")
        raw = cell(entry.get(TARGET_EPSILON), "held_out_raw", task) if keys == eps else ""
        rows.append([label, *held, cell(twin, "held_out", task, False) if twin else "",
                     raw if raw != "-" else "", *preq,
                     cell(twin, "prequential", task, False) if twin else ""])
    return rows
