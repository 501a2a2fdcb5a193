"""Tables (console and Markdown), plot and JSON of ``benchmarks/utility.py``.

Scores shown: accuracy in % (classification) and R^2 (regression; 1 - MSE / variance of
the scored labels, so on the same rows it orders methods exactly as the MSE does). A dpol
cell is "mean [worst, best]" over the noise seeds.
"""

from __future__ import annotations

import math
from pathlib import Path

from _utility_targets import TARGET_EPSILON

WIDTH = 100
BASELINES = ("trivial", "river", "sklearn")


def _value(entry: dict | None, part: str, task: str, key: str = "mean") -> float | None:
    if entry is None or entry.get(part) is None:
        return None
    s = entry[part]["accuracy" if task == "classification" else "r2"]
    return s[key] * (100.0 if task == "classification" else 1.0)


def _num(v: float | str | None, task: str) -> str:
    if isinstance(v, str):  # a non-finite score read back from the JSON
        return v
    if v is None or math.isnan(v):
        return "-"
    if task == "classification":
        return f"{v:.1f}"
    return f"{v:.2f}" if abs(v) < 10 else (f"{v:.0f}" if abs(v) < 1000 else f"{v:.0e}")


def cell(entry: dict | None, part: str, task: str, spread: bool = True) -> str:
    """'mean [min, max]' (or the mean alone) of a summary entry."""
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


def headline_rows(result: dict, part: str, learner: bool = True) -> list[list[str]]:
    """Per data set at epsilon = 1: the default learner beside its twin and baselines
    (``learner=False``: without the column naming it)."""
    rows = []
    for name, methods in result["summary"].items():
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


def target_rows(result: dict) -> list[list[str]]:
    rows = []
    for name, t in result["targets"]["per_dataset"].items():
        if not t["measured"]:
            rows.append([name, "not measured", "", "", ""])
            continue
        clos = t["T2"]["closure"]
        if clos is None:
            gap = "n/a (< 5,000 rows)"
        elif t["T2"]["pass"] is None:
            gap = "n/a (twin <= trivial)"
        else:
            gap = _mark(t["T2"]["pass"]) + " " + " / ".join(
                "n/a" if c is None else f"{c:.2f}" for c in clos.values())
        t3 = _mark(t["T3"]["pass"])
        if t["T3"].get("pass_on_medians", t["T3"]["pass"]) != t["T3"]["pass"]:
            t3 += f" (median: {_mark(t['T3']['pass_on_medians'])})"
        rows.append([name, _mark(t["T1_prequential"]["pass"]), _mark(t["T1_held_out"]["pass"]),
                     gap, t3])
    o = result["targets"]["overall"]
    t3 = f"{_mark(o['T3'])} ({o['T3_count']})"
    if o.get("T3_on_medians") != o["T3"]:
        t3 += f"; medians {_mark(o['T3_on_medians'])} ({o['T3_count_on_medians']})"
    t1 = [all(r[f"T1_{p}"]["pass"] for r in result["targets"]["per_dataset"].values()
              if r["measured"]) for p in ("prequential", "held_out")]
    rows.append(["ALL", _mark(t1[0]), _mark(t1[1]), _mark(o["T2"]), t3])
    return rows


TARGET_HEADERS = ["data set", "T1 stream", "T1 held-out", "T2 gap closed (stream/held)",
                  "T3 >= dp-lib"]


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
    for part, title in (("held_out", "Final model, held out"), ("prequential", "Prequential")):
        _console_table(f"{title}, eps=1", headline_headers(part, False),
                       headline_rows(result, part, False))
    _console_table("Targets, eps=1", TARGET_HEADERS, target_rows(result))
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
    order = ["trivial", "river", "sklearn", info["default"],
             *[m for m in info["learners"] if m != info["default"]], "diffprivlib"]
    rows = []
    for method in [m for m in order if m in methods]:
        entry = methods[method]
        label = f"**{method}** (default)" if method == info["default"] else method
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


def plot(result: dict, path: Path) -> None:
    """Held-out score against epsilon, one panel per data set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["summary"])
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    defaults = {i["default"] for i in result["datasets"].values()}
    methods_all = sorted({m for i in result["datasets"].values() for m in i["learners"]}
                         - defaults)
    colours = {m: plt.get_cmap("tab20")(k % 20) for k, m in enumerate(methods_all)}
    methods_all += sorted(defaults)
    legend_rows = math.ceil((len(methods_all) + 5) / 4)
    height = 3.3 * rows + 0.17 * legend_rows + 0.6
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, height), squeeze=False)
    eps = result["protocol"]["epsilons"]
    eps_keys = [f"{e:g}" for e in eps]
    for ax, name in zip(axes.flat, names, strict=False):
        info, methods = result["datasets"][name], result["summary"][name]
        task = info["task"]

        def curve(entry, key="mean", task=task):
            return [_value(entry.get(k), "held_out", task, key) for k in eps_keys]

        triv = _value(methods.get("trivial", {}).get("-"), "held_out", task)
        lines = {}
        for method in info["learners"]:
            ys = curve(methods.get(method, {}))
            lines[method] = ys
        if "diffprivlib" in methods:
            lines["diffprivlib"] = curve(methods["diffprivlib"])
        flat = [v for ys in lines.values() for v in ys if v is not None]
        refs = [_value(methods.get(b, {}).get("-"), "held_out", task) for b in BASELINES]
        twin = _value(methods.get(info["default"], {}).get("inf"), "held_out", task)
        top = max([v for v in [*flat, *refs, twin] if v is not None])
        floor = triv - max(top - triv, 0.05 if task == "regression" else 5.0)
        for method, ys in lines.items():
            default = method == info["default"]
            ys = [max(v, floor) if v is not None else math.nan for v in ys]
            style = dict(ls="--", color="k", lw=1.5) if method == "diffprivlib" else \
                dict(lw=3.0 if default else 1.1, color="crimson" if default else colours[method],
                     zorder=5 if default else 2)
            ax.plot(eps, ys, marker="o", ms=3, label=method, **style)
            if default or method == "diffprivlib":
                src = methods.get(method, {})
                lo, hi = curve(src, "min"), curve(src, "max")
                ax.fill_between(eps, [max(v, floor) for v in lo], [max(v, floor) for v in hi],
                                color=style["color"], alpha=0.15)
        for value, label, st in (
                (triv, "trivial", dict(color="0.55", ls=":", lw=2.0)),
                (twin, "default's twin (eps=inf)", dict(color="k", ls="-.", lw=1.2)),
                (refs[1], "river (non-private)", dict(color="0.3", ls=(0, (6, 2)), lw=0.9)),
                (refs[2], "sklearn SGD (non-private)", dict(color="0.3", ls=(0, (1, 1)),
                                                            lw=0.9))):
            if value is not None:
                ax.axhline(value, label=label, **st)
        ax.set_xscale("log")
        ax.set_ylim(floor, top + 0.05 * (top - floor))
        ax.set_title(f"{name} (n={info['rows']:,})", fontsize=9)
        ax.set_ylabel("held-out accuracy %" if task == "classification" else "held-out R^2",
                      fontsize=8)
        ax.set_xlabel("epsilon", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=4, fontsize=7,
               frameon=False)
    fig.suptitle("Final model's held-out score against epsilon; thick line and band: the "
                 "default learner (mean, worst to best seed); values below a panel are drawn "
                 "at its floor", fontsize=9)
    fig.tight_layout(rect=(0, (0.17 * legend_rows + 0.15) / height, 1, 1 - 0.35 / height))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
