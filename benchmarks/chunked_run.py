"""Streams larger than memory: ``dpol run --chunk-rows`` on a generated CSV and Parquet
file, its CPU rows per second and peak memory, beside a plain chunked read of the same
file in the same run.

A table of ``--rows`` rows x ``--dim`` features and a label is written in a temporary
folder as CSV (about 100 bytes a row) and as Parquet (pyarrow's default row groups). For
each format, two child processes run one after the other, measured by ``os.wait4``
(each child's own resource usage):

* ``read``: the plain chunked read, ``pandas.read_csv(chunksize=N)`` or pyarrow's
  ``iter_batches(N)``, each chunk turned into a float64 array (what any learner needs);
* ``dpol``: ``dpol run LEARNER FILE --chunk-rows N`` as a user types it: its non-private
  twin (the default ``--baseline``), imports, report and plot included.

Rows per second are rows over the child's CPU time (user + sys), not wall time: the
machine is shared, and a loaded box stretches wall time, not CPU time. Peak memory is
the child's ``ru_maxrss``. Prints a table and writes JSON (default
benchmarks/results/chunked_run.json).

    python benchmarks/chunked_run.py --rows 1000000          # ~2 min
    python benchmarks/chunked_run.py --rows 10000000         # ~20 min on a loaded box
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

#: the plain chunked reads, run as ``python -c CODE FILE CHUNK``: each chunk to float64
READERS = {
    "csv": "import sys, numpy as np, pandas as pd\n"
           "for c in pd.read_csv(sys.argv[1], chunksize=int(sys.argv[2])):\n"
           "    np.asarray(c.to_numpy(), dtype=np.float64)\n",
    "parquet": "import sys, numpy as np, pyarrow.parquet as pq\n"
               "for b in pq.ParquetFile(sys.argv[1]).iter_batches(int(sys.argv[2])):\n"
               "    np.column_stack([c.to_numpy() for c in b.columns])\n",
}


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


def write_parquet(csv: Path, path: Path) -> None:
    """The CSV's table as Parquet, streamed (pyarrow's CSV reader, one writer)."""
    import pyarrow.csv as pc
    import pyarrow.parquet as pq

    reader = pc.open_csv(csv)
    with pq.ParquetWriter(path, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def measure(cmd: list[str]) -> dict:
    """CPU seconds (user + sys), wall seconds and peak resident memory of one child."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read()}")
    return {"cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "wall_seconds": round(wall, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--learner", default="ridge")
    parser.add_argument("--formats", nargs="+", default=["csv", "parquet"],
                        choices=sorted(READERS))
    parser.add_argument("--data", help="folder to keep the generated files in (default: "
                        "a temporary folder, removed)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "chunked_run.json"))
    args = parser.parse_args(argv)
    dpol = str(Path(sys.executable).with_name("dpol"))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.data or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        csv = folder / f"d{args.rows}x{args.dim}.csv"
        if not csv.exists():
            t0 = time.perf_counter()
            write_csv(csv, args.rows, args.dim)
            print(f"wrote {csv} ({csv.stat().st_size / 2**20:.0f} MiB) in "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
        for fmt in args.formats:
            path = csv if fmt == "csv" else csv.with_suffix(".parquet")
            if not path.exists():
                write_parquet(csv, path)
            chunk = str(args.chunk_rows)
            for mode, cmd in (
                    ("read", [sys.executable, "-c", READERS[fmt], str(path), chunk]),
                    ("dpol", [dpol, "run", args.learner, str(path), "--chunk-rows", chunk,
                              "--seed", "0", "--out", str(Path(tmp) / f"out-{fmt}")])):
                r = {"format": fmt, "mode": mode, "rows": args.rows,
                     "file_mib": round(path.stat().st_size / 2**20, 1), **measure(cmd)}
                r["rows_per_cpu_second"] = round(args.rows / r["cpu_seconds"])
                results.append(r)
                print(f"{fmt:>8} {mode:>5} {args.rows:>11,} rows  {r['cpu_seconds']:>8.1f} s "
                      f"CPU  {r['rows_per_cpu_second']:>9,} rows/s  peak "
                      f"{r['peak_rss_mib']:>7.1f} MiB", file=sys.stderr)
    print("| format | run | rows | file MiB | CPU s | rows / CPU s | wall s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        what = "plain chunked read" if r["mode"] == "read" else f"dpol run {args.learner}"
        print(f"| {r['format']} | {what} | {r['rows']:,} | {r['file_mib']} | "
              f"{r['cpu_seconds']} | {r['rows_per_cpu_second']:,} | {r['wall_seconds']} | "
              f"{r['peak_rss_mib']} |")
    body = {"learner": args.learner, "dim": args.dim, "chunk_rows": args.chunk_rows,
            "cpus": os.cpu_count(), "load_average": os.getloadavg(), "results": results,
            "note": "CPU = the child's user + sys time; peak RSS its own ru_maxrss "
                    "(os.wait4); the dpol run includes its non-private twin"}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(body, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)
    return body


if __name__ == "__main__":
    main()
