"""Helpers shared by the benchmark scripts: interleaved timing, peak memory, JSON output.

The benchmarks compare two timings measured in the same run (a vectorized path and its
floor or baseline), so both sides are repeated alternately and summarised by their
medians: on a busy machine a burst of load then hits both sides alike.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np


def interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median wall time (s) of each function, the functions called in turn ``repeats`` times."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(v)) for name, v in times.items()}


def per_call_us(fn: Callable[[int], object], n: int) -> np.ndarray:
    """Wall time in microseconds of each of ``fn(0)``, ..., ``fn(n - 1)``."""
    out = np.empty(n)
    clock = time.perf_counter
    for i in range(n):
        start = clock()
        fn(i)
        out[i] = clock() - start
    return out * 1e6


def peak_mib(fn: Callable[[], object]) -> float:
    """Peak of the memory numpy and Python allocate during ``fn()`` (tracemalloc), in MiB.

    Run it apart from the timed calls: tracing slows allocations down.
    """
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def max_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine_speed() -> dict[str, float]:
    """Two fixed workloads timed on this machine (medians of 7): the yardstick for absolute
    targets across sessions, whose machines differ (seen: 1.2-3x between two sessions).

    ``python_us``: pure-Python work, ``sum(range(1000))``, what per-step overhead scales
    with; ``normal_ns``: nanoseconds per standard normal drawn by numpy (1e6 at once).
    """
    rng, out = np.random.default_rng(0), np.empty(1_000_000)

    def python_work() -> None:
        for _ in range(100):
            sum(range(1000))

    t = interleaved({"python": python_work, "normal": lambda: rng.standard_normal(out=out)}, 7)
    return {"python_us": t["python"] * 1e4, "normal_ns": t["normal"] * 1e3}


def speed_line(speed: dict[str, float]) -> str:
    """The yardstick as one printed line."""
    return (f"machine speed: sum(range(1000)) {speed['python_us']:.1f} us, "
            f"one numpy normal {speed['normal_ns']:.1f} ns")


def meta(**extra: object) -> dict:
    """Versions, machine, its speed and load: the context a reader needs to weigh the numbers."""
    return {
        "python": platform.python_version(), "numpy": np.__version__,
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "machine_speed": machine_speed(),
        "load_average_1min": os.getloadavg()[0], "argv": sys.argv[1:], **extra,
    }


def write_json(path: str | Path, payload: dict) -> Path:
    """Write ``payload`` as indented JSON (creating the folder) and say where."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {out}")
    return out


def verdict(ok: bool) -> str:
    """PASS or FAIL, for the target lines of the tables."""
    return "PASS" if ok else "FAIL"


def jax_privacy_json(python: str | None, script: str, *args: str) -> list[dict]:
    """The JSON list a jax_privacy helper ``script`` (in benchmarks/) prints last, run by
    ``python`` (an interpreter of jax_privacy's own venv), or [] with the reason printed."""
    if python is None:
        print("jax_privacy: skipped (no --jax-python given)")
        return []
    helper = Path(__file__).with_name(script)
    try:
        done = subprocess.run([python, str(helper), *args], capture_output=True, text=True,
                              check=True, timeout=3600)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as err:
        print(f"jax_privacy: skipped ({type(err).__name__}: {err})")
        return []
