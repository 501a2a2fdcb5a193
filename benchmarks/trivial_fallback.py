"""The default classifier with and without the trivial fallback, against the trivial model.

``OnlineClassifier()`` runs its learner inside
:class:`dpol.learners.trivial_fallback.WithTrivialFallback` by default (30% of the
Gaussian budget: a private prior on 20%, a private gate on the prequential errors on
10%; on a short stream the prior takes 50% and the model predicts only where the gate
opens: ``fallback_plan``). This script measures what that buys and costs on the binary
and multiclass sets of ``benchmarks/utility.py`` (same split, same preprocessing, the same
learner, both groups; K classes as ``OnlineClassifier`` learns them, one-hot rows on one
Gram matrix): prequential and held-out accuracy, mean [worst] over the seeds, for eight
variants: no fallback (``fallback=False``), the fallback as the default builds it, the
same with the learner on every row (``learner_from=0``: the default before the first
blocks' rows went to the prior alone), the same with the short split where the plan now
leaves the prior alone (the default before that plan), the same with the coin-flip rule
in the first blocks too (the default before the model waited for the gate's first
block), the same with the gate and the learner in every block (``gate_from=0``,
``learner_from=0``: the default before the first blocks went to the prior), and the
fallback with one split on every stream (20% / 10%, the prior a coin flip lets the model
predict: the default before the short-stream plan); on the multiclass sets also the
fallback where the default (``fallback="auto"``) leaves K > 2 classes to the learner
alone, on a stream long enough for the gate ("yes (K classes too)"). Each is judged by
utility.md's T1: against the *private* trivial model (``_utility_trivial``: the class
prior alone, released per block on the whole budget, on ``BASELINE_SEEDS`` seeds), its
mean against that model's mean and its worst seed against that model's expected worst of as many
seeds, within one standard error of the majority's held-out accuracy; "maj" says whether
every seed also holds the majority class itself (known before the first row, without
noise: no target for a private learner, see the docs page). Run on 20 seeds or more, the
summary also gives each variant's **expected misses**: per cell, 1 minus its chance to
pass T1 with 5 seeds drawn from its own (``chance_passes``), summed: one draw of 5 seeds
is a noisy judge at epsilon 0.1.

    python benchmarks/trivial_fallback.py --jobs 2        # about 3 minutes on 2 cores
    python benchmarks/trivial_fallback.py --seeds 30 --variants yes,"yes (gate in every block)"
    python benchmarks/trivial_fallback.py --seeds 30 --jobs 2 \
        --variants yes,"yes (coin flips in the first blocks)" --out /tmp/coins.json
    python benchmarks/trivial_fallback.py --prior-alone 0.2 0.3 0.7 --epsilons 1
    python benchmarks/trivial_fallback.py --seeds 2 --epsilons 1
    python benchmarks/trivial_fallback.py --variants yes --shares 0.3 0.1 --out /tmp/s.json
    python benchmarks/trivial_fallback.py --variants yes --short 0.6 0.01 --out /tmp/t.json

Needs the ``bench`` extra (river, statsmodels). Prints a table and writes
``benchmarks/results/trivial_fallback.json``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from _utility_baselines import majority, score
from _utility_data import GROUPS, SOURCES, group_of, prepare
from _utility_dpol import default_learners, delta_for, with_default_fallback
from _utility_trivial import (
    BASELINE_SEEDS,
    chance_passes,
    expected_worst,
    run_private_trivial,
    t1_holds,
)

from dpol.learners._fallback_budget import (
    GATE_SHARE,
    LONG_THRESHOLD,
    PRIOR_SHARE,
    SHORT_PRIOR_SHARE,
    SHORT_RESOLUTION,
    fallback_plan,
    gate_resolution,
)
from dpol.learners.trivial_fallback import SIGNIFICANCE, WithTrivialFallback

#: every binary and multiclass set of the utility benchmark, the tuning group first
CLASSIFICATION = tuple(n for g in GROUPS.values() for n in g
                       if SOURCES[n][0] in ("classification", "multiclass"))
#: the learners' seeds in ``utility.py``: T1's chance is that of a group of this many
GROUP = 5
#: the fewest seeds whose draws say anything of a group's chance (below: "n/a")
CHANCE_SEEDS = 4 * GROUP
OUT = Path(__file__).parent / "results" / "trivial_fallback.json"


def _learner(ds, epsilon: float, seed: int, options: dict | None, shares: tuple | None,
             short: tuple | None = None):
    """The default classifier's learner, seeded as ``OnlineClassifier`` seeds it; inside
    the fallback (with ``options``, whose "shares" beat ``shares``: its budget split)
    unless ``options`` is None. ``short`` = (prior share, resolution): ``fallback_plan``
    with these in place of ``SHORT_PRIOR_SHARE`` and ``SHORT_RESOLUTION``."""
    method = default_learners()["classification"]
    keywords = dict(options or {})
    shares = keywords.pop("shares", shares)
    n = len(ds.y_train)
    coins_early = keywords.pop("coins_early", False)
    # the default's "auto" (K > 2 classes: the learner alone where not too short), or the
    # fallback on every stream
    fallback = (True if keywords.pop("k_classes", False) else "auto") \
        if options is not None else False
    if not keywords.pop("prior_alone", True) and shares is None and short is None:
        if fallback_plan(epsilon, delta_for(n), n).prior_only:  # the split before there
            if ds.task == "multiclass":  # K classes: the default split, never the short
                shares = (PRIOR_SHARE, GATE_SHARE)
            else:
                shares = (SHORT_PRIOR_SHARE, GATE_SHARE)
                keywords.setdefault("significance", 0.0)
    if short is not None and shares is None:  # the plan's rule, with other constants
        is_short = gate_resolution(epsilon, delta_for(n), n) > short[1]
        shares = (short[0] if is_short else PRIOR_SHARE, GATE_SHARE)
        keywords.setdefault("significance", 0.0 if is_short else SIGNIFICANCE)
        keywords.setdefault("threshold", None if is_short else LONG_THRESHOLD)
    learner = with_default_fallback(ds, method, epsilon, seed, len(ds.y_train),
                                    fallback=fallback, shares=shares, **keywords)
    if coins_early:  # the rule before 2026-11-29 (WithTrivialFallback._coin_flips_early)
        learner._coin_flips_early = True
    return learner


#: the variants measured: name -> None (no fallback) or WithTrivialFallback's keywords
#: ("one split": the fallback before the short-stream plan, 0.2 / 0.1 and significance 1
#: on every stream, the gate in every block; "gate in every block": the default but
#: gate_from=0 and learner_from=0, as before the first blocks went to the prior; "coin
#: flips in the first blocks": the default but the coin-flip rule there too, as before
#: 2026-11-29; "no prior alone": the short split where the plan now leaves the prior
#: alone (K > 2 classes: the default split); "K classes too": the fallback on K > 2
#: classes where "auto" leaves the learner alone, as before 2026-11-29's seventh change;
#: "learner from row 1": the learner learns every row, the prior's first blocks on the
#: gate's budget alone, as before the learner's first row moved, 2026-11-29; "threshold 1
#: on long streams": the gate's one-sided test of 1 std where the stream is not short, as
#: before ``LONG_THRESHOLD``, 2026-11-29; the variants given ``shares`` keep the
#: mechanism's threshold, 1, as their rules had it)
VARIANTS = {"no": None, "yes": {},
            "yes (no prior alone)": {"prior_alone": False},
            "yes (coin flips in the first blocks)": {"coins_early": True},
            "yes (gate in every block)": {"gate_from": 0, "learner_from": 0},
            "yes (one split)": {"shares": (0.2, 0.1), "significance": 1.0, "gate_from": 0},
            "yes (K classes too)": {"k_classes": True},
            "yes (learner from row 1)": {"learner_from": 0},
            "yes (threshold 1 on long streams)": {"threshold": 1.0}}


def _baseline(scores: list[float], k: int) -> dict:
    """The private trivial model's mean accuracy and its expected worst of k seeds."""
    return {"mean": float(np.mean(scores)),
            "worst": 1.0 - expected_worst(1.0 - np.asarray(scores), k)}


def _judge(scores: list[float], baseline: dict, group: dict, majority_acc: float,
           tol: float) -> dict:
    """Mean and worst seed; T1 against the private trivial model (on losses, as
    ``utility.py`` judges it); its chance in a group of ``GROUP`` seeds drawn from these
    (against ``group``, the baseline for that many); the majority held."""
    mean, worst = float(np.mean(scores)), float(np.min(scores))
    return {"mean": mean, "worst": worst,
            "T1": t1_holds(1.0 - mean, 1.0 - worst, 1.0 - baseline["mean"],
                           1.0 - baseline["worst"], tol),
            "T1 chance": chance_passes(1.0 - np.asarray(scores), GROUP, 1.0 - group["mean"],
                                       1.0 - group["worst"], tol),
            "holds_majority": bool(worst >= majority_acc - tol)}


def _targets(ds) -> np.ndarray:
    """The learner's labels: -1 / +1, or one-hot rows of K classes."""
    return np.eye(ds.n_classes)[ds.y_train.astype(int)] if ds.task == "multiclass" \
        else ds.y_train


def _classes(ds, predictions) -> np.ndarray:
    """Predictions in ``score``'s units: margins, or the class of the largest of K."""
    predictions = np.asarray(predictions, dtype=float)
    return np.argmax(predictions, axis=1).astype(float) if ds.task == "multiclass" \
        else predictions


def measure(name: str, epsilons: list[float], seeds: int, variants: dict = VARIANTS,
            shares: tuple | None = None, short: tuple | None = None) -> list[dict]:
    ds = prepare(name)
    label = majority(ds)
    trivial = {"stream": float(np.mean(ds.y_train == label)),
               "test": float(np.mean(ds.y_test == label))}
    tol = float(np.sqrt(trivial["test"] * (1 - trivial["test"]) / len(ds.y_test)))
    rows = []
    for epsilon in epsilons:
        alone = {"stream": [], "test": []}
        for seed in range(BASELINE_SEEDS):
            out = run_private_trivial(ds, epsilon, seed)
            alone["stream"].append(score(ds, out["prequential"], "stream")["accuracy"])
            alone["test"].append(score(ds, out["held_out"], "test")["accuracy"])
        group = {p: _baseline(v, GROUP) for p, v in alone.items()}
        alone = {p: _baseline(v, seeds) for p, v in alone.items()}
        for variant, options in variants.items():
            scores = {"stream": [], "test": []}
            for seed in range(seeds):
                m = _learner(ds, epsilon, seed, options, shares, short)
                trace = m.run(ds.X_train, _targets(ds))
                stream = trace.model_predictions if isinstance(m, WithTrivialFallback) \
                    else trace.prequential_predictions
                scores["stream"].append(score(ds, _classes(ds, stream), "stream")["accuracy"])
                held = _classes(ds, np.array([m.predict_one(x) for x in ds.X_test]))
                scores["test"].append(score(ds, held, "test")["accuracy"])
            rows.append({"data set": name, "group": group_of(name), "epsilon": epsilon,
                         "fallback": variant, "trivial": trivial, "tolerance": tol,
                         "private trivial": alone,
                         **{p: _judge(v, alone[p], group[p], trivial[p], tol)
                            for p, v in scores.items()}})
    return rows


def prior_alone(name: str, epsilons: list[float], shares: list[float]) -> list[dict]:
    """The private trivial model on a share of the budget, on ``BASELINE_SEEDS`` seeds:
    its chance to pass T1 (groups of ``GROUP`` seeds) against the whole budget's bars.
    A method that gives a model the rest and never lets it predict does no better: what
    T1 asks of any split."""
    ds = prepare(name)
    test = float(np.mean(ds.y_test == majority(ds)))
    tol = float(np.sqrt(test * (1 - test) / len(ds.y_test)))
    out = []
    for epsilon in epsilons:
        runs = {share: [run_private_trivial(ds, epsilon, seed, share)
                        for seed in range(BASELINE_SEEDS)] for share in {1.0, *shares}}
        acc = {share: {p: np.array([score(ds, r[key], p)["accuracy"] for r in rs])
                       for p, key in (("stream", "prequential"), ("test", "held_out"))}
               for share, rs in runs.items()}
        bars = {p: _baseline(list(v), GROUP) for p, v in acc[1.0].items()}
        for share in shares:
            out.append({"data set": name, "epsilon": epsilon, "share": share, **{
                p: chance_passes(1.0 - acc[share][p], GROUP, 1.0 - bars[p]["mean"],
                                 1.0 - bars[p]["worst"], tol) for p in ("stream", "test")}})
    return out


def summarise(rows: list[dict]) -> list[dict]:
    """Per group, epsilon and variant: T1's misses, the points below the private trivial
    model beyond the tolerance (summed over sets, held out and prequential, in the mean
    and in the worst seed), and the mean accuracies over the sets."""
    out: dict[tuple, dict] = {}
    for r in rows:
        key = (r["group"], r["epsilon"], r["fallback"])
        agg = out.setdefault(key, {"group": key[0], "epsilon": key[1], "fallback": key[2],
                                   "T1 misses": 0, "cells": 0, "expected misses": 0.0,
                                   "below mean": 0.0,
                                   "below worst": 0.0, "held": [], "stream": []})
        for part in ("test", "stream"):
            v, p = r[part], r["private trivial"][part]
            agg["T1 misses"] += 0 if v["T1"] else 1
            agg["expected misses"] += 1.0 - v["T1 chance"]
            agg["cells"] += 1
            agg["below mean"] += 100 * max(0.0, p["mean"] - r["tolerance"] - v["mean"])
            agg["below worst"] += 100 * max(0.0, p["worst"] - r["tolerance"] - v["worst"])
        agg["held"].append(r["test"]["mean"])
        agg["stream"].append(r["stream"]["mean"])
    for agg in out.values():
        agg["held"], agg["stream"] = (100 * float(np.mean(agg[k])) for k in ("held", "stream"))
    return sorted(out.values(), key=lambda a: (a["group"] != "tuning", a["epsilon"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--datasets", default=",".join(CLASSIFICATION),
                        help="comma-separated binary or multiclass sets (default: all)")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--shares", type=float, nargs=2, metavar=("PRIOR", "GATE"),
                        help="the fallback's budget shares on every stream (default: "
                        "the library's plan)")
    parser.add_argument("--short", type=float, nargs=2, metavar=("PRIOR", "RESOLUTION"),
                        help="the plan's short-stream prior share and gate resolution "
                        f"(default: {SHORT_PRIOR_SHARE:g} above {SHORT_RESOLUTION:g})")
    parser.add_argument("--prior-alone", type=float, nargs="+", metavar="SHARE",
                        help="instead: the private trivial model on these shares of the "
                        "budget, its chance to pass T1 against the whole budget's")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # clipping warnings: the preprocessing clips ~5%
    names, variants = args.datasets.split(","), args.variants.split(",")
    for flag, given, known in (("--datasets", names, CLASSIFICATION),
                               ("--variants", variants, VARIANTS)):
        unknown = sorted(set(given) - set(known))
        if unknown:
            parser.error(f"{flag}: not known here: {', '.join(unknown)}")
    if args.prior_alone:
        print(f"| data set | eps | share | chance to pass T1 with {GROUP} seeds: stream | "
              "held out |\n|---|---|---|---|---|")
        for name in names:
            for r in prior_alone(name, args.epsilons, args.prior_alone):
                print(f"| {r['data set']} | {r['epsilon']:g} | {r['share']:g} | "
                      f"{r['stream']:.2f} | {r['test']:.2f} |")
        return
    chosen = {v: VARIANTS[v] for v in variants}
    shares = tuple(args.shares) if args.shares else None
    short = tuple(args.short) if args.short else None
    jobs = [(name, args.epsilons, args.seeds, {v: chosen[v]}, shares, short)
            for name in names for v in chosen]
    with Pool(args.jobs) as pool:  # one (data set, variant) per task
        rows = [r for part in pool.starmap(measure, jobs) for r in part]
    order = {v: i for i, v in enumerate(chosen)}
    rows.sort(key=lambda r: (names.index(r["data set"]), args.epsilons.index(r["epsilon"]),
                             order[r["fallback"]]))
    print("| data set | group | eps | fallback | held out mean [worst] | T1 | maj | "
          "prequential mean [worst] | T1 | maj | private trivial held / stream | "
          "majority held / stream |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def cell(v: dict) -> str:
        return f"{100 * v['mean']:.1f} [{100 * v['worst']:.1f}]"

    for r in rows:
        t, s, p = r["test"], r["stream"], r["private trivial"]
        print(f"| {r['data set']} | {r['group']} | {r['epsilon']:g} | {r['fallback']} | "
              f"{cell(t)} | {'pass' if t['T1'] else 'FAIL'} | "
              f"{'yes' if t['holds_majority'] else 'no'} | {cell(s)} | "
              f"{'pass' if s['T1'] else 'FAIL'} | {'yes' if s['holds_majority'] else 'no'} | "
              f"{cell(p['test'])} / {cell(p['stream'])} | {100 * r['trivial']['test']:.1f} / "
              f"{100 * r['trivial']['stream']:.1f} |")
    summary = summarise(rows)
    print(f"\n| group | eps | fallback | T1 misses | expected misses of {GROUP} seeds | "
          "points below the private trivial model (means / worst seeds) | "
          "mean accuracy held / stream |")
    print("|---|---|---|---|---|---|---|")
    for a in summary:
        expected = f"{a['expected misses']:.2f}" if args.seeds >= CHANCE_SEEDS else "n/a"
        print(f"| {a['group']} | {a['epsilon']:g} | {a['fallback']} | {a['T1 misses']} of "
              f"{a['cells']} | {expected} | {a['below mean']:.1f} / "
              f"{a['below worst']:.1f} | {a['held']:.1f} / {a['stream']:.1f} |")
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps({"groups": GROUPS, "seeds": args.seeds, "shares": shares,
                                    "short": args.short,
                                    "rows": rows, "summary": summary}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
