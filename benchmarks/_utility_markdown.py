"""The Markdown report of ``benchmarks/utility.py`` (docs/benchmarks/utility.md)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from _utility_dpol import RFF
from _utility_plot import plot
from _utility_report import (
    GROUP_TITLES,
    TARGET_HEADERS,
    _md_table,
    full_rows,
    headline_headers,
    headline_rows,
    names_in,
    target_rows,
)
from _utility_targets import PARTS, TARGET_EPSILON, _closure, group, losses
from _utility_texts import PROTOCOL, TARGETS

from dpol.learners.random_features import N_RANDOM_FEATURES


def _nonlinear(result: dict, name: str, learner: str) -> str:
    """What the same learner on random Fourier features scores here, if it ran: its
    figures at epsilon = 1 and the targets T1 and T2 computed for it."""
    task = result["datasets"][name]["task"]
    methods = result["summary"][name]
    entry = methods.get(learner + RFF, {}).get(TARGET_EPSILON)
    twin = methods.get(learner + RFF, {}).get("inf")
    trivial = methods.get("trivial", {}).get("-")
    if entry is None or trivial is None:
        return ""
    scale, unit = (1.0, " MSE") if task == "regression" else (100.0, "%")
    shown = (lambda v: v) if task == "regression" else (lambda v: 1.0 - v)
    figures, t1, closed = [], True, []
    for part, where in (("prequential", "on the stream"), ("held_out", "held out")):
        (mean, worst), base = losses(entry, part, task), losses(trivial, part, task)[0]
        t1 &= max(mean, worst) <= base
        figures.append(f"{scale * shown(mean):.1f}{unit} [worst seed "
                       f"{scale * shown(worst):.1f}] {where}")
        if twin is not None:
            c = _closure(base, mean, losses(twin, part, task)[0])
            closed.append("n/a" if c is None else f"{c:.2f}")
    base_text = " and ".join(
        f"{scale * shown(losses(trivial, p, task)[0]):.1f}{unit}" for p in PARTS)
    verdict = (f"T1 {'passes' if t1 else 'fails'} for it"
               + (f", T2's gap closed {' / '.join(closed)}" if closed else ""))
    return (f"- {name}, beyond the linear default: the same learner on {N_RANDOM_FEATURES} "
            f"random Fourier features (`random_features={N_RANDOM_FEATURES}`, row "
            f"{learner}{RFF}) scores {' and '.join(figures)} at epsilon = {TARGET_EPSILON}, "
            f"against {base_text} for the trivial baseline ({verdict}). It is an option, "
            "not the default: where a linear model does well its extra coordinates cost "
            "accuracy (its rows on the other data sets). Choosing between the two privately "
            "costs more than it gains: `benchmarks/model_choice.py` measures it (each model "
            "at 45% of epsilon, the choice at 10%).")


def _why(r: dict, rows: int, task: str, where: str = "") -> str:
    """Why a target is out of reach, from the figures (``where``: the part they are
    of, said): the learner class or the noise."""
    twin, trivial, mine = r.get("twin_loss"), r["trivial_loss"], r["loss_mean"]
    if twin is None:
        return ""
    scale = 1.0 if task == "regression" else 100.0
    what = "of MSE" if task == "regression" else "points of accuracy"
    if twin >= trivial:
        return ("Why: without noise this learner loses to the trivial baseline too (by "
                f"{scale * (twin - trivial):.3g} {what}): a linear model on these features "
                "has nothing over it here.")
    return (f"Why{where}: noise. Without noise the learner gains "
            f"{scale * (trivial - twin):.3g} {what} over the trivial baseline; at epsilon = "
            f"1 on a stream of {rows:,} rows "
            f"the noise costs {scale * (mine - twin):.3g}: the signal is too weak for this "
            "budget and size.")


def _failures(result: dict, judged: dict, eps: str) -> list[str]:
    """One line of figures per target missed in one group at one epsilon."""
    out = []
    for name, t in judged["per_dataset"].items():
        if not t["measured"]:
            out.append(f"- {name}: {t.get('why', 'not measured').rstrip('.')}.")
            continue
        task = result["datasets"][name]["task"]
        nonlinear = _nonlinear(result, name, t["learner"]) if eps == TARGET_EPSILON else ""
        unit = (lambda v: f"MSE {v:.4g}") if task == "regression" \
            else (lambda v: f"{100 * (1 - v):.2f}% accuracy")
        tol = (lambda v: f"{v:.4g} of MSE") if task == "regression" \
            else (lambda v: f"{100 * v:.2f} points")
        for part in ("prequential", "held_out"):
            r = t[f"T1_{part}"]
            if r["pass"] is False:
                twin = "" if r.get("twin_loss") is None else \
                    f"; its non-private twin {unit(r['twin_loss'])}"
                worst = (f"as its expected worst of {result['protocol']['seeds']} seeds"
                         if r.get("expected_worst") else "in its worst seed")
                private = "" if r.get("private_trivial_loss") is None else (
                    f"; the private trivial model {unit(r['private_trivial_loss'])} on "
                    f"average, {unit(r['private_trivial_worst_seed'])} {worst}")
                if r.get("baseline_as_bad") is not None:
                    private += (f" (its own worst of {result['protocol']['seeds']} seeds "
                                f"is this bad in {100 * r['baseline_as_bad']:.0f}% of draws)")
                out.append(f"- {name}, T1 {part.replace('_', '-')}: {t['learner']} "
                           f"{unit(r['loss_mean'])} on average, {unit(r['loss_worst_seed'])} "
                           f"in its worst seed{private}; the majority "
                           f"{unit(r['trivial_loss'])} (tolerance "
                           f"{tol(r.get('tolerance', 0.0))}){twin}. "
                           + (_why(r, result["datasets"][name]["stream"], task)
                              if eps == TARGET_EPSILON else ""))
        if t["T2"]["pass"] is False:
            c = t["T2"]["closure"]
            out.append(f"- {name}, T2: gap closed "
                       + ", ".join(f"{p.replace('_', '-')} {v:.2f}" for p, v in c.items()
                                   if v is not None) + " (needs 0.5). "
                       + " ".join(_why(t[f"T1_{p}"], result["datasets"][name]["stream"],
                                       task, f" {p.replace('_', '-')}")
                                  for p, v in c.items() if v is not None and v < 0.5))
        if t["T3"]["pass"] is False:
            out.append(f"- {name}, T3: held-out {unit(t['T3']['loss'])} against diffprivlib's "
                       f"{unit(t['T3']['diffprivlib_loss'])} (medians over seeds "
                       f"{unit(t['T3']['median_loss'])} and "
                       f"{unit(t['T3']['diffprivlib_median_loss'])}).")
        if nonlinear and not (t["T1_prequential"]["pass"] and t["T1_held_out"]["pass"]):
            out.append(nonlinear)
    return out


def _datasets_table(result: dict) -> str:
    rows = []
    for name, i in result["datasets"].items():
        share = "" if i["positive_share"] is None else f"{100 * i['positive_share']:.1f}% +1"
        if i.get("classes"):
            share = f"{i['classes']} classes"
        lab = "" if i["labels_outside_y_bound"] is None else \
            f"{100 * i['labels_outside_y_bound']:.1f}%"
        if i.get("raw_labels"):
            lab += " (raw labels too)"
        rows.append([name, group(result["datasets"], name), i["task"], f"{i['rows']:,}",
                     f"{i['stream']:,}", f"{i['held_out']:,}", i["dim"], share,
                     f"{100 * i['rows_outside_x_bound']:.1f}%", lab, i["source"]])
    return _md_table(["data set", "group", "task", "rows", "stream", "held out", "d",
                      "classes", "||x|| > 1", "|y| > 1", "source"], rows)


def _group_section(result: dict, g: str, by_eps: dict) -> list[str]:
    """One group's targets at each epsilon, the targets missed, and its headline tables."""
    names = names_in(result, g)
    parts = [f"## {GROUP_TITLES.get(g, g)}\n", f"Data sets: {', '.join(names)}.\n"]
    for eps, judged in by_eps.items():
        parts += [f"### Targets at epsilon = {eps}\n",
                  _md_table(TARGET_HEADERS, target_rows(judged, eps)), ""]
        fails = _failures(result, judged, eps)
        if fails:
            parts += ["Targets missed or not measured, with their figures:\n", *fails, ""]
        alarms = judged["overall"].get("T1_false_alarms")
        if alarms:
            parts += [f"T1's false alarms: the private trivial model itself, on "
                      f"{alarms['groups']} further groups of seeds judged as a learner, "
                      f"fails T1 in {alarms['misses']} of {alarms['judged']} (group, cell) "
                      f"pairs here; against its own worst of the learners' seeds, the bar "
                      f"before, in {alarms.get('misses_against_own_seeds', 'n/a')}.\n"]
    parts += [f"### Scores at epsilon = {TARGET_EPSILON}\n", "Held-out score of the final "
              "model:\n", _md_table(headline_headers("held_out"),
                                    headline_rows(result, "held_out", True, names)), "",
              "Prequential score over the stream:\n",
              _md_table(headline_headers("prequential"),
                        headline_rows(result, "prequential", True, names)), ""]
    return parts


def _notes(result: dict) -> list[str]:
    lines = []
    for name, methods in result["summary"].items():
        info = result["datasets"][name]
        lines.append(f"- **{name}**: {info['preprocessing']}.")
        for m, why in info["skipped"].items():
            lines.append(f"  - {m} not run: {why} (its non-private twin re-solves the ERM "
                         "every step).")
        check = methods.get("adapter_check")
        if check:
            verdict = "predicts as `predict_one`" if check["agrees"] else \
                f"differs from `predict_one` by up to {check['max_abs_difference']:.3g}"
            lines.append(f"  - the scikit-learn adapter of {check['method']} (eps=1, seed 0) "
                         f"{verdict}.")
        loops = [m for m, e in methods.items() if m != "adapter_check" and
                 any("loop" in v.get("path", []) for v in e.values() if isinstance(v, dict))]
        if loops:
            lines.append(f"  - prequential by the predict_one / learn_one loop (run's trace "
                         "did not reproduce predict_one on a 200-row prefix, e.g. its "
                         f"predictions are of the clipped rows): {', '.join(loops)}.")
    warned = {}
    for methods in result["summary"].values():
        for m, entry in methods.items():
            if m == "adapter_check":
                continue
            for e in entry.values():
                if isinstance(e, dict):
                    for w in e.get("warnings", []):
                        warned.setdefault(w, set()).add(m)
    if warned:
        lines.append("\nWarnings raised during the runs (besides the twins' "
                     "NonPrivateWarning):\n")
        lines += [f"- {w[:300]} ({', '.join(sorted(ms))})" for w, ms in sorted(warned.items())]
    return lines


def markdown(result: dict, png_name: str, json_path: Path, root: Path) -> str:
    """The whole report."""
    p, v = result["protocol"], result["versions"]
    eps = [f"{e:g}" for e in p["epsilons"]]
    try:
        json_ref = json_path.relative_to(root)
    except ValueError:
        json_ref = json_path.name
    cmd = "python benchmarks/utility.py " + " ".join(str(a) for a in p["argv"])
    dpl = result["diffprivlib"] or "not installed: its columns and T3 are skipped"
    parts = [
        "# Utility of dpol's private learners beside the alternatives\n",
        f"Written by `{cmd.strip()}` ({result['seconds'] / 60:.1f} min; "
        f"{p['seeds']} seeds, epsilons {', '.join(eps)}"
        + (f", streams capped at {p['max_rows']:,} rows" if p["max_rows"] else "")
        + f"). Figures: `{json_ref}`. dpol commit {v.get('dpol_commit')}"
        + (f" with uncommitted changes in {', '.join(v['dpol_uncommitted_changes'])}"
           if v.get("dpol_uncommitted_changes") else "")
        + f"; numpy {v['numpy']}, scikit-learn {v['sklearn']}, river {v['river']}, "
        f"statsmodels {v['statsmodels']}, diffprivlib {dpl}.\n",
    ]
    if result["missing_datasets"]:
        parts.append("Not run here: " + "; ".join(
            f"{k} ({w})" for k, w in result["missing_datasets"].items()) + ".\n")
    kw = p.get("learner_keywords", {}).get("classification", {})
    keywords = ", ".join(f"`{k}={v!r}`" for k, v in kw.items()) or "none"
    parts += [PROTOCOL.format(keywords=keywords, features=N_RANDOM_FEATURES),
              _datasets_table(result), "", TARGETS]
    if not result["targets"]["epsilons"]:
        parts.append("No target epsilon (1 or 0.1) was run: no target is judged.\n")
    for g, by_eps in result["targets"]["groups"].items():
        parts += _group_section(result, g, by_eps)
    parts += [f"![held-out score against epsilon]({png_name})\n",
              "## Every method, every epsilon\n",
              "Held-out score at each epsilon, the twin (eps=inf), the last release at eps=1 "
              "(`predict_one(x, raw=True)`, where the learner's model is post-processed), "
              "then the prequential score likewise. Baselines without an epsilon repeat "
              "their one value.\n"]
    heads = [f"held eps={e}" for e in eps] + ["held twin", "held eps=1 last release"] \
        + [f"preq eps={e}" for e in eps] + ["preq twin"]
    for name in [n for g in result["targets"]["groups"] for n in names_in(result, g)]:
        task = result["datasets"][name]["task"]
        parts += [f"### {name}, {group(result['datasets'], name)} group "
                  f"({'R^2' if task == 'regression' else 'accuracy %'})\n",
                  _md_table(["method", *heads], full_rows(result, name)), ""]
    parts += ["## Notes\n", *_notes(result), ""]
    text = "\n".join(parts)
    return text.replace("dpol eps=1", "dpol eps=1 [worst, best]")


def _finite(obj: object) -> object:
    """The result with non-finite floats (a diverging learner's MSE) as strings."""
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    return obj


def _compact(obj: object) -> str:
    return json.dumps(obj, allow_nan=False, separators=(",", ":"))


def _dump(body: dict) -> str:
    """JSON a reader can scan and diff: one line per top-level entry, per data set and
    method of the summary, and per run of the records (indenting every number tripled
    the file)."""
    def block(items: list[str], pad: str) -> str:
        return "{\n" + ",\n".join(pad + item for item in items) + "\n" + pad[:-1] + "}"

    parts = []
    for key, value in body.items():
        if key == "summary":
            inner = [f'"{name}": ' + block([f'"{m}": {_compact(e)}' for m, e in methods.items()],
                                           "   ") for name, methods in value.items()]
            parts.append(f'"{key}": ' + block(inner, "  "))
        elif key == "records":
            parts.append(f'"{key}": [\n' + ",\n".join("  " + _compact(r) for r in value)
                         + "\n ]")
        else:
            parts.append(f'"{key}": {_compact(value)}')
    return block(parts, " ") + "\n"


def write_outputs(result: dict, tag: str, out: Path | None, root: Path) -> None:
    """JSON (benchmarks/results), plot and Markdown report (docs/benchmarks for the full
    run, next to the JSON otherwise; everything in ``out`` when given)."""
    results_dir = out or root / "benchmarks" / "results"
    docs_dir = out or (root / "docs" / "benchmarks" if tag == "utility" else results_dir)
    json_path = results_dir / f"{tag}.json"
    png_path, md_path = docs_dir / f"{tag}.png", docs_dir / f"{tag}.md"
    results_dir.mkdir(parents=True, exist_ok=True)
    json_path.write_text(_dump(_finite(result)))
    plot(result, png_path)
    md_path.write_text(markdown(result, png_path.name, json_path, root))
    for path in (json_path, png_path, md_path):
        print(f"wrote {path}", file=sys.stderr)

