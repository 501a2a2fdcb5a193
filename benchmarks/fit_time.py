"""Fit time of the adapters' defaults and of the registry's ridge learners, one core.

CPU time (``time.process_time``) of ``OnlineClassifier().fit`` and
``OnlineRegressor().fit`` with their defaults, and of ``run`` of the registry learners
``ridge``, ``ridge_classifier`` and ``ridge_classifier_rff`` with its 32 random features
(built as the adapters build them: intercept, averaged releases; on 10 features the
default classifier runs x alone, ``uses_features``), on a 40,000 x 10 stream (rows / the
95th percentile of their norms). BLAS and OpenMP are held to one thread. The last row
runs the features' learner with every step solved (``solves_per_doubling=None``): what
the registry's solve schedule saves. Prints a table and writes JSON (default
benchmarks/results/fit_time.json).

    python benchmarks/fit_time.py
    python benchmarks/fit_time.py --rows 10000 --repeats 1   # quicker
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy loads BLAS: one core

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _timing import meta, speed_line, write_json  # noqa: E402

from dpol.adapters.registry import LEARNERS, make_learner  # noqa: E402
from dpol.adapters.sklearn import OnlineClassifier, OnlineRegressor  # noqa: E402
from dpol.learners._solve_schedule import solved_steps  # noqa: E402
from dpol.learners.random_features import N_RANDOM_FEATURES as N_FEATURES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 3.0  # the default classifier's goal at 40,000 x 10


def stream(rows: int, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y real, y +-1): a fixed stream, rows scaled so 95% have ||x|| <= 1."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, dim))
    X /= np.percentile(np.linalg.norm(X, axis=1), 95)
    real = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=rows)
    return X, real, np.where(X[:, 0] + X[:, 1] ** 2 > 0.05, 1.0, -1.0)


def cases(X, real, labels) -> dict[str, tuple]:
    """name -> (fit callable, registry learner name, solves_per_doubling override)."""
    def learner(name, features=None, **options):
        return lambda: make_learner(name, X.shape[1], horizon=len(X), epsilon=1.0, seed=0,
                                    fit_intercept=True, options=options or None,
                                    random_features=features
                                    ).run(X, labels if LEARNERS[name].task ==
                                          "classification" else real)

    return {
        "OnlineClassifier()": (lambda: OnlineClassifier(random_state=0).fit(X, labels > 0),
                               "ridge_classifier_rff", {}),
        "OnlineRegressor()": (lambda: OnlineRegressor(random_state=0).fit(X, real),
                              "ridge", {}),
        "ridge": (learner("ridge"), "ridge", {}),
        "ridge_classifier": (learner("ridge_classifier"), "ridge_classifier", {}),
        # on 10 features the entry runs x alone (uses_features): its 32 features, asked for
        "ridge_classifier_rff, 32 features": (learner("ridge_classifier_rff", N_FEATURES),
                                              "ridge_classifier_rff", {}),
        "ridge_classifier_rff, 32 features, every step": (
            learner("ridge_classifier_rff", N_FEATURES, solves_per_doubling=None),
            "ridge_classifier_rff", {"solves_per_doubling": None}),
    }


def cpu_seconds(fn, repeats: int) -> float:
    """Median CPU time of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # clipping notices: not what is timed
            fn()
        times.append(time.process_time() - start)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-every-step", action="store_true",
                        help="leave out the every-step reference row (~20 s a call)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "fit_time.json"))
    args = parser.parse_args(argv)
    X, real, labels = stream(args.rows, args.dim)
    info = meta(rows=args.rows, dim=args.dim, repeats=args.repeats, threads=1)
    print(speed_line(info["machine_speed"]))
    results = []
    for name, (fn, registry, override) in cases(X, real, labels).items():
        if args.skip_every_step and override:
            continue
        b = override.get("solves_per_doubling",
                         LEARNERS[registry].defaults(args.dim, 1.0, 1.0).get(
                             "solves_per_doubling"))
        solves = int(solved_steps(np.arange(1, args.rows + 1), b, args.rows).sum())
        seconds = cpu_seconds(fn, 1 if override else args.repeats)
        results.append({"case": name, "learner": registry, "solves_per_doubling": b,
                        "solves": solves, "cpu_seconds": round(seconds, 2)})
        print(f"{name:<34} B={b!s:<5} {solves:>6} solves  {seconds:6.2f} s CPU", flush=True)
    print(f"\n| fit ({args.rows:,} x {args.dim}, one core) | learner | B | solves | CPU s |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['case']} | {r['learner']} | {r['solves_per_doubling']} | "
              f"{r['solves']:,} | {r['cpu_seconds']} |")
    default = results[0]["cpu_seconds"]
    print(f"\nOnlineClassifier() {default} s against the {TARGET_S} s goal: "
          f"{'met' if default < TARGET_S else 'not met'}")
    body = {"meta": info, "target_seconds": TARGET_S, "results": results}
    write_json(args.out, body)
    return body


if __name__ == "__main__":
    main()
