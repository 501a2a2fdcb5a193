"""Strategies for the mean error: mean and max loss per strategy and horizon, build time.

Every strategy's ``loss("mean")`` (mean over t of the release variance times the largest
squared column norm, the error that adds up into regret) and ``loss("max")`` at noise
multiplier 1, and the time to build it from scratch (optimiser caches cleared): the
binary tree, the square root (Toeplitz), the BLT optimised for max or mean loss, banded
Toeplitz (the square-root band or the band optimised for the mean) and the dense
mean-optimal factorization (T <= 1024). Target lines: the mean-optimal strategies' mean
loss below the square root's at every horizon. Prints a table and writes JSON (default
benchmarks/results/strategies_mean.json).

    python benchmarks/strategies_mean.py            # T in {64, 256, 1024, 2^16, 2^20}
    python benchmarks/strategies_mean.py --quick    # T in {64, 256}
    python benchmarks/strategies_mean.py --jax-python /path/to/jax-venv/bin/python \
        --markdown docs/benchmarks/strategies.md    # the report in docs/

``--jax-python`` names the interpreter of a separate environment with jax_privacy
installed (never dpol's: jax is no dependency of dpol); its figures for T <= 1024
(benchmarks/_jax_privacy_strategies.py) are printed and stored beside dpol's, the
ratio dpol / jax_privacy per strategy, with the targets: every shared strategy's mean
loss within 0.1% of jax_privacy's or lower, its optimisation at least 20x faster (both
timed as the median of ``--repeats`` builds from scratch, 3 by default: jax_privacy's
first call compiles, later ones may reuse it, and single runs of 0.05 s jitter by 2x on
this machine). ``--jax-json FILE`` reads the helper's output saved earlier instead.
Without either, or when that run fails, they are skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from _strategies_markdown import report
from _timing import jax_privacy_json, meta, verdict, write_json

from dpol.counters.strategies import (
    BandedMatrixStrategy,
    BandedToeplitzStrategy,
    BltStrategy,
    DenseMeanStrategy,
    ToeplitzStrategy,
    TreeStrategy,
    banded_matrix_optimizer,
    banded_toeplitz_optimizer,
    blt_optimizer,
    dense_mean_strategy,
)

DENSE_MAX = 1024  # jax_privacy's dense optimum takes O(T^3) a step: 40 s at T = 1024
BANDS = 64


def _blt(objective):
    def build(horizon):
        blt_optimizer._optimized.cache_clear()
        return BltStrategy(horizon, *blt_optimizer.optimal_blt_parameters(
            horizon, objective=objective))
    return build


def _banded(objective):
    def build(horizon):
        banded_toeplitz_optimizer._optimized.cache_clear()
        band = None if objective is None else banded_toeplitz_optimizer.optimal_band(
            horizon, BANDS, objective)
        return BandedToeplitzStrategy(horizon, BANDS, band)
    return build


def _banded_matrix(horizon):
    banded_matrix_optimizer._optimised.cache_clear()
    return BandedMatrixStrategy(horizon, banded_matrix_optimizer.optimal_banded_matrix(
        horizon, BANDS))


def _dense(horizon):
    dense_mean_strategy._factors.cache_clear()
    return DenseMeanStrategy(horizon)


#: name -> (builder, largest horizon, whether it is optimised for the mean)
STRATEGIES = {
    "tree": (TreeStrategy, None, False),
    "sqrt-toeplitz": (ToeplitzStrategy, None, False),
    "blt (max)": (_blt("max"), None, False),
    "blt (mean)": (_blt("mean"), None, True),
    f"banded-{BANDS} (sqrt band)": (_banded(None), None, False),
    f"banded-{BANDS} (mean)": (_banded("mean"), None, False),
    "dense mean-optimal": (_dense, DENSE_MAX, True),
    f"banded matrix-{BANDS} (mean)": (_banded_matrix, DENSE_MAX, False),
}


def bench(name: str, horizon: int, repeats: int = 1) -> dict | None:
    """Losses and the median build time over ``repeats`` builds from scratch."""
    build, largest, _ = STRATEGIES[name]
    if largest is not None and horizon > largest:
        return None
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        strategy = build(horizon)
        seconds.append(time.perf_counter() - start)
    return {"strategy": name, "T": horizon, "mean_loss": strategy.loss("mean"),
            "max_loss": strategy.loss("max"), "build_s": statistics.median(seconds)}


def jax_privacy_rows(python: str | None, horizons: tuple[int, ...],
                     saved: str | None = None, repeats: int = 1) -> list[dict]:
    """jax_privacy's rows from its own interpreter (or a saved run), or [] (with the
    reason printed)."""
    if saved is not None:
        return [r for r in json.loads(Path(saved).read_text()) if r["T"] in horizons]
    small = [str(t) for t in horizons if t <= DENSE_MAX]
    if not small:
        print("jax_privacy: skipped (no horizon <= 1024)")
        return []
    return jax_privacy_json(python, "_jax_privacy_strategies.py", "--repeats", str(repeats),
                            *small)


#: the side-by-side targets: optimisation at least this much faster than jax_privacy's ...
SPEEDUP = 20.0
#: ... and a mean loss at most this much above its (relative)
LOSS_SLACK = 1e-3


def print_side_by_side(rows: list[dict], theirs: list[dict]) -> list[dict]:
    """dpol against jax_privacy for the strategies both have; the compared rows, each
    with its verdicts (a closed form, built in no time by both, has no speed verdict)."""
    ours = {(r["strategy"], r["T"]): r for r in rows}
    pairs = []
    if not theirs:
        return pairs
    header = (f"{'strategy':26s} {'T':>5s} {'dpol mean':>10s} {'jaxp mean':>10s} "
              f"{'ratio':>7s} {'dpol s':>7s} {'jaxp s':>7s} {'faster':>7s}")
    print("\n" + header + "\n" + "-" * len(header))
    for r in theirs:
        mine = ours.get((r["strategy"], r["T"]))
        if mine is None:
            continue
        ratio = mine["mean_loss"] / r["mean_loss"]
        timed = r["build_s"] > 0.0
        speedup = r["build_s"] / max(mine["build_s"], 1e-6) if timed else None
        pairs.append({"strategy": r["strategy"], "T": r["T"], "dpol": mine,
                      "jax_privacy": r, "mean_ratio": ratio, "speedup": speedup,
                      "loss_ok": ratio <= 1.0 + LOSS_SLACK,
                      "speed_ok": None if speedup is None else speedup >= SPEEDUP})
        faster = "" if speedup is None else f"{speedup:6.1f}x"
        print(f"{r['strategy']:26s} {r['T']:5d} {mine['mean_loss']:10.4f} "
              f"{r['mean_loss']:10.4f} {ratio:7.4f} {mine['build_s']:7.3f} "
              f"{r['build_s']:7.2f} {faster:>7s}")
    print(f"  every shared loss within {LOSS_SLACK:.1%} of jax_privacy's or lower: "
          f"{verdict(all(p['loss_ok'] for p in pairs))}")
    slow = [f"{p['strategy']} T = {p['T']}" for p in pairs if p["speed_ok"] is False]
    print(f"  every optimisation at least {SPEEDUP:.0f}x faster: {verdict(not slow)}"
          + (f" (not: {', '.join(slow)})" if slow else ""))
    return pairs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small horizons only")
    parser.add_argument("--out", default="benchmarks/results/strategies_mean.json")
    parser.add_argument("--jax-python", default=None,
                        help="python of a separate venv with jax_privacy (optional)")
    parser.add_argument("--jax-json", default=None,
                        help="jax_privacy's rows saved by _jax_privacy_strategies.py")
    parser.add_argument("--repeats", type=int, default=3,
                        help="builds per strategy, both libraries: the median time")
    parser.add_argument("--markdown", default=None,
                        help="also write the report as Markdown here "
                             "(docs/benchmarks/strategies.md)")
    args = parser.parse_args(argv)
    horizons = (64, 256) if args.quick else (64, 256, 1024, 2**16, 2**20)
    rows = [r for horizon in horizons for name in STRATEGIES
            if (r := bench(name, horizon, args.repeats)) is not None]
    header = f"{'strategy':26s} {'T':>8s} {'mean loss':>10s} {'max loss':>10s} {'build s':>9s}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['strategy']:26s} {r['T']:8d} {r['mean_loss']:10.4f} {r['max_loss']:10.4f} "
              f"{r['build_s']:9.3f}")
    sqrt = {r["T"]: r["mean_loss"] for r in rows if r["strategy"] == "sqrt-toeplitz"}
    targets = []
    for r in rows:
        if STRATEGIES[r["strategy"]][2]:
            ok = r["mean_loss"] < sqrt[r["T"]]
            targets.append({"strategy": r["strategy"], "T": r["T"], "below_sqrt": ok})
            print(f"  {r['strategy']:24s} T = {r['T']:7d}: mean {r['mean_loss']:.4f} < "
                  f"sqrt {sqrt[r['T']]:.4f}  {verdict(ok)}")
    pairs = print_side_by_side(rows, jax_privacy_rows(args.jax_python, horizons,
                                                      args.jax_json, args.repeats))
    payload = {"meta": meta(bands=BANDS, repeats=args.repeats), "rows": rows,
               "targets": targets, "jax_privacy": pairs}
    write_json(args.out, payload)
    if args.markdown:
        command = "python benchmarks/strategies_mean.py " + " ".join(
            "PYTHON" if a == args.jax_python else a for a in (argv or sys.argv[1:]))
        Path(args.markdown).write_text(report(payload, command.strip()))
        print(f"wrote {args.markdown}")
    return rows


if __name__ == "__main__":
    main()
