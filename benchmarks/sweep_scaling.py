"""Sweep scaling: a 64-cell grid on 1 and 2 workers of each engine (local, Ray, Dask).

The grid (PQFTL and FTAL x 4 epsilons x 8 seeds on the synthetic regression stream,
``--horizon`` rows each) runs once per engine and worker count, each run into a fresh
results store, as ``dpol sweep`` runs it. Reported per run: the engine's start-up, the
wall time of the 64 cells, the speed-up of 2 workers over 1, and the per-task overhead,
``(workers x wall - sum of the cells' own times) / cells``: what a task costs beyond its
own computation (shipping it, scheduling, the result back, the store's commit, and idle
workers at the end). Every run must give the same results, bit for bit (checked here).
Engines that are not installed are skipped. Local with 1 worker is one worker process
here (``dpol sweep --workers 1`` runs in its own process instead), and every engine's
workers use one BLAS thread each.

    python benchmarks/sweep_scaling.py                 # horizon 5,000: ~0.1 s per cell
    python benchmarks/sweep_scaling.py --quick         # horizon 500

Prints a table and writes JSON (default benchmarks/results/sweep_scaling.json).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from dpol.experiments.sweeps.cell import run_cell
from dpol.experiments.sweeps.config import cell_key, parse_config
from dpol.experiments.sweeps.engines import open_engine
from dpol.experiments.sweeps.engines.local_engine import LocalEngine
from dpol.experiments.sweeps.runner import run_tasks
from dpol.experiments.sweeps.store import ResultStore

RUN_FACTS = {"seconds", "fit_seconds", "worker", "backend", "finished_at"}


def grid(horizon: int) -> list[dict]:
    return parse_config({"horizon": horizon, "grid": {
        "learners": ["pqftl", "ftal"], "epsilons": [0.5, 1.0, 2.0, 4.0], "seeds": 8,
        "datasets": ["synthetic-regression"]}}).cells


def one_run(backend: str, workers: int, cells: list[dict], store: Path) -> tuple[dict, dict]:
    keys = [cell_key(c) for c in cells]
    with ResultStore(store) as results:
        started = time.perf_counter()
        with open_engine(backend, workers) as engine:
            if backend == "local":  # a process pool even for 1 worker: like for like
                engine = LocalEngine(workers, in_process=False)
            ready = time.perf_counter()
            run_tasks(engine, run_cell, cells,
                      lambda i, r: results.put(keys[i], cells[i], r, backend))
            ended = time.perf_counter()
            engine.close()
        rows = results.rows()
    busy = sum(r["seconds"] for r in rows)
    assert all(r["status"] == "done" for r in rows), [r["error"] for r in rows]
    facts = {"backend": backend, "workers": workers, "cells": len(cells),
             "startup_s": ready - started, "wall_s": ended - ready, "cells_s": busy,
             "overhead_ms_per_task": 1e3 * (workers * (ended - ready) - busy) / len(cells)}
    return facts, {r["key"]: {k: v for k, v in r.items() if k not in RUN_FACTS}
                   for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="horizon 500")
    parser.add_argument("--backends", default="local,ray,dask")
    parser.add_argument("--out", default="benchmarks/results/sweep_scaling.json")
    args = parser.parse_args()
    horizon = 500 if args.quick else args.horizon
    cells = grid(horizon)
    needs = {"local": None, "ray": "ray", "dask": "distributed"}
    runs, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            if needs[backend] and importlib.util.find_spec(needs[backend]) is None:
                print(f"{backend}: not installed, skipped")
                continue
            for workers in (1, 2):
                facts, rows = one_run(backend, workers, cells,
                                      Path(tmp, f"{backend}{workers}.sqlite"))
                reference = reference or rows
                facts["same_bits_as_first_run"] = rows == reference
                runs.append(facts)
    by = {(r["backend"], r["workers"]): r for r in runs}
    local2 = by.get(("local", 2))
    print(f"{len(cells)} cells, horizon {horizon}, {os.cpu_count()} CPUs")
    print(f"{'backend':8} {'workers':>7} {'start s':>8} {'wall s':>8} {'speed-up':>8} "
          f"{'overhead ms/task':>16} {'vs local':>9} {'same bits':>9}")
    for r in runs:
        one = by.get((r["backend"], 1))
        r["speedup"] = one["wall_s"] / r["wall_s"] if one else None
        r["overhead_vs_local_ms"] = (r["overhead_ms_per_task"] - local2["overhead_ms_per_task"]
                                     if local2 and r["workers"] == 2 else None)
        vs = "" if r["overhead_vs_local_ms"] is None else f"{r['overhead_vs_local_ms']:+.1f}"
        print(f"{r['backend']:8} {r['workers']:>7} {r['startup_s']:>8.2f} {r['wall_s']:>8.2f} "
              f"{r['speedup']:>8.2f} {r['overhead_ms_per_task']:>16.1f} {vs:>9} "
              f"{r['same_bits_as_first_run']!s:>9}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"horizon": horizon, "cells": len(cells),
                               "cpus": os.cpu_count(), "python": platform.python_version(),
                               "runs": runs}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
