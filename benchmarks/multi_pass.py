"""What mean-optimal strategies and several passes buy a counter-based learner.

(a) One pass, equal epsilon: the excess average regret (private minus non-private, same
stream, same comparator) of PrivateFTRL and PrivateFTAL with each strategy: the binary
tree, square-root Toeplitz, BLT optimised for the max loss ("blt") and for the mean loss
("blt-mean"), the dense mean-optimal factorization ("dense-mean", T <= 2048 only) and
the banded square root (64 bands). The stream is the excess-regret benchmark's logistic
one (``dpol.datasets.logistic_stream``, d = 10, delta = 1e-6).

(b) Several passes: PrivateFTRL with E in {1, 2, 4, 8} passes over a fixed training set
of n records (synthetic logistic and linear regression, and river's Shuttle, n = 5000
each), at epsilon in {1, 10} (delta = 1e-6, one record protected over all passes), per
strategy (tree, toeplitz, blt, banded with 64 bands and with n bands, "banded-n", whose
sensitivity grows exactly like sqrt(E)), scored by the final model's held-out loss: the
last iterate and the averaged iterates (``model_weights``). Linear models without an
intercept; logistic loss on the ball of radius 5, least squares on the unit ball.

    python benchmarks/multi_pass.py               # the default run (~10 min, 2 workers)
    python benchmarks/multi_pass.py --quick       # fewer seeds, smaller sets
    python benchmarks/multi_pass.py --eta-sweep   # the measurement behind PrivateFTRL's eta

Prints tables and writes ``benchmarks/results/multi_pass.json`` (``multi_pass_eta.json``).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from _utility_data import prepare

from dpol.datasets import logistic_stream
from dpol.errors import ClippingWarning, NonPrivateWarning
from dpol.evaluation import best_fixed_point
from dpol.experiments.sweeps.runner import run_sweep
from dpol.learners import PrivateFTAL, PrivateFTRL
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

DELTA = 1e-6
#: strategy label -> (counter name, counter options)
STRATEGIES = {"tree": ("tree", {}), "toeplitz": ("toeplitz", {}), "blt": ("blt", {}),
              "blt-mean": ("blt", {"objective": "mean"}), "dense-mean": ("dense_mean", {}),
              "banded": ("banded", {"bands": 64}), "banded-n": ("banded", {})}
SETS = {"synthetic-logistic": "logistic", "synthetic-regression": "squared",
        "shuttle": "logistic"}
RADIUS = {"logistic": 5.0, "squared": 1.0}
FTAL_MU = 0.1


def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    for kind in (NonPrivateWarning, ClippingWarning):
        warnings.simplefilter("ignore", kind)
    return w


# ---------------------------------------------------------------------------- (a)
def one_pass_task(learner, strategy, T, epsilon, seed):
    s = logistic_stream(T, 10, seed=2012)
    counter, options = STRATEGIES[strategy]
    common = dict(horizon=T, epsilon=epsilon, delta=0.0 if math.isinf(epsilon) else DELTA,
                  counter=counter, counter_options=options, seed=seed)
    w = _quiet()
    try:
        if learner == "FTRL":
            loss, domain = LogisticLoss(), L2Ball(10, 1.0)
            m = PrivateFTRL(10, loss=loss, domain=domain, **common)
        else:
            loss, domain = Regularized(LogisticLoss(), FTAL_MU), L2Ball(10, 1.0)
            m = PrivateFTAL(10, loss=loss, domain=domain, **common)
        u = best_fixed_point(loss, s.X, s.y, domain)
        start = time.perf_counter()
        trace = m.run(s.X, s.y, comparator=u)
    finally:
        w.__exit__(None, None, None)
    return {"part": "a", "learner": learner, "strategy": strategy, "T": T, "epsilon": epsilon,
            "seed": seed, "avg_regret": float(trace.average_regret[-1]),
            "real_epsilon": m.privacy.epsilon, "seconds": time.perf_counter() - start}


# ---------------------------------------------------------------------------- (b)
@functools.lru_cache(maxsize=4)
def _data(name, n):
    ds = prepare(name, max_rows=n)
    return ds.X_train, ds.y_train, ds.X_test, ds.y_test


def _held_out(kind, w, X, y):
    z = X @ w
    if kind == "logistic":
        return float(np.mean(np.logaddexp(0.0, -y * z))), float(np.mean(np.sign(z) == y))
    return float(np.mean(0.5 * (np.clip(z, -1, 1) - y) ** 2)), math.nan


def passes_task(data, strategy, epochs, epsilon, seed, n, eta_scale=1.0):
    X, y, Xt, yt = _data(data, n)
    kind = SETS[data]
    loss = LogisticLoss() if kind == "logistic" else SquaredLoss()
    counter, options = STRATEGIES[strategy]
    if strategy == "banded-n":  # n bands: a record's steps never share a band
        options = {"bands": len(y)}
    w = _quiet()
    try:
        m = PrivateFTRL(X.shape[1], loss=loss, domain=L2Ball(X.shape[1], RADIUS[kind]),
                        horizon=epochs * len(y), epochs=epochs, epsilon=epsilon,
                        delta=0.0 if math.isinf(epsilon) else DELTA, counter=counter,
                        counter_options=options, seed=seed)
        m.eta *= eta_scale  # the sweep behind the default (a plain step size)
        start = time.perf_counter()
        m.run_passes(X, y)
    finally:
        w.__exit__(None, None, None)
    last, acc_last = _held_out(kind, m.weights, Xt, yt)
    avg, acc_avg = _held_out(kind, m.model_weights, Xt, yt)
    return {"part": "b", "data": data, "strategy": strategy, "epochs": epochs,
            "epsilon": epsilon, "seed": seed, "eta_scale": eta_scale, "eta": m.eta,
            "loss_last": last, "loss_avg": avg, "acc_last": acc_last, "acc_avg": acc_avg,
            "real_epsilon": m.privacy.epsilon, "seconds": time.perf_counter() - start}


def optimum(data, n):
    """Held-out loss of the best fixed point of the training loss (the non-private goal)."""
    X, y, Xt, yt = _data(data, n)
    kind = SETS[data]
    loss = LogisticLoss() if kind == "logistic" else SquaredLoss()
    u = best_fixed_point(loss, X, y, L2Ball(X.shape[1], RADIUS[kind]))
    return _held_out(kind, u, Xt, yt)


def _mean(rows, key):
    vals = np.array([r[key] for r in rows])
    return float(vals.mean()), float(vals.std())


def table_a(results):
    out = []
    for (learner, T) in sorted({(r["learner"], r["T"]) for r in results}):
        sel = [r for r in results if (r["learner"], r["T"]) == (learner, T)]
        base = next(r["avg_regret"] for r in sel if math.isinf(r["epsilon"]))
        for eps in sorted({r["epsilon"] for r in sel if not math.isinf(r["epsilon"])}):
            for strategy in STRATEGIES:
                runs = [r for r in sel if (r["epsilon"], r["strategy"]) == (eps, strategy)]
                if runs:
                    mean, std = _mean(runs, "avg_regret")
                    out.append({"learner": learner, "T": T, "epsilon": eps,
                                "strategy": strategy, "avg_regret": mean,
                                "excess": mean - base, "std": std, "seeds": len(runs),
                                "nonprivate": base})
    return out


def table_b(results):
    out = []
    keys = sorted({(r["data"], r["epsilon"], r["strategy"], r["epochs"]) for r in results},
                  key=lambda k: (k[0], k[1], list(STRATEGIES).index(k[2]), k[3]))
    for data, eps, strategy, epochs in keys:
        runs = [r for r in results if (r["data"], r["epsilon"], r["strategy"],
                                       r["epochs"]) == (data, eps, strategy, epochs)]
        row = {"data": data, "epsilon": eps, "strategy": strategy, "epochs": epochs,
               "seeds": len(runs), "eta": runs[0]["eta"]}
        for key in ("loss_last", "loss_avg", "acc_last", "acc_avg", "seconds"):
            row[key], row[key + "_std"] = _mean(runs, key)
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--eta-sweep", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    seeds = 1 if args.quick else 3
    n = 2000 if args.quick else 5000
    eps_b = (1.0, 10.0)
    if args.eta_sweep:
        scales = (0.25, 1.0, 4.0, 16.0, 64.0, 256.0)
        tasks = [dict(data=d, strategy="blt", epochs=e, epsilon=eps, seed=s, n=n,
                      eta_scale=c) for d in SETS for e in (1, 4) for eps in eps_b
                 for c in scales for s in range(2)]
        rows = table_b_scales(run_sweep(passes_task, tasks, workers=args.workers), scales)
        _write(args.out / "multi_pass_eta.json", {"rows": rows, "n": n})
        return
    tasks = []
    for T in ((1024,) if args.quick else (1024, 16384)):
        for learner in ("FTRL", "FTAL"):
            names = [s for s in STRATEGIES if (T <= 2048 or s != "dense-mean")
                     and not (learner == "FTAL" and s == "toeplitz" and T > 2048)]
            tasks += [dict(learner=learner, strategy=s, T=T, epsilon=eps, seed=seed)
                      for s in names for eps in (0.1, 1.0) for seed in range(seeds)]
            tasks.append(dict(learner=learner, strategy="tree", T=T, epsilon=math.inf, seed=0))
    tasks += [dict(data=d, strategy=s, epochs=e, epsilon=eps, seed=seed, n=n)
              for d in SETS for eps in eps_b
              for s in ("tree", "toeplitz", "blt", "banded", "banded-n")
              for e in (1, 2, 4, 8) for seed in range(seeds)]
    tasks += [dict(data=d, strategy="blt", epochs=e, epsilon=math.inf, seed=0, n=n)
              for d in SETS for e in (1, 2, 4, 8)]
    start = time.perf_counter()
    results = run_sweep(_dispatch, tasks, workers=args.workers)
    rows_a = table_a([r for r in results if r["part"] == "a"])
    rows_b = table_b([r for r in results if r["part"] == "b"])
    optima = {d: optimum(d, n) for d in SETS}
    print(f"(a) one pass, logistic stream d = 10, delta = {DELTA:g}, {seeds} seeds")
    print(f"{'learner':7} {'T':>6} {'eps':>4} {'strategy':11} {'avg regret':>11} "
          f"{'excess':>10} {'std':>8}")
    for r in rows_a:
        print(f"{r['learner']:7} {r['T']:6d} {r['epsilon']:4g} {r['strategy']:11} "
              f"{r['avg_regret']:11.5f} {r['excess']:10.5f} {r['std']:8.1e}")
    print(f"\n(b) PrivateFTRL, E passes over n = {n} records, held-out loss (last / average)")
    for d, (loss, acc) in optima.items():
        print(f"  {d}: best fixed point held-out loss {loss:.4f}"
              + ("" if math.isnan(acc) else f", accuracy {acc:.4f}"))
    print(f"{'data':21} {'eps':>4} {'strategy':9} {'E':>2} {'last':>8} {'avg':>8} "
          f"{'acc avg':>8} {'eta':>8} {'s/run':>6}")
    for r in rows_b:
        print(f"{r['data']:21} {r['epsilon']:4g} {r['strategy']:9} {r['epochs']:2d} "
              f"{r['loss_last']:8.4f} {r['loss_avg']:8.4f} {r['acc_avg']:8.4f} "
              f"{r['eta']:8.4f} {r['seconds']:6.2f}")
    _write(args.out / "multi_pass.json", {
        "delta": DELTA, "seeds": seeds, "n": n, "one_pass": rows_a, "passes": rows_b,
        "optima": {d: {"loss": v[0], "accuracy": v[1]} for d, v in optima.items()},
        "wall_seconds": time.perf_counter() - start, "machine": platform.platform(),
        "python": platform.python_version()})


def table_b_scales(results, scales):
    rows = []
    for c in scales:
        for r in table_b([r for r in results if r["eta_scale"] == c]):
            rows.append({**r, "eta_scale": c})
    for key in ("loss_avg", "loss_last"):
        _print_scales(rows, scales, key)
    return rows


def _print_scales(rows, scales, key):
    print(f"held-out {key}")
    print(f"{'data':21} {'eps':>4} {'E':>2} " + " ".join(f"c={c:<6g}" for c in scales))
    for d in SETS:
        for eps in sorted({r["epsilon"] for r in rows}):
            for e in sorted({r["epochs"] for r in rows}):
                vals = [next(r[key] for r in rows if (r["data"], r["epsilon"],
                             r["epochs"], r["eta_scale"]) == (d, eps, e, c)) for c in scales]
                print(f"{d:21} {eps:4g} {e:2d} " + " ".join(f"{v:8.4f}" for v in vals))


def _dispatch(**task):
    return passes_task(**task) if "data" in task else one_pass_task(**task)


def _clean(value):
    """JSON without NaN (null: no accuracy for a regression)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def _write(path, payload):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(payload), indent=2, default=float))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
