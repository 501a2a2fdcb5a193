"""What a private automatic choice between the linear default and random features costs.

On river's Bananas no linear model beats the majority class. One way out, measured here:
choose, privately and online, between the default learner (linear, with an intercept)
and the same learner on 64 random Fourier features (``random_features=64``). Any such
choice reads the data, so the budget is split: each model runs at 45% of epsilon, and a
BLT counter at the other 10% releases the running sum of the per-row loss difference of
their prequential predictions (0/1 loss for classification, squared loss of predictions
clipped to [-1, 1] for regression: a difference in [-1, 1], resp. [-4, 4], the counter's
bound). Before row t the choice follows the sign of the release after row t - 1; the
final model is the one the last release favours. Every part gets delta / 3; basic
composition gives (epsilon, delta)-DP for the whole (the choice is post-processing).

Measured on the data sets of ``benchmarks/utility.py`` (its split and preprocessing),
epsilon = 1, 5 seeds, beside each model alone at the full epsilon. Not a dpol feature:
the figures behind the decision not to build it.

    python benchmarks/model_choice.py            # every data set (about 10 minutes)
    python benchmarks/model_choice.py --datasets bananas,phishing --seeds 2

Prints a table and writes ``benchmarks/results/model_choice.json``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from _utility_baselines import score
from _utility_data import SOURCES, available, prepare
from _utility_dpol import adapter_defaults, default_learners, delta_for

from dpol.adapters.registry import make_learner
from dpol.counters import BltCounter
from dpol.learners.random_features import N_RANDOM_FEATURES

ROOT = Path(__file__).resolve().parents[1]
EPSILON = 1.0
SELECTOR_SHARE = 0.1
METHODS = ("linear", "rff", "choice")


def _model(ds, epsilon: float, delta: float, seed: int, rff: bool):
    extra = adapter_defaults(ds.task)
    if rff:
        extra["random_features"] = N_RANDOM_FEATURES
    return make_learner(default_learners()[ds.task], ds.dim, horizon=len(ds.y_train),
                        epsilon=epsilon, delta=delta, x_bound=1.0, y_bound=1.0, seed=seed,
                        **extra)


def _losses(ds, predictions: np.ndarray) -> np.ndarray:
    if ds.task == "classification":
        return (np.where(predictions > 0, 1.0, -1.0) != ds.y_train).astype(float)
    return (np.clip(predictions, -1.0, 1.0) - np.clip(ds.y_train, -1.0, 1.0)) ** 2


def _fit(ds, epsilon: float, delta: float, seed: int, rff: bool) -> tuple:
    """Prequential and held-out predictions of one model."""
    model = _model(ds, epsilon, delta, seed, rff)
    trace = model.run(ds.X_train, ds.y_train)
    return trace.prequential_predictions, model.predict_rows(ds.X_test)


def run(ds, seed: int) -> dict:
    """The three methods' scores on one data set and seed."""
    key = "accuracy" if ds.task == "classification" else "r2"
    n, delta = len(ds.y_train), delta_for(len(ds.y_train))
    out = {}
    for name, rff in (("linear", False), ("rff", True)):
        preq, held = _fit(ds, EPSILON, delta, seed, rff)
        out[name] = (score(ds, preq, "stream")[key], score(ds, held, "test")[key])
    share = EPSILON * (1.0 - SELECTOR_SHARE) / 2.0
    (p_lin, h_lin), (p_rff, h_rff) = (_fit(ds, share, delta / 3, seed, rff)
                                      for rff in (False, True))
    diff = _losses(ds, p_lin) - _losses(ds, p_rff)  # > 0: the features did better
    counter = BltCounter(n, 1, epsilon=EPSILON * SELECTOR_SHARE, delta=delta / 3,
                         bound=1.0 if ds.task == "classification" else 4.0,
                         seed=10_000 + seed)
    sums = counter.run(diff[:, None])[:, 0]
    use_rff = np.concatenate([[False], sums[:-1] > 0.0])
    preq = np.where(use_rff, p_rff, p_lin)
    held = h_rff if sums[-1] > 0.0 else h_lin
    out["choice"] = (score(ds, preq, "stream")[key], score(ds, held, "test")[key])
    out["chose_rff"] = bool(sums[-1] > 0.0)
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", help=f"comma list of {', '.join(SOURCES)} (all)")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    names = [d.strip() for d in (args.datasets or ",".join(SOURCES)).split(",") if d.strip()]
    names = [d for d in names if d in SOURCES and available(d) is None]
    start, results = time.perf_counter(), {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping of the 5% of rows beyond the bound
        for name in names:
            ds = prepare(name)
            runs = [run(ds, seed) for seed in range(args.seeds)]
            results[name] = {
                "task": ds.task, "rows": len(ds.y_train),
                **{m: {part: {"mean": float(np.mean([r[m][i] for r in runs])),
                              "worst": float(np.min([r[m][i] for r in runs]))}
                       for i, part in enumerate(("prequential", "held_out"))}
                   for m in METHODS},
                "chose_rff": sum(r["chose_rff"] for r in runs)}
            row = results[name]
            print(f"{name:21s} " + "  ".join(
                f"{m} {row[m]['prequential']['mean']:.3f} [{row[m]['prequential']['worst']:.3f}]"
                f" / {row[m]['held_out']['mean']:.3f} [{row[m]['held_out']['worst']:.3f}]"
                for m in METHODS) + f"  chose rff {row['chose_rff']}/{args.seeds}", flush=True)
    out = {"protocol": {"epsilon": EPSILON, "seeds": args.seeds,
                        "selector_share": SELECTOR_SHARE, "delta": "min(1e-5, 1/n), / 3 each",
                        "scores": "accuracy or R^2; prequential / held-out, mean [worst]"},
           "results": results, "seconds": round(time.perf_counter() - start, 1)}
    path = ROOT / "benchmarks" / "results" / "model_choice.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {path}")
    return out


if __name__ == "__main__":
    main()
