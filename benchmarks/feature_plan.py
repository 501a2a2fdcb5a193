"""The default classifier with its random features and on x alone, by the stream's length.

``OnlineClassifier()``'s learner, ``ridge_classifier_rff``, learns on 32 random Fourier
features beside x on a horizon of at least ``FEATURES_FROM_HORIZON`` rows where a row
expects ``FEATURE_NEIGHBOURS`` others within the kernel's bandwidth, and on x alone
elsewhere (``dpol.adapters.registry.uses_features``). This script measures both on every
classification set of ``benchmarks/utility.py`` (same split, same preprocessing, both
groups; binary sets inside the trivial fallback as the estimator builds it, multiclass
sets through ``OnlineClassifier``): prequential and held-out accuracy, mean [worst] over
the seeds, and which of the two the rule picks. The threshold is chosen on the tuning
group; the evaluation group is reported, not tuned on.

    python benchmarks/feature_plan.py                 # about 2 minutes on 2 cores
    python benchmarks/feature_plan.py --seeds 30 --out benchmarks/results/feature_plan_30.json
    python benchmarks/feature_plan.py --seeds 2 --epsilons 1 --datasets wine,phishing

Five seeds are one noisy draw at epsilon 0.1; the threshold was chosen on the means of
30 (docs/benchmarks/defaults.md).

Needs the ``bench`` extra (river, statsmodels). Prints a table and writes
``benchmarks/results/feature_plan.json``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from _utility_baselines import score
from _utility_data import GROUPS, SOURCES, group_of, prepare
from _utility_dpol import LINEAR_LEARNERS, default_learners, with_default_fallback
from _utility_estimators import run_multiclass

from dpol.adapters.registry import (
    FEATURE_NEIGHBOURS,
    FEATURES_FROM_HORIZON,
    learner_name,
    uses_features,
)
from dpol.learners.random_features import N_RANDOM_FEATURES

#: every classification set of the utility benchmark, the tuning group first
SETS = tuple(n for g in GROUPS.values() for n in g
             if SOURCES[n][0] in ("classification", "multiclass"))
OUT = Path(__file__).parent / "results" / "feature_plan.json"
#: the two learners compared: the default entry with its features forced on, and on x alone
VARIANTS = ("features", "x alone")


def _scores(name: str, variant: str, epsilon: float, seed: int) -> tuple[float, float]:
    """(prequential, held-out) accuracy of one run."""
    ds = prepare(name)
    default = default_learners()["classification"]
    features = N_RANDOM_FEATURES if variant == "features" else None
    # x alone: the task's linear entry, which the default is on x alone (bit for bit)
    method = default if variant == "features" else learner_name(
        LINEAR_LEARNERS["classification"])
    if ds.task == "multiclass":
        params = {} if features is None else {"random_features": features}
        run = run_multiclass(ds, method, epsilon, seed, **params)
        return run["prequential"]["accuracy"], run["held_out"]["accuracy"]
    learner = with_default_fallback(ds, method, epsilon, seed, len(ds.y_train),
                                    random_features=features)
    trace = learner.run(ds.X_train, ds.y_train)
    return (score(ds, trace.model_predictions, "stream")["accuracy"],
            score(ds, learner.predict_rows(ds.X_test), "test")["accuracy"])


def _job(args: tuple) -> dict:
    name, variant, epsilon, seeds = args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [_scores(name, variant, epsilon, s) for s in range(seeds)]
    stream, held = np.array(runs).T
    return {"dataset": name, "variant": variant, "epsilon": epsilon, "stream": stream.tolist(),
            "held_out": held.tolist()}


def _cell(values: list[float]) -> str:
    return f"{100 * np.mean(values):5.1f} [{100 * min(values):5.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--datasets", default=",".join(SETS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    names = [n for n in SETS if n in args.datasets.split(",")]
    jobs = [(n, v, e, args.seeds) for n in names for e in args.epsilons for v in VARIANTS]
    with Pool(args.jobs) as pool:
        rows = pool.map(_job, jobs)
    by = {(r["dataset"], r["epsilon"], r["variant"]): r for r in rows}
    print(f"accuracy %, mean [worst] of {args.seeds} seeds; the rule: features from "
          f"{FEATURES_FROM_HORIZON:,} rows where rows x 0.2^d >= {FEATURE_NEIGHBOURS:g}")
    print(f"{'data set':18s} {'group':10s} {'rows':>7s} {'eps':>4s} | "
          f"{'stream: features':>17s} {'x alone':>13s} | {'held: features':>15s} "
          f"{'x alone':>13s} | rule")
    for n in names:
        ds = prepare(n)
        rows_n = len(ds.y_train)
        pick = "features" if uses_features(ds.dim, rows_n) else "x alone"
        for e in args.epsilons:
            f, x = by[(n, e, "features")], by[(n, e, "x alone")]
            print(f"{n:18s} {group_of(n):10s} {rows_n:7d} {e:4g} | {_cell(f['stream']):>17s} "
                  f"{_cell(x['stream']):>13s} | {_cell(f['held_out']):>15s} "
                  f"{_cell(x['held_out']):>13s} | {pick}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"features_from_horizon": FEATURES_FROM_HORIZON,
                                    "feature_neighbours": FEATURE_NEIGHBOURS,
                                    "seeds": args.seeds, "runs": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
