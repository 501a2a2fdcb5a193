"""The report of benchmarks/strategies_mean.py as Markdown (docs/benchmarks/strategies.md)."""

from __future__ import annotations

import subprocess

INTRO = """\
Every counter strategy's loss at noise multiplier 1 — `loss("mean")`, the mean over the
stream of the release variance times the largest squared column norm (the error that
adds up into regret), and `loss("max")`, the worst step — and the time to build it from
scratch (the optimisers' caches cleared), beside jax_privacy's figures for the strategies
both libraries have, computed by jax_privacy itself in its own environment
(`benchmarks/_jax_privacy_strategies.py`) and put in dpol's normalisation (single
participation, squared sensitivity times the per-step error). Build times are the median
of {repeats} builds in each library; jax_privacy's first call compiles its code, later
calls may reuse that."""

NOTES = """\
Notes.

- *Dense mean-optimal* (`DenseMeanCounter`): the fixed point of Denisov, McMahan, Rush,
  Smith and Thakurta 2022, each step O(T) (the diagonal of a tridiagonal matrix's inverse
  square root by quadrature) and one O(T^3) factorization at the end; jax_privacy's
  optimiser takes an O(T^3) step and stops earlier (8.758 against 8.735 at T = 1024).
- *Banded matrix* (`BandedMatrixCounter`): L-BFGS on the band with an exact gradient
  computed by blocks of b rows, two column ranges on two threads from T = 1024 on; it
  stops when a step gains under 1e-8 of the loss, about 1.5e-7 above the limit, where
  jax_privacy's default (100 steps) stops about 1e-6 above.
- *BLT*: the same parametrisation as jax_privacy's; dpol's optimiser reaches equal or
  lower loss for max and mean error. Banded Toeplitz: the same optimum.
- The mean-optimal strategies' mean loss is below the square root's at every horizon,
  up to 2^20 (BLT for the mean; the dense optimum up to T = 1024)."""


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(payload: dict, command: str) -> str:
    """The Markdown page for ``payload`` (what strategies_mean.py writes as JSON)."""
    meta = payload["meta"]
    lines = ["# Counter strategies: loss and build time, beside jax_privacy", "",
             f"Written by `{command}` (dpol commit {_commit()}; {meta['cpus']} CPUs, load "
             f"{meta['load_average_1min']:.2f} at the start; numpy {meta['numpy']}).", "",
             INTRO.format(repeats=meta.get("repeats", 1)), "",
             "| strategy | T | mean loss | max loss | build s |", "|---|---|---|---|---|"]
    lines += [f"| {r['strategy']} | {r['T']:,} | {r['mean_loss']:.4f} | {r['max_loss']:.4f} "
              f"| {r['build_s']:.3f} |" for r in payload["rows"]]
    pairs = payload["jax_privacy"]
    lines += ["", "## Side by side with jax_privacy", ""]
    if not pairs:
        lines.append("jax_privacy was not run (no `--jax-python`).")
    else:
        lines += ["| strategy | T | dpol mean | jax_privacy mean | ratio | dpol s | "
                  "jax_privacy s | faster |", "|---|---|---|---|---|---|---|---|"]
        for p in pairs:
            faster = "" if p["speedup"] is None else f"{p['speedup']:.1f}x"
            lines.append(f"| {p['strategy']} | {p['T']:,} | {p['dpol']['mean_loss']:.4f} | "
                         f"{p['jax_privacy']['mean_loss']:.4f} | {p['mean_ratio']:.4f} | "
                         f"{p['dpol']['build_s']:.3f} | {p['jax_privacy']['build_s']:.2f} | "
                         f"{faster} |")
        loss_ok = all(p["loss_ok"] for p in pairs)
        slow = [f"{p['strategy']} at T = {p['T']}" for p in pairs if p["speed_ok"] is False]
        lines += ["", "Targets: every shared strategy's mean loss within 0.1% of "
                  f"jax_privacy's or lower: **{'pass' if loss_ok else 'FAIL'}**; every "
                  "optimisation at least 20x faster: "
                  f"**{'pass' if not slow else 'FAIL'}**"
                  + (f" (not: {', '.join(slow)})" if slow else "") + "."]
    below = all(t["below_sqrt"] for t in payload["targets"])
    lines += ["", "Mean-optimal strategies below the square root's mean loss at every "
              f"horizon run: **{'pass' if below else 'FAIL'}**.", "", NOTES, ""]
    return "\n".join(lines)
