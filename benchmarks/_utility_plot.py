"""The plot of ``benchmarks/utility.py``: held-out score against epsilon per data set."""

from __future__ import annotations

import math
from pathlib import Path

from _utility_report import BASELINES, _value


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
        top = max([v for v in [*flat, *refs, twin, triv] if v is not None])
        floor = triv - max(top - triv, 0.05 if task == "regression" else 5.0)
        if math.isnan(floor) or math.isnan(top):  # no finite score to draw: an empty panel
            floor, top = 0.0, 1.0
        for method, ys in lines.items():
            if all(v is None for v in ys):  # e.g. "not supported": nothing to draw
                continue
            default = method == info["default"]
            ys = [max(v, floor) if v is not None else math.nan for v in ys]
            style = dict(ls="--", color="k", lw=1.5) if method == "diffprivlib" else \
                dict(lw=3.0 if default else 1.1, color="crimson" if default else colours[method],
                     zorder=5 if default else 2)
            ax.plot(eps, ys, marker="o", ms=3, label=method, **style)
            src = methods.get(method, {})
            lo, hi = curve(src, "min"), curve(src, "max")
            if (default or method == "diffprivlib") and None not in lo + hi:
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
        ax.set_xlim(min(eps) / 1.2, max(eps) * 1.2)  # also for a panel without a curve
        ax.set_ylim(floor, top + 0.05 * (top - floor))
        ax.set_title(f"{name} (n={info['rows']:,}; {info.get('group', '')})", fontsize=9)
        ax.set_ylabel("held-out R^2" if task == "regression" else "held-out accuracy %",
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
