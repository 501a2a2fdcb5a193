"""Streams larger than memory: ``dpol run --chunk-rows`` on a generated CSV, its peak memory
and rows per second, beside the whole-file run.

A CSV of ``--rows`` rows x ``--dim`` features and a label (about 100 bytes a row) is
written in a temporary folder; ``dpol run LEARNER FILE --chunk-rows N --no-baseline`` runs
in a child process, whose peak resident memory (``ru_maxrss``) and wall time are read
after it ends. The whole-file run (no ``--chunk-rows``) is measured on ``--whole-rows``
rows for comparison (it holds the table, the releases and the losses in memory).
Prints a table and writes JSON (default benchmarks/results/chunked_run.json).

    python benchmarks/chunked_run.py                    # 10 million rows, d = 10
    python benchmarks/chunked_run.py --rows 1000000     # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def write_csv(path: Path, rows: int, dim: int, block: int = 200_000) -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=dim) / np.sqrt(dim)
    with open(path, "w") as fh:
        fh.write(",".join([f"x{i}" for i in range(dim)] + ["label"]) + "\n")
        for start in range(0, rows, block):
            n = min(block, rows - start)
            X = rng.normal(size=(n, dim)) / (2.0 * np.sqrt(dim))
            y = X @ w + 0.05 * rng.normal(size=n)
            np.savetxt(fh, np.column_stack([X, y]), delimiter=",", fmt="%.5f")


def measure(args: list[str]) -> dict:
    """Wall time and peak resident memory of one ``dpol`` child process (``os.wait4``:
    that child's own resource usage)."""
    dpol = str(Path(sys.executable).with_name("dpol"))
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([dpol, *args], stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"dpol {' '.join(args)} failed:\n{err.read()}")
    return {"seconds": round(wall, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--whole-rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--learner", default="pqftl")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "chunked_run.json"))
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for label, rows, chunked in (("whole file", args.whole_rows, False),
                                     ("chunked", args.whole_rows, True),
                                     ("chunked", args.rows, True)):
            path = tmp / f"d{rows}.csv"
            if not path.exists():
                t0 = time.perf_counter()
                write_csv(path, rows, args.dim)
                print(f"wrote {rows:,} rows ({path.stat().st_size / 2**20:.0f} MiB) in "
                      f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
            cmd = ["run", args.learner, str(path), "--out", str(tmp / f"out{rows}{chunked}"),
                   "--no-baseline", *(["--chunk-rows", str(args.chunk_rows)] if chunked
                                      else [])]
            r = measure(cmd)
            r.update(mode=label, rows=rows, file_mib=round(path.stat().st_size / 2**20, 1),
                     rows_per_second=round(rows / r["seconds"]))
            results.append(r)
            print(f"{label:>10} {rows:>11,} rows  {r['seconds']:>8.1f} s  "
                  f"{r['rows_per_second']:>9,} rows/s  peak {r['peak_rss_mib']:>7.1f} MiB",
                  file=sys.stderr)
    print("| mode | rows | file MiB | seconds | rows/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['mode']} | {r['rows']:,} | {r['file_mib']} | {r['seconds']} | "
              f"{r['rows_per_second']:,} | {r['peak_rss_mib']} |")
    body = {"learner": args.learner, "dim": args.dim, "chunk_rows": args.chunk_rows,
            "cpus": os.cpu_count(), "results": results,
            "note": "peak RSS is each child's own ru_maxrss (os.wait4)"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(body, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)
    return body


if __name__ == "__main__":
    main()
