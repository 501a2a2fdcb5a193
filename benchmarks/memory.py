"""Memory benchmark: peak memory and time of a counter's ``run`` at T = 1e6, d = 10.

Each measurement runs in a fresh subprocess (``python benchmarks/memory.py --one NAME``),
so one counter's arrays never raise another's peak. Per counter it reports

- ``run_traced_mib``: the peak of what numpy and Python allocate *during* ``run``
  (tracemalloc), plus the input, which the caller holds: the run's own footprint;
- ``peak_rss_mib``: the process's peak resident set size (interpreter, numpy, scipy and
  the counter included), the figure the issue quotes;
- ``run_s``, ``run_cpu_s``: wall and CPU time of ``run`` (untraced, a second counter of
  the same seed; CPU time moves less with the shared machine's load).

The baseline is numpy with the data loaded: ``np.cumsum(V, axis=0)`` (input plus output).
``--label before`` / ``--label after`` stores the table under that label in the JSON
(default benchmarks/results/memory.json), keeping the other label: run it in a checkout
of main for "before" and of this branch for "after" (it imports the dpol of its checkout).
"before" below is main at b7b4eef: run held the T x d noise and its strategies'
temporaries whole; "after" streams run in chunks of 2^18 values.

    python benchmarks/memory.py --label after           # T = 1e6, d = 10
    python benchmarks/memory.py --quick --label after   # T = 2^16
    python benchmarks/memory.py --names toeplitz --T 4000000 --label toeplitz-4e6

"toeplitz-before-1e6" / "toeplitz-after-1e6" (and 1e5, 4e6): ``ToeplitzCounter.run``
before (c9c59f6) and after its blocked product (docs/benchmarks/performance.md).

Timings move with the machine's load: re-run on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _timing import max_rss_mib, meta, write_json

# measure this checkout's dpol, not an installed one (subprocesses inherit the path)
ROOT = str(Path(__file__).resolve().parents[1])
sys.path.insert(0, ROOT)

NAMES = ("numpy_cumsum", "tree", "honaker", "window", "toeplitz", "blt", "unbounded_tree")
MIB = 2**20


def build(name: str, horizon: int, dim: int):
    """The counter called ``name`` at noise multiplier 1, seed 0 (None for numpy)."""
    from dpol.counters import make_counter

    if name == "numpy_cumsum":
        return None
    if name == "unbounded_tree":  # no horizon (and not in main's code: "after" only)
        from dpol.counters import UnboundedTreeCounter

        return UnboundedTreeCounter(dim=dim, noise_multiplier=1.0, seed=0)
    kwargs = {"window": 1024} if name == "window" else {}
    return make_counter(name, horizon, dim, noise_multiplier=1.0, seed=0, **kwargs)


def measure_one(name: str, horizon: int, dim: int) -> dict:
    """One counter's run, measured in this process (called in a subprocess)."""
    values = np.random.default_rng(0).normal(size=(horizon, dim)) / np.sqrt(dim) * 0.5

    def run(counter):
        return np.cumsum(values, axis=0) if counter is None else counter.run(values)

    timed = build(name, horizon, dim)
    start, cpu = time.perf_counter(), time.process_time()
    run(timed)
    run_s, run_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    del timed
    traced = build(name, horizon, dim)
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = run(traced)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    return {"name": name, "T": horizon, "d": dim, "run_s": run_s, "run_cpu_s": run_cpu_s,
            "run_traced_mib": (peak + values.nbytes) / MIB,
            "input_mib": values.nbytes / MIB, "peak_rss_mib": max_rss_mib()}


def measure(horizon: int, dim: int, names: tuple[str, ...] = NAMES) -> list[dict]:
    """Every counter of ``names`` in its own subprocess, in the order given."""
    rows = []
    for name in names:
        proc = subprocess.run([sys.executable, __file__, "--one", name, "--T", str(horizon),
                               "--d", str(dim)], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONPATH": ROOT})
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return rows


def table(rows: list[dict], title: str) -> str:
    lines = [title, f"{'run of':<14}{'traced MiB':>12}{'x numpy':>9}{'peak RSS MiB':>14}"
             f"{'time s':>9}{'CPU s':>8}"]
    base = next(r for r in rows if r["name"] == "numpy_cumsum")
    for r in rows:
        lines.append(f"{r['name']:<14}{r['run_traced_mib']:>12.0f}"
                     f"{r['run_traced_mib'] / base['run_traced_mib']:>9.2f}"
                     f"{r['peak_rss_mib']:>14.0f}{r['run_s']:>9.2f}"
                     f"{r.get('run_cpu_s', float('nan')):>8.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 2^16 instead of 1e6")
    parser.add_argument("--T", type=int, default=None)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--label", default="after", help="key of this table in the JSON")
    parser.add_argument("--one", choices=NAMES, help="measure one counter, print JSON")
    parser.add_argument("--names", nargs="+", choices=NAMES, default=NAMES,
                        help="the counters to measure (numpy's cumsum always)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "memory.json"))
    args = parser.parse_args()
    horizon = args.T or (2**16 if args.quick else 10**6)
    if args.one:
        print(json.dumps(measure_one(args.one, horizon, args.d)))
        return
    rows = measure(horizon, args.d, ("numpy_cumsum", *(n for n in args.names
                                                       if n != "numpy_cumsum")))
    print(table(rows, f"{args.label}: run at T = {horizon}, d = {args.d}"))
    path = Path(args.out)
    payload = json.loads(path.read_text()) if path.exists() else {}
    payload[args.label] = {"meta": meta(T=horizon, d=args.d), "rows": rows}
    for label, entry in payload.items():
        if label != args.label:
            print("\n" + table(entry["rows"], f"{label}: run at T = {entry['meta']['T']}, "
                                                 f"d = {entry['meta']['d']}"))
    write_json(path, payload)


if __name__ == "__main__":
    main()
