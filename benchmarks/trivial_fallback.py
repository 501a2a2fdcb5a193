"""The default classifier with and without the trivial fallback, against the trivial model.

``OnlineClassifier()`` runs its learner inside
:class:`dpol.learners.trivial_fallback.WithTrivialFallback` by default (30% of the
Gaussian budget: a private prior on 20%, a private gate on the prequential errors on
10%). This script measures what that buys and costs on the binary sets of
``benchmarks/utility.py`` (same split, same preprocessing, the same learner, both
groups): prequential and held-out accuracy, mean [worst] over the seeds, for three
variants: no fallback (``fallback=False``), the fallback as the default builds it, and
the fallback with ``significance=0`` (the model never predicts because the prior is a
coin flip, only where the gate opens). Each is judged by
utility.md's T1: against the *private* trivial model (``_utility_trivial``: the class
prior alone, released per block on the whole budget, same seeds), its mean against that
model's mean and its worst seed against that model's worst, within one standard error of
the majority's held-out accuracy; "maj" says whether every seed also holds the majority
class itself (known before the first row, without noise: no target for a private
learner, see the docs page).

    python benchmarks/trivial_fallback.py                 # about 6 minutes
    python benchmarks/trivial_fallback.py --seeds 2 --epsilons 1

Needs the ``bench`` extra (river, statsmodels). Prints a table and writes
``benchmarks/results/trivial_fallback.json``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
from _utility_baselines import majority, score
from _utility_data import GROUPS, SOURCES, group_of, prepare
from _utility_dpol import default_learners, with_default_fallback
from _utility_trivial import run_private_trivial

#: every binary set of the utility benchmark, the tuning group first
BINARY = tuple(n for g in GROUPS.values() for n in g if SOURCES[n][0] == "classification")
OUT = Path(__file__).parent / "results" / "trivial_fallback.json"


def _learner(ds, epsilon: float, seed: int, options: dict | None):
    """The default classifier's learner, seeded as ``OnlineClassifier`` seeds it; inside
    the fallback (with ``options``) unless ``options`` is None."""
    method = default_learners()["classification"]
    return with_default_fallback(ds, method, epsilon, seed, len(ds.y_train),
                                 fallback=options is not None, **(options or {}))


#: the variants measured: name -> None (no fallback) or WithTrivialFallback's keywords
VARIANTS = {"no": None, "yes": {}, "yes, significance 0": {"significance": 0.0}}


def _judge(scores: list[float], baseline: list[float], majority_acc: float,
           tol: float) -> dict:
    """Mean and worst seed; T1 against the private trivial model; the majority held."""
    mean, worst = float(np.mean(scores)), float(np.min(scores))
    return {"mean": mean, "worst": worst,
            "T1": bool(mean >= np.mean(baseline) - tol and worst >= np.min(baseline) - tol),
            "holds_majority": bool(worst >= majority_acc - tol)}


def measure(name: str, epsilons: list[float], seeds: int) -> list[dict]:
    ds = prepare(name)
    label = majority(ds)
    trivial = {"stream": float(np.mean(ds.y_train == label)),
               "test": float(np.mean(ds.y_test == label))}
    tol = float(np.sqrt(trivial["test"] * (1 - trivial["test"]) / len(ds.y_test)))
    rows = []
    for epsilon in epsilons:
        alone = {"stream": [], "test": []}
        for seed in range(seeds):
            out = run_private_trivial(ds, epsilon, seed)
            alone["stream"].append(score(ds, out["prequential"], "stream")["accuracy"])
            alone["test"].append(score(ds, out["held_out"], "test")["accuracy"])
        for variant, options in VARIANTS.items():
            scores = {"stream": [], "test": []}
            for seed in range(seeds):
                m = _learner(ds, epsilon, seed, options)
                trace = m.run(ds.X_train, ds.y_train)
                stream = trace.model_predictions if options is not None \
                    else trace.prequential_predictions
                scores["stream"].append(score(ds, stream, "stream")["accuracy"])
                held = np.array([m.predict_one(x) for x in ds.X_test])
                scores["test"].append(score(ds, held, "test")["accuracy"])
            rows.append({"data set": name, "group": group_of(name), "epsilon": epsilon,
                         "fallback": variant, "trivial": trivial, "tolerance": tol,
                         "private trivial": {p: {"mean": float(np.mean(v)),
                                                 "worst": float(np.min(v))}
                                             for p, v in alone.items()},
                         **{p: _judge(v, alone[p], trivial[p], tol)
                            for p, v in scores.items()}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--datasets", default=",".join(BINARY),
                        help="comma-separated binary sets (default: all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # clipping warnings: the preprocessing clips ~5%
    names = args.datasets.split(",")
    unknown = sorted(set(names) - set(BINARY))
    if unknown:
        parser.error(f"--datasets: not binary sets of the benchmark: {', '.join(unknown)}")
    rows = [r for name in names for r in measure(name, args.epsilons, args.seeds)]
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
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"groups": GROUPS, "seeds": args.seeds, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
