"""dpol's counters against straightforward per-step implementations of the papers' pseudo-code.

Two baselines per mechanism, both one step at a time as the papers write them:

* ``pseudo-code``: JKT Algorithm 5 (PrivateSum) step by step, keeping only what later
  releases need (the frontier, one node per set bit of t): a leaf and its completed
  ancestors get their noise when they close, the release sums the frontier's noisy values.
  Written below, a few lines of numpy.
* ``tests' reference``: the naive references the test suite checks dpol against
  (tests/reference_counters.py: every node in a dict, clean and noisy values side by side),
  for the binary tree (JKT Alg. 5), Honaker's tree and WDP's window tree (WDP Section III,
  with the layout of docs/errata.md, WDP-8).

Each is timed over the same stream against dpol's ``add`` loop and vectorized ``run``
(medians of interleaved repeats); the ratios are printed. Before timing, zero noise checks
that every implementation returns the exact prefix sums, so the same thing is computed.
Writes JSON (default benchmarks/results/reference.json).

    python benchmarks/reference.py            # T = 2^16, d = 10
    python benchmarks/reference.py --quick    # T = 2^12

Timings move with the machine's load: re-run on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _timing import interleaved, meta, write_json

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter, WindowTreeCounter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from reference_counters import (  # tests/ is no package: imported from its path
    ReferenceBinaryTree,
    ReferenceHonakerTree,
    ReferenceWindowTree,
)

sys.path.pop(0)

REPEATS = 3
WINDOW = 64


def pseudo_code_private_sum(values: np.ndarray, sigma: float, rng) -> np.ndarray:
    """JKT Alg. 5, per step: frontier of (clean, noisy) nodes keyed by level."""
    frontier: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    out = np.empty_like(values)
    for t, w in enumerate(values, start=1):
        clean, level = w, 0
        frontier_noisy = w + sigma * rng.standard_normal(w.shape)
        while level in frontier:  # binary-counter carry: the left sibling is complete
            left_clean, _ = frontier.pop(level)
            clean = left_clean + clean
            level += 1
            frontier_noisy = clean + sigma * rng.standard_normal(w.shape)
        frontier[level] = (clean, frontier_noisy)
        release = np.zeros(values.shape[1])
        for lvl in sorted(frontier, reverse=True):  # one node per set bit of t, top down
            release = release + frontier[lvl][1]
        out[t - 1] = release
    return out


def reference_run(ref, values: np.ndarray, sigma: float, rng) -> np.ndarray:
    d = values.shape[1]
    return ref.run(values, lambda key: sigma * rng.standard_normal(d))


def mechanisms(horizon: int) -> dict:
    """name -> (baseline(values, sigma, rng), dpol counter factory)."""
    def dpol(cls, **kw):
        return lambda dim, z: cls(horizon, dim, noise_multiplier=z, seed=0, **kw)

    return {
        "BinaryTree / pseudo-code (JKT Alg. 5)": (pseudo_code_private_sum,
                                                  dpol(BinaryTreeCounter)),
        "BinaryTree / tests' reference": (
            lambda v, s, r: reference_run(ReferenceBinaryTree(horizon), v, s, r),
            dpol(BinaryTreeCounter)),
        "HonakerTree / tests' reference": (
            lambda v, s, r: reference_run(ReferenceHonakerTree(horizon), v, s, r),
            dpol(HonakerTreeCounter)),
        f"WindowTree(W={WINDOW}) / tests' reference": (
            lambda v, s, r: reference_run(ReferenceWindowTree(horizon, WINDOW), v, s, r),
            dpol(WindowTreeCounter, window=WINDOW)),
    }


def check_exact_sums(horizon: int = 256, dim: int = 3) -> None:
    """Zero noise and integer data: every implementation must return np.cumsum exactly."""
    import warnings

    from dpol.errors import NonPrivateWarning

    values = np.random.default_rng(1).integers(-1, 2, size=(horizon, dim)).astype(float) / 4
    expect = np.cumsum(values, axis=0)
    for name, (baseline, factory) in mechanisms(horizon).items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            counter = factory(dim, 0.0)
        assert np.array_equal(baseline(values, 0.0, np.random.default_rng(0)), expect), name
        assert np.array_equal(counter.run(values), expect), name


def bench(horizon: int, dim: int) -> list[dict]:
    values = np.random.default_rng(0).normal(size=(horizon, dim)) / np.sqrt(dim) * 0.5
    rows = []
    for name, (baseline, factory) in mechanisms(horizon).items():
        sigma = factory(dim, 1.0).noise_scale  # the same per-node std on both sides

        def add_loop(factory=factory):
            counter = factory(dim, 1.0)
            for v in values:
                counter.add(v)

        med = interleaved({
            "baseline": lambda baseline=baseline, sigma=sigma: baseline(
                values, sigma, np.random.default_rng(0)),
            "add": add_loop,
            "run": lambda factory=factory: factory(dim, 1.0).run(values),
        }, REPEATS)
        rows.append({"mechanism": name, "T": horizon, "d": dim, "baseline_s": med["baseline"],
                     "dpol_add_loop_s": med["add"], "dpol_run_s": med["run"],
                     "baseline_over_run": med["baseline"] / med["run"],
                     "baseline_over_add_loop": med["baseline"] / med["add"]})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 2^12")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--out", default="benchmarks/results/reference.json")
    args = parser.parse_args(argv)
    check_exact_sums()
    horizon = 2**12 if args.quick else 2**16
    rows = bench(horizon, args.dim)
    print(f"T = {horizon:,}, d = {args.dim}; medians of {REPEATS} interleaved repeats")
    header = (f"{'mechanism / baseline':42s} {'baseline s':>10s} {'dpol add s':>10s} "
              f"{'dpol run s':>10s} {'base/run':>9s} {'base/add':>9s}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['mechanism']:42s} {r['baseline_s']:10.3f} {r['dpol_add_loop_s']:10.3f} "
              f"{r['dpol_run_s']:10.4f} {r['baseline_over_run']:9.0f} "
              f"{r['baseline_over_add_loop']:9.1f}")
    write_json(args.out, {"meta": meta(repeats=REPEATS), "rows": rows})
    return rows


if __name__ == "__main__":
    main()
