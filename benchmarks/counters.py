"""Counter benchmark: error figure loss(), per-step add time, vectorized run time.

The speed claims first, measured in one run (both sides interleaved, medians of repeats):
``BinaryTreeCounter.run`` at d = 10, T = 1e6 is at least 20x faster than the ``add``
loop (timed in full), and within 3x of the time numpy needs just to draw the T x d
Gaussian noise (``rng.standard_normal((T, d))``, the physical floor); peak memory of
both is reported. Then a table over counters, T and d. Prints tables and writes JSON
(default benchmarks/results/counters.json).

    python benchmarks/counters.py            # headline at T = 1e6; table T in {2^10, 2^16, 2^20}
    python benchmarks/counters.py --quick    # headline at T = 2^14; table T in {2^10, 2^12}

Timings move with the machine's load: re-run on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import interleaved, meta, peak_mib, per_call_us, verdict, write_json

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter, WindowTreeCounter

COUNTERS = {
    "BinaryTreeCounter": (BinaryTreeCounter, {}),
    "BinaryTreeCounter(padded)": (BinaryTreeCounter, {"padded": True}),
    "HonakerTreeCounter": (HonakerTreeCounter, {}),
    "WindowTreeCounter(W=64)": (WindowTreeCounter, {"window": 64}),
}
ADD_STEPS = 2000  # per-step add time is the median over this many steps
REPEATS = 3  # interleaved repeats of run and of the noise floor in the table
HEADLINE_REPEATS = 5


def stream(horizon: int, dim: int, seed: int = 0) -> np.ndarray:
    """Elements of norm about 0.5 (a few are clipped at bound 1)."""
    return np.random.default_rng(seed).normal(size=(horizon, dim)) / np.sqrt(dim) * 0.5


def headline(horizon: int, dim: int = 10) -> dict:
    """Binary tree at (T, d): run against the add loop and against the noise floor."""
    values = stream(horizon, dim)

    def run():
        return BinaryTreeCounter(horizon, dim, noise_multiplier=1.0, seed=0).run(values)

    def floor():
        return np.random.default_rng(0).standard_normal((horizon, dim))

    med = interleaved({"floor": floor, "run": run}, HEADLINE_REPEATS)
    counter = BinaryTreeCounter(horizon, dim, noise_multiplier=1.0, seed=0)
    start = time.perf_counter()
    for v in values:
        counter.add(v)
    loop_s = time.perf_counter() - start
    return {
        "T": horizon, "d": dim, "repeats": HEADLINE_REPEATS,
        "run_s": med["run"], "noise_floor_s": med["floor"], "add_loop_s": loop_s,
        "run_over_floor": med["run"] / med["floor"], "add_loop_over_run": loop_s / med["run"],
        "run_peak_mib": peak_mib(run), "floor_peak_mib": peak_mib(floor),
        "input_mib": values.nbytes / 2**20,
    }


def bench_one(cls, extra, horizon, dim, seed=0):
    values = stream(horizon, dim, seed)

    def run():
        return cls(horizon, dim, noise_multiplier=1.0, seed=seed, **extra).run(values)

    med = interleaved({"floor": lambda: np.random.default_rng(seed).standard_normal(
        (horizon, dim)), "run": run}, REPEATS)
    stepper = cls(horizon, dim, noise_multiplier=1.0, seed=seed, **extra)
    add_us = per_call_us(lambda i: stepper.add(values[i]), min(ADD_STEPS, horizon))
    return {
        "counter": f"{cls.__name__}{'' if not extra else str(extra)}",
        "T": horizon, "d": dim, "loss": stepper.loss(),
        "add_us_median": float(np.median(add_us)),
        "run_s": med["run"], "noise_floor_s": med["floor"],
        "run_over_floor": med["run"] / med["floor"],
        "add_loop_over_run": float(np.median(add_us)) * 1e-6 * horizon / med["run"],
        "run_peak_mib": peak_mib(run),
    }


def print_headline(h: dict) -> None:
    print(f"BinaryTreeCounter, d = {h['d']}, T = {h['T']:,} (medians of {h['repeats']} "
          "interleaved runs)")
    print(f"  run            {h['run_s']:8.3f} s   peak {h['run_peak_mib']:7.1f} MiB "
          f"(input {h['input_mib']:.1f} MiB)")
    print(f"  noise floor    {h['noise_floor_s']:8.3f} s   peak {h['floor_peak_mib']:7.1f} MiB")
    print(f"  add loop       {h['add_loop_s']:8.3f} s")
    print(f"  run / floor    {h['run_over_floor']:8.2f}     target <= 3   "
          f"{verdict(h['run_over_floor'] <= 3.0)}")
    print(f"  loop / run     {h['add_loop_over_run']:8.1f}     target >= 20  "
          f"{verdict(h['add_loop_over_run'] >= 20.0)}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small horizons only")
    parser.add_argument("--out", default="benchmarks/results/counters.json")
    args = parser.parse_args(argv)
    head = headline(2**14 if args.quick else 1_000_000)
    print_headline(head)
    horizons = (2**10, 2**12) if args.quick else (2**10, 2**16, 2**20)
    rows = [bench_one(cls, extra, horizon, dim) | {"counter": name}
            for name, (cls, extra) in COUNTERS.items()
            for horizon in horizons for dim in (1, 10)]
    header = (f"{'counter':28s} {'T':>8s} {'d':>3s} {'loss()':>9s} {'add us':>8s} "
              f"{'run s':>8s} {'run/floor':>9s} {'loop/run':>9s} {'peak MiB':>9s}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['counter']:28s} {r['T']:8d} {r['d']:3d} {r['loss']:9.2f} "
              f"{r['add_us_median']:8.1f} {r['run_s']:8.4f} {r['run_over_floor']:9.1f} "
              f"{r['add_loop_over_run']:9.1f} {r['run_peak_mib']:9.1f}")
    write_json(args.out, {"meta": meta(add_steps_timed=ADD_STEPS, repeats=REPEATS),
                          "headline": head, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
