"""Learner benchmark: learn_one microseconds per step (median) and run steps per second.

The online speed targets come first: ``learn_one`` of PrivateFTAL with a binary tree
counter at d = 10 takes at most 30 us per step (median) and PrivateQuadraticFTL at d = 10
at most 60 us. Then a table over learners at d in {10, 90}. Every learn_one step is timed
on its own; the median is over ``steps`` steps and, for the targets, the median of
``repeats`` such medians. Prints tables and writes JSON (default
benchmarks/results/learners.json).

    python benchmarks/learners.py            # T = 20,000 for run, 2,000 learn_one steps
    python benchmarks/learners.py --quick

Timings move with the machine's load: re-run on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import meta, per_call_us, speed_line, verdict, write_json

from dpol.learners import (
    PrivateFTAL,
    PrivateGIGA,
    PrivateIGD,
    PrivateOfflineLearner,
    PrivateOnlineFrankWolfe,
    PrivateQuadraticFTL,
)
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball, Simplex

#: the speed targets: (learner, d) -> largest median microseconds per learn_one step
TARGETS_US = {("PrivateFTAL(tree)", 10): 30.0, ("PrivateQuadraticFTL", 10): 60.0}


def learners(d: int, horizon: int) -> dict:
    logistic = Regularized(LogisticLoss(), 0.01)
    ridge = Regularized(SquaredLoss(), 1.0)
    common = {"horizon": horizon, "epsilon": 1.0, "delta": 1e-5, "seed": 0}
    return {
        "PrivateIGD": (lambda: PrivateIGD(d, loss=logistic, domain=L2Ball(d, 5.0), **common),
                       "sign"),
        "PrivateGIGA": (lambda: PrivateGIGA(d, loss=logistic, domain=L2Ball(d, 5.0), **common),
                        "sign"),
        "PrivateQuadraticFTL": (lambda: PrivateQuadraticFTL(d, **common), "real"),
        "PrivateOfflineLearner": (lambda: PrivateOfflineLearner(
            d, loss=LogisticLoss(), x_star_norm=5.0, excess=0.1, **common), "sign"),
        "PrivateFTAL": (lambda: PrivateFTAL(d, loss=ridge, domain=L2Ball(d), **common), "real"),
        "PrivateFTAL(tree)": (lambda: PrivateFTAL(d, loss=ridge, domain=L2Ball(d),
                                                  counter="tree", **common), "real"),
        "PrivateFTAL(W=64)": (lambda: PrivateFTAL(d, loss=ridge, domain=L2Ball(d), window=64,
                                                  **common), "real"),
        "PrivateOnlineFrankWolfe": (lambda: PrivateOnlineFrankWolfe(
            d, loss=ridge, domain=Simplex(d), **common), "real"),
    }


def data(d: int, horizon: int, kind: str):
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(horizon, d)))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    target = X @ rng.dirichlet(np.ones(d))
    return X, (np.sign(target - np.median(target)) if kind == "sign" else target)


def learn_one_us(build, X, y, steps: int) -> np.ndarray:
    """Microseconds of each of the first ``steps`` learn_one calls of a fresh learner."""
    learner = build()
    return per_call_us(lambda i: learner.learn_one(X[i], y[i]), steps)


def bench(name, build, kind, d, horizon, steps):
    X, y = data(d, horizon, kind)
    learner = build()
    start = time.perf_counter()
    learner.run(X, y)
    run_s = time.perf_counter() - start
    us = learn_one_us(build, X, y, steps)
    return {"learner": name, "d": d, "T_run": horizon, "run_steps_per_s": horizon / run_s,
            "learn_one_us_median": float(np.median(us)), "learn_one_us_mean": float(us.mean()),
            "learn_one_steps_timed": steps}


def targets(horizon: int, steps: int, repeats: int) -> list[dict]:
    out = []
    for (name, d), limit in TARGETS_US.items():
        build, kind = learners(d, horizon)[name]
        X, y = data(d, horizon, kind)
        medians = [float(np.median(learn_one_us(build, X, y, steps))) for _ in range(repeats)]
        out.append({"learner": name, "d": d, "target_us": limit, "repeats": repeats,
                    "median_us": float(np.median(medians)), "medians_us": medians,
                    "steps_timed": steps, "pass": float(np.median(medians)) <= limit})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="benchmarks/results/learners.json")
    args = parser.parse_args(argv)
    horizon, steps, repeats = (2000, 500, 3) if args.quick else (20_000, 2000, 5)
    context = meta()  # first: the yardstick on a machine not yet warmed by the runs
    print(speed_line(context["machine_speed"]))
    heads = targets(horizon, steps, repeats)
    print(f"learn_one targets (median us per step over {steps} steps, median of {repeats})")
    for h in heads:
        print(f"  {h['learner']:22s} d = {h['d']:2d}  {h['median_us']:7.1f} us   "
              f"target <= {h['target_us']:.0f}   {verdict(h['pass'])}")
    print()
    rows = [bench(name, build, kind, d, horizon, steps)
            for d in (10, 90) for name, (build, kind) in learners(d, horizon).items()]
    header = (f"{'learner':26s} {'d':>3s} {'run steps/s':>12s} {'learn_one us (median)':>22s} "
              f"{'(mean)':>8s}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['learner']:26s} {r['d']:3d} {r['run_steps_per_s']:12.0f} "
              f"{r['learn_one_us_median']:22.1f} {r['learn_one_us_mean']:8.1f}")
    write_json(args.out, {"meta": context, "targets": heads, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
