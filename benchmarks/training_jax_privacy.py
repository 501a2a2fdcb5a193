"""dpol's DP-MF training against jax_privacy's: the same logistic model, epsilon, batch
schedule and strategy family, each library's own strategy optimisation, sensitivity and
calibration.

    python benchmarks/training_jax_privacy.py --jax-python /path/to/jax-venv/bin/python
        [--rows 20000] [--epochs 5] [--batch-size 500] [--seeds 10]

``--jax-python`` names the interpreter of a separate environment with jax_privacy (a
benchmark-only extra: ``pip install jax-privacy``), which runs
benchmarks/_jax_privacy_training.py. Both train on the rows of benchmarks/training.py
(20 features, a noisy halfspace; held-out rows apart) for E epochs of b = rows //
batch-size steps, in the batches dpol's public schedule chose (``StepIndex``: every row
in one step of each epoch, the participation (E, b)); replace-one, clip 1, lr 2,
delta 1e-6; BLT strategies optimised for the max error under that participation.
dpol: ``PrivateMiniBatchFTRL`` (its BLT, its exact sensitivity, z from
``dpol.accounting.calibrate``); jax_privacy: ``buffered_toeplitz.optimize``,
``toeplitz.minsep_sensitivity_squared``, dp_accounting's PLD calibration,
``clipping.clipped_grad`` and ``noise_addition.matrix_factorization_privatizer``.

Reports per epsilon the held-out accuracy over seeds (mean and standard error) of both,
whether they agree within seed noise (|difference| <= 2 combined standard errors), the
noise std each added to a gradient sum, and the seconds of training a run takes
(CPU seconds, the median over seeds: jax's counts all its threads; the setup, BLT
optimisation and calibration, apart). Without noise (epsilon = inf) the two must release the same
iterate: the largest coordinate difference is printed. Writes
benchmarks/results/training_jax_privacy.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training import rows

from dpol.errors import NonPrivateWarning
from dpol.learners.dp_matrix_factorization import PrivateMiniBatchFTRL, StepIndex

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "training_jax_privacy.json"
EPSILONS = (1.0, 4.0, math.inf)
CLIP, LR, DELTA = 1.0, 2.0, 1e-6


def dpol_runs(X, y, X_test, y_test, args) -> dict:
    """dpol's runs: per epsilon and seed, accuracy, noise std, CPU seconds, the iterate."""
    out = {"runs": []}
    for epsilon in EPSILONS:
        for seed in range(args.seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonPrivateWarning)
                began = time.process_time()
                model = PrivateMiniBatchFTRL(
                    X.shape[1], n_rows=len(y), batch_size=args.batch_size,
                    epochs=args.epochs, clip=CLIP, lr=LR, epsilon=epsilon, delta=DELTA,
                    seed=seed)
                setup = time.process_time() - began
                began = time.process_time()
                model.fit(X, y)
                seconds = time.process_time() - began
            theta = model.weights
            out["runs"].append({
                "epsilon": epsilon, "seed": seed, "std": model.noise_std,
                "accuracy": float(np.mean(np.where(X_test @ theta > 0, 1.0, -1.0) == y_test)),
                "seconds": seconds, "setup_seconds": setup, "theta": theta.tolist()})
            if math.isinf(epsilon):
                break  # no noise: every seed is the same run
    return out


def jax_runs(X, y, X_test, y_test, args) -> dict:
    """The jax_privacy side, in its own interpreter, on the same rows and batches."""
    index = StepIndex(np.arange(len(y)), len(y) // args.batch_size)
    spec = {"epochs": args.epochs, "steps_per_epoch": len(y) // args.batch_size,
            "batch_size": args.batch_size, "lr": LR, "clip": CLIP, "delta": DELTA,
            "epsilons": [str(e) for e in EPSILONS], "seeds": list(range(args.seeds))}
    with tempfile.TemporaryDirectory() as tmp:
        data, spec_path = Path(tmp) / "data.npz", Path(tmp) / "spec.json"
        np.savez(data, X=X, y=y, X_test=X_test, y_test=y_test, order=index.order,
                 offsets=index.offsets)
        spec_path.write_text(json.dumps(spec))
        script = ROOT / "benchmarks" / "_jax_privacy_training.py"
        done = subprocess.run([args.jax_python, str(script), str(data), str(spec_path)],
                              capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for run in out["runs"]:
        run["epsilon"] = float(run["epsilon"])
    return out


def summary(dpol: dict, jax: dict) -> list[dict]:
    rows_ = []
    for epsilon in EPSILONS:
        d = [r for r in dpol["runs"] if r["epsilon"] == epsilon]
        j = [r for r in jax["runs"] if r["epsilon"] == epsilon]
        if math.isinf(epsilon):
            j = j[:1]
        acc_d, acc_j = (np.array([r["accuracy"] for r in runs]) for runs in (d, j))
        se = [float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else 0.0
              for a in (acc_d, acc_j)]
        combined = math.hypot(*se)
        diff = float(acc_d.mean() - acc_j.mean())
        rows_.append({
            "epsilon": epsilon, "dpol_accuracy": float(acc_d.mean()), "dpol_se": se[0],
            "jax_accuracy": float(acc_j.mean()), "jax_se": se[1], "difference": diff,
            "agree": bool(abs(diff) <= 2 * combined) if combined else None,
            "dpol_std": d[0]["std"], "jax_std": j[0]["std"],
            "dpol_seconds": float(np.median([r["seconds"] for r in d])),
            "jax_seconds": float(np.median([r["cpu_seconds"] for r in j])),
            "jax_wall_seconds": float(np.median([r["seconds"] for r in j])),
            "iterate_gap": float(np.max(np.abs(np.array(d[0]["theta"])
                                               - np.array(j[0]["theta"]))))
            if math.isinf(epsilon) else None})
    return rows_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax-python", required=True)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--test-rows", type=int, default=5_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    X, y = rows(args.rows, seed=101)
    X_test, y_test = rows(args.test_rows, seed=102)
    X, X_test = X.astype(np.float64), X_test.astype(np.float64)
    dpol, jax = dpol_runs(X, y, X_test, y_test, args), jax_runs(X, y, X_test, y_test, args)
    table = summary(dpol, jax)
    setup = dpol["runs"][0]["setup_seconds"]  # the first build: the optimiser's cache cold
    steps = args.epochs * (args.rows // args.batch_size)
    print(f"{args.rows} rows x {X.shape[1]} features, {args.epochs} epochs of "
          f"{args.rows // args.batch_size} steps ({steps} steps), batch {args.batch_size}, "
          f"{args.seeds} seeds; jax_privacy's BLT: {jax['buffers']} buffers, "
          f"sensitivity {jax['sensitivity']:.4f}, optimised in {jax['setup_seconds']:.1f} s; "
          f"dpol's built (BLT optimised, z calibrated) in {setup:.2f} CPU s")
    print("| epsilon | dpol accuracy | jax_privacy accuracy | agree | noise std dpol / jax "
          "| CPU s per epoch dpol / jax |")
    print("|---|---|---|---|---|---|")
    for r in table:
        gap = "" if r["iterate_gap"] is None else f" (iterates differ by {r['iterate_gap']:.1e})"
        print(f"| {r['epsilon']:g} | {r['dpol_accuracy']:.4f} +- {r['dpol_se']:.4f} | "
              f"{r['jax_accuracy']:.4f} +- {r['jax_se']:.4f} | {r['agree']}{gap} | "
              f"{r['dpol_std']:.3f} / {r['jax_std']:.3f} | "
              f"{r['dpol_seconds'] / args.epochs:.3f} / {r['jax_seconds'] / args.epochs:.3f} |")
    result = {"rows": args.rows, "test_rows": args.test_rows, "epochs": args.epochs,
              "batch_size": args.batch_size, "seeds": args.seeds, "clip": CLIP, "lr": LR,
              "delta": DELTA, "cpus": os.cpu_count(), "load_average": os.getloadavg(),
              "jax_buffers": jax["buffers"], "jax_sensitivity": jax["sensitivity"],
              "jax_setup_seconds": jax["setup_seconds"], "dpol_setup_seconds": setup,
              "summary": table}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
