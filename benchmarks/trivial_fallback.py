"""The default classifier with and without the trivial fallback, against the majority class.

``OnlineClassifier(fallback=True)`` runs its learner inside
:class:`dpol.learners.trivial_fallback.WithTrivialFallback` (20% of the Gaussian budget:
a private prior and a private gate on the prequential errors). This script measures what
that buys and costs on the binary sets of ``benchmarks/utility.py`` (same split, same
preprocessing, the same learner as ``OnlineClassifier()``, both groups), against the
trivial model (the stream's majority class) with utility.md's T1 tolerance (one standard
error of the trivial held-out accuracy): prequential and held-out accuracy, mean [worst]
over the seeds, and whether every seed is within the tolerance. The last column is a
reference for the stream: the fallback's prior *alone*, on the whole budget (no model,
no gate), predicting each row before learning it. Where even it misses the trivial
model on the stream, no private online learner of this kind can meet T1 there: the
trivial model knows the stream's majority before the first row, without noise.

    python benchmarks/trivial_fallback.py                 # about 3 minutes
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
from _utility_data import GROUPS, group_of, prepare
from _utility_dpol import _make, default_learners, delta_for

from dpol._seeding import spawn_seeds
from dpol.accounting.closed_forms import mu_star
from dpol.learners.trivial_fallback import WithTrivialFallback, fallback_budget

BINARY = ("phishing", "bananas", "shuttle", "breast-cancer", "synthetic-logistic",
          "solar-flare", "image-segments", "yeast", "fair")
OUT = Path(__file__).parent / "results" / "trivial_fallback.json"


def _learner(ds, epsilon: float, seed: int, fallback: bool):
    """The default classifier's learner, seeded as ``OnlineClassifier`` seeds it."""
    n, method = len(ds.y_train), default_learners()["classification"]
    learner_seed, _, fallback_seed = spawn_seeds(seed, 3)
    if not fallback:
        return _make(ds, method, epsilon, learner_seed, n, 1.0)
    z_prior, z_gate, rest = fallback_budget(epsilon, delta_for(n))
    return WithTrivialFallback(_make(ds, method, rest, learner_seed, n, 1.0),
                               prior_multiplier=z_prior, gate_multiplier=z_gate,
                               seed=fallback_seed, epsilon=epsilon)


def prior_alone(ds, epsilon: float, seed: int) -> float:
    """Prequential accuracy of the block prior alone on the whole budget."""
    n = len(ds.y_train)
    z = 1.0 / mu_star(epsilon, delta_for(n))  # one Gaussian mechanism on the whole budget
    m = WithTrivialFallback(_make(ds, default_learners()["classification"], np.inf, seed, n,
                                  1.0), prior_multiplier=z, gate_multiplier=1.0,
                            threshold=1e300, seed=seed, epsilon=epsilon)
    trace = m.run(ds.X_train, ds.y_train)  # a gate that never opens: the prior predicts
    return score(ds, trace.prequential_predictions, "stream")["accuracy"]


def measure(name: str, epsilons: list[float], seeds: int) -> list[dict]:
    ds = prepare(name)
    label = majority(ds)
    trivial = {"stream": float(np.mean(ds.y_train == label)),
               "test": float(np.mean(ds.y_test == label))}
    tol = float(np.sqrt(trivial["test"] * (1 - trivial["test"]) / len(ds.y_test)))
    rows = []
    for epsilon in epsilons:
        alone = [prior_alone(ds, epsilon, seed) for seed in range(seeds)]
        for fallback in (False, True):
            scores = {"stream": [], "test": []}
            for seed in range(seeds):
                m = _learner(ds, epsilon, seed, fallback)
                trace = m.run(ds.X_train, ds.y_train)
                scores["stream"].append(score(ds, trace.prequential_predictions,
                                              "stream")["accuracy"])
                held = np.array([m.predict_one(x) for x in ds.X_test])
                scores["test"].append(score(ds, held, "test")["accuracy"])
            rows.append({"data set": name, "group": group_of(name), "epsilon": epsilon,
                         "fallback": fallback, "trivial": trivial, "tolerance": tol,
                         "prior alone": {"mean": float(np.mean(alone)),
                                         "worst": float(np.min(alone))},
                         **{part: {"mean": float(np.mean(v)), "worst": float(np.min(v)),
                                   "T1": bool(np.min(v) >= trivial[part] - tol)}
                            for part, v in scores.items()}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.1, 1.0])
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # clipping warnings: the preprocessing clips ~5%
    rows = [r for name in BINARY for r in measure(name, args.epsilons, args.seeds)]
    print("| data set | group | eps | fallback | held out mean [worst] | T1 | "
          "prequential mean [worst] | T1 | trivial held / stream | prior alone, stream |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, s = r["test"], r["stream"]
        print(f"| {r['data set']} | {r['group']} | {r['epsilon']:g} | "
              f"{'yes' if r['fallback'] else 'no'} | {100 * t['mean']:.1f} "
              f"[{100 * t['worst']:.1f}] | {'pass' if t['T1'] else 'FAIL'} | "
              f"{100 * s['mean']:.1f} [{100 * s['worst']:.1f}] | "
              f"{'pass' if s['T1'] else 'FAIL'} | {100 * r['trivial']['test']:.1f} / "
              f"{100 * r['trivial']['stream']:.1f} | {100 * r['prior alone']['mean']:.1f} "
              f"[{100 * r['prior alone']['worst']:.1f}] |")
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps({"groups": GROUPS, "seeds": args.seeds, "rows": rows},
                              indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
