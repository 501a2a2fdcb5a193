"""dpol train measured: rows/s against workers, the engine's per-step overhead, peak memory
of the driver and of each worker, and accuracy after 1-5 epochs at epsilon 1 and 4
against the one-pass online learner and non-private training.

    python benchmarks/training.py [--rows 1000000 10000000] [--accuracy-rows 2000 20000]
                                  [--only throughput|accuracy|failover]

Writes benchmarks/results/training.json and prints a table (docs/benchmarks/training.md).
Each throughput cell runs in a fresh process (its peak memory is its own); the data is a
generated Parquet folder under /tmp (20 features, float32, files of 500k rows).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "training.json"
D = 20
FILE_ROWS = 500_000
BATCH = 10_000
TRUTH = np.random.default_rng(12345).normal(size=D)


def rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n rows of norm about 0.7 (inside clip 1's region) and labels of a noisy halfspace."""
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(n, D)) / np.sqrt(2 * D)).astype(np.float32)
    y = np.where(X @ TRUTH + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def make_folder(n: int) -> Path:
    """/tmp/dpol-train-{n}: ceil(n / 500k) Parquet files (made once)."""
    import pandas as pd

    folder = Path(f"/tmp/dpol-train-{n}")
    done = folder / "_complete"
    if done.exists():
        return folder
    folder.mkdir(exist_ok=True)
    for i, lo in enumerate(range(0, n, FILE_ROWS)):
        X, y = rows(min(FILE_ROWS, n - lo), seed=i)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(D)]).assign(y=y)
        frame.to_parquet(folder / f"part-{i:05d}.parquet")
    done.touch()
    return folder


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(engine: str, workers: int, folder: str, tiny: str) -> dict:
    """One cell, in this (fresh) process: 1 epoch over ``folder``, then 200 steps of 10
    rows on ``tiny`` (the engine's own cost of a step)."""
    from dpol.experiments.training import train

    run = dict(label="y", epsilon=1.0, delta=1e-7, counter="banded", seed=0)
    cluster, address, client = None, None, None
    if engine == "dask":
        import distributed

        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0")
        address = cluster.scheduler_address
        client = distributed.Client(address)
    began = time.perf_counter()
    big = train(folder, batch_size=BATCH, engine=engine, address=address, **run)
    total = time.perf_counter() - began
    small = train(tiny, batch_size=10, engine=engine, address=address, **run)
    out = {"engine": engine, "workers": workers, "rows": big.n_rows, "steps": big.steps,
           "seconds_total": total, "seconds_steps": big.seconds,
           "seconds_load": total - big.seconds, "rows_per_s": big.rows_per_second,
           "rows_per_s_with_load": big.n_rows / total,
           "ms_per_step": 1000 * big.seconds / big.steps,
           "overhead_ms_per_step": 1000 * small.seconds / small.steps,
           "driver_peak_mib": peak_mib()}
    if client is not None:
        peaks = client.run(peak_mib)
        out["worker_peak_mib"] = sorted(peaks.values())
        client.close()
        cluster.close()
    return out


def throughput(n: int) -> list[dict]:
    folder, tiny = make_folder(n), make_folder(2_000)
    cells = []
    for engine, workers in (("local", 1), ("dask", 1), ("dask", 2)):
        proc = subprocess.run([sys.executable, __file__, "--child", engine, str(workers),
                               str(folder), str(tiny)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
        if proc.returncode:
            raise SystemExit(f"cell {engine} x{workers} failed:\n{proc.stderr[-3000:]}")
        cells.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"  {engine} x{workers}: {cells[-1]['rows_per_s']:,.0f} rows/s", flush=True)
    return cells


KILL = """
import os, signal, sys
from dpol.experiments.training import train
def die(t, _total):
    if t == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)  # no handler, no cleanup: a killed driver
train(sys.argv[1], checkpoint=sys.argv[2], checkpoint_every=25, on_step=die, **RUN)
"""


def failover(n: int) -> dict:
    """A driver killed by SIGKILL at step 60 (checkpoints every 25 steps), resumed from its
    last checkpoint, against the uninterrupted run: are the releases the same bits?"""
    import tempfile

    from dpol.experiments.training import train

    run = dict(label="y", epsilon=1.0, delta=1e-7, counter="banded", seed=0,
               batch_size=max(1, n // 100), epochs=2)
    folder, ckpt = make_folder(n), Path(tempfile.mkdtemp()) / "ckpt"
    proc = subprocess.run([sys.executable, "-c", f"RUN = {run!r}\n{KILL}", str(folder),
                           str(ckpt), "60"], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    began = time.perf_counter()
    resumed = train(folder, checkpoint=ckpt, resume=True, **run)
    seconds = time.perf_counter() - began
    whole = train(folder, **run)
    out = {"rows": n, "steps": whole.steps, "killed_at": 60, "exit_code": proc.returncode,
           "resumed_from": resumed.resumed_from, "resume_seconds": seconds,
           "same_bits": bool(np.array_equal(resumed.iterates, whole.iterates))}
    print(f"  failover: {out}", flush=True)
    return out


def accuracy(n: int) -> list[dict]:
    """Held-out accuracy on n training rows: DP-MF after E epochs at epsilon 1 and 4 (200
    steps an epoch, lr 2, banded counter), the one-pass online classifier (dpol's
    default), and non-private training (epsilon = inf, the same steps); mean over 5
    seeds of the noise (1 from 200k rows on, where every model is at the Bayes limit)."""
    from dpol.adapters.sklearn import OnlineClassifier
    from dpol.errors import NonPrivateWarning
    from dpol.experiments.training import train

    X, y = rows(n, seed=1000)
    Xt, yt = rows(50_000, seed=1001)
    Xt64 = Xt.astype(float)
    seeds = range(5 if n < 200_000 else 1)
    score = lambda w: float(np.mean(np.sign(Xt64 @ w) == yt))  # noqa: E731
    out = []

    def cell(model: str, eps: float, epochs: int, scores: list[float]) -> None:
        out.append({"rows": n, "model": model, "epsilon": eps, "epochs": epochs,
                    "accuracy": float(np.mean(scores)), "min": min(scores),
                    "max": max(scores), "seeds": len(scores)})

    for eps in (1.0, 4.0, float("inf")):
        for epochs in range(1, 6):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonPrivateWarning)
                cell("dp-mf" if eps < float("inf") else "non-private", eps, epochs, [
                    score(train((X, y), batch_size=n // 200, epochs=epochs, epsilon=eps,
                                lr=2.0, delta=1e-7, counter="banded", seed=s).weights)
                    for s in seeds])
        if eps < float("inf"):
            cell("one-pass OnlineClassifier", eps, 1, [float(OnlineClassifier(
                epsilon=eps, delta=1e-7, random_state=s).fit(X.astype(float), y).score(
                    Xt64, yt)) for s in seeds])
        print(f"  {n:,} rows, epsilon {eps}: " + ", ".join(
            f"{c['accuracy']:.3f}" for c in out if c["epsilon"] == eps), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--accuracy-rows", type=int, nargs="+", default=[2_000, 20_000,
                                                                         200_000])
    parser.add_argument("--only", choices=["throughput", "accuracy", "failover"],
                        help="measure one part; the other is kept from the last JSON")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, workers, folder, tiny = args.child
        print(json.dumps(child(engine, int(workers), folder, tiny)))
        return
    result = {"machine": f"{os.cpu_count()} cores (shared)", "batch_size": BATCH,
              "features": D, "throughput": [], "accuracy": [], "failover": None}
    if args.only and OUT.exists():
        result = {**result, **json.loads(OUT.read_text())}
    if args.only in (None, "throughput"):
        result["throughput"] = []
        for n in args.rows:
            print(f"throughput, {n:,} rows:", flush=True)
            result["throughput"] += throughput(n)
    if args.only in (None, "failover"):
        print("failover (SIGKILL of the driver, then --resume):", flush=True)
        result["failover"] = failover(args.rows[0])
    if args.only in (None, "accuracy"):
        result["accuracy"] = []
        for n in args.accuracy_rows:
            print(f"accuracy, {n:,} training rows:", flush=True)
            result["accuracy"] += accuracy(n)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\n{'rows':>11} {'engine':>8} {'rows/s':>10} {'ms/step':>8} {'overhead':>9} "
          f"{'load s':>7} {'driver MiB':>10} {'workers MiB':>14}")
    for c in result["throughput"]:
        print(f"{c['rows']:>11,} {c['engine'] + ' x' + str(c['workers']):>8} "
              f"{c['rows_per_s']:>10,.0f} {c['ms_per_step']:>8.1f} "
              f"{c['overhead_ms_per_step']:>9.1f} {c['seconds_load']:>7.1f} "
              f"{c['driver_peak_mib']:>10.0f} "
              f"{'/'.join(f'{m:.0f}' for m in c.get('worker_peak_mib', [])):>14}")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
