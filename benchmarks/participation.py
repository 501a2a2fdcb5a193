"""Multiple participations: each strategy's loss when a record enters once per epoch.

A record (one participant) enters k times, b = T / k steps apart (k epochs over T / k
records in a fixed order). Every strategy's ``loss("mean")`` and ``loss("max")`` at noise
multiplier 1 under that participation (its squared sensitivity to the participant times the
mean or max release variance), beside one participation, for the binary tree, Honaker's
tree, the square root (Toeplitz), the BLT optimised for max or mean loss over one pass
and ("blt-part", new) for that participation, with the seconds its optimiser took, banded Toeplitz
with min(64, b) or b bands (the square-root band, or re-optimised for the mean), and for
T <= 1024 the dense mean-optimal factorisation and the general banded matrix with unit
columns and min(64, b) bands. Prints a table and writes JSON (default
benchmarks/results/participation.json).

    python benchmarks/participation.py                 # T in {256, 1024, 16384}
    python benchmarks/participation.py --quick         # T = 256
    python benchmarks/participation.py --jax-python /path/to/jax-venv/bin/python

``--jax-python`` names the interpreter of a separate environment with jax_privacy: it
computes its own squared sensitivity of the very encoders dpol built
(benchmarks/_jax_privacy_participation.py), and the table sets the two side by side
(target: dpol's <= jax_privacy's x 1.001, i.e. as tight or tighter); and, for T up to
``--jax-blt-max-horizon``, jax_privacy optimises its own BLT for each pattern (k > 1)
and error, whose loss the table sets beside dpol's "blt-part" (same target). Without it,
that part is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import jax_privacy_json, meta, verdict, write_json

from dpol.counters import Participation
from dpol.counters.strategies import (
    BandedMatrixStrategy,
    BandedToeplitzStrategy,
    BltStrategy,
    DenseMeanStrategy,
    HonakerStrategy,
    ToeplitzStrategy,
    TreeStrategy,
    banded_toeplitz_optimizer,
    blt_optimizer,
)
from dpol.counters.strategies.banded_matrix_optimizer import optimal_banded_matrix

EPOCHS = (1, 4, 8, 16, 64)  # 8: the (8, 32) of the T = 256 comparison with jax_privacy
DENSE_MAX = 1024
BANDS = 64


def tuned_blt(horizon: int, participation: Participation, objective: str
              ) -> tuple[BltStrategy, dict]:
    """The BLT optimised for the participation itself, and the seconds its optimiser took,
    wall and CPU (the single-pass optimum it starts from included, the caches cleared
    first; on a loaded machine the CPU time is the one to compare)."""
    blt_optimizer._optimized.cache_clear()
    blt_optimizer._optimized_for.cache_clear()
    start, cpu = time.perf_counter(), time.process_time()
    params = blt_optimizer.optimal_blt_parameters(horizon, objective=objective,
                                                  participation=participation)
    return BltStrategy(horizon, *params), {"optimise_seconds": time.perf_counter() - start,
                                           "optimise_cpu_seconds": time.process_time() - cpu}


def strategies(horizon: int, participation: Participation) -> dict[str, object]:
    """The strategies compared at one horizon. The banded ones take b = min(64, the
    separation) bands, or b = the separation (its O(b d) state grows with it), the
    banded matrix the smaller of the two (its optimiser is O(T^2 b) a step). "blt-part"
    is the BLT optimised for the participation (BltCounter's choice when given one)."""
    separation = participation.min_separation
    small, wide = min(BANDS, separation, horizon), min(separation, horizon)
    out = {
        "tree": TreeStrategy(horizon),
        "honaker": HonakerStrategy(horizon),
        "sqrt-toeplitz": ToeplitzStrategy(horizon),
        "blt (max)": BltStrategy(horizon, *blt_optimizer.optimal_blt_parameters(horizon)),
        "blt (mean)": BltStrategy(horizon, *blt_optimizer.optimal_blt_parameters(
            horizon, objective="mean")),
        "blt-part (max)": tuned_blt(horizon, participation, "max"),
        "blt-part (mean)": tuned_blt(horizon, participation, "mean"),
        "banded-64 (mean)": BandedToeplitzStrategy(
            horizon, small, banded_toeplitz_optimizer.optimal_band(horizon, small, "mean")),
        "banded-sep (sqrt band)": BandedToeplitzStrategy(horizon, wide),
        "banded-sep (mean)": BandedToeplitzStrategy(
            horizon, wide, banded_toeplitz_optimizer.optimal_band(horizon, wide, "mean")),
    }
    if horizon <= DENSE_MAX:
        out["dense mean-optimal"] = DenseMeanStrategy(horizon)
        out["banded matrix-64"] = BandedMatrixStrategy(horizon, optimal_banded_matrix(
            horizon, small))
    return out


def first_column(strategy: object, horizon: int) -> np.ndarray | None:
    coefficients = getattr(strategy, "coefficients", None)
    if coefficients is None:
        return None
    column = np.zeros(horizon)
    column[: min(horizon, coefficients.size)] = coefficients[:horizon]
    return column


def measure(horizon: int, epochs: tuple[int, ...]) -> tuple[list[dict], dict]:
    rows, encoders = [], {}
    for k in epochs:
        b = horizon // k
        p = Participation(k, b)
        for name, s in strategies(horizon, p).items():
            s, build = s if isinstance(s, tuple) else (s, {})
            start = time.perf_counter()
            sens_sq = s.column_norm_sq(p)
            seconds = time.perf_counter() - start
            rows.append({"strategy": name, "T": horizon, "k": k, "b": b,
                         "bands": getattr(s, "bands", None), "sens_sq": sens_sq,
                         "sens_seconds": seconds, "mean_loss": s.loss("mean", p),
                         "max_loss": s.loss("max", p), **build})
            column = first_column(s, horizon)
            key = f"{name}|{b}" if name.startswith(("banded", "blt-part")) else name
            if column is not None:
                encoders[f"toeplitz/{key}"] = column
            elif name == "dense mean-optimal":
                encoders[f"matrix/{key}"] = np.asarray(s.encoder)
            elif name.startswith("banded matrix"):
                encoders[f"matrix/{name}|{b}"] = s.encode(np.eye(horizon))
    return rows, encoders


def jax_privacy_rows(python: str | None, encoders: dict, patterns: list) -> list[dict]:
    """jax_privacy's squared sensitivities of the same encoders, or [] (reason printed)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "encoders.npz"
        np.savez(path, **encoders)
        return jax_privacy_json(python, "_jax_privacy_participation.py", str(path),
                                *(f"{k}:{b}" for k, b in patterns))


def side_by_side(rows: list[dict], theirs: list[dict]) -> list[dict]:
    ours = {(r["strategy"], r["T"], r["k"], r["b"]): r for r in rows}
    pairs = []
    for r in theirs:
        name, _, band_b = r["strategy"].partition("|")
        if band_b and int(band_b) != r["b"]:
            continue  # a banded encoder is compared at the separation it was built for
        mine = ours.get((name, r["T"], r["k"], r["b"]))
        if mine is None:
            continue
        ratio = mine["sens_sq"] / r["sens_sq"]
        pairs.append({"strategy": name, "T": r["T"], "k": r["k"], "b": r["b"],
                      "dpol": mine["sens_sq"], "jax_privacy": r["sens_sq"],
                      "jax_method": r["method"], "ratio": ratio, "ok": ratio <= 1.001})
    if pairs:
        header = (f"{'strategy':22s} {'T':>6s} {'k':>3s} {'dpol sens^2':>12s} "
                  f"{'jaxp sens^2':>12s} {'ratio':>7s}  jaxp method")
        print("\n" + header + "\n" + "-" * len(header))
        for p in pairs:
            print(f"{p['strategy']:22s} {p['T']:6d} {p['k']:3d} {p['dpol']:12.4f} "
                  f"{p['jax_privacy']:12.4f} {p['ratio']:7.4f}  {p['jax_method']} "
                  f"{verdict(p['ok'])}")
    return pairs


def jax_blt_rows(python: str | None, horizon: int, patterns: list) -> list[dict]:
    """jax_privacy's own BLT optimised for each pattern (k > 1) and error, or []."""
    specs = [f"{horizon}:{k}:{b}:{error}" for k, b in patterns if k > 1
             for error in ("max", "mean")]
    return jax_privacy_json(python, "_jax_privacy_participation.py", "--blt", *specs)


def blt_side_by_side(rows: list[dict], theirs: list[dict]) -> list[dict]:
    """dpol's BLT for the participation (and the single-pass one) against jax_privacy's
    min-sep-optimised BLT, by the loss each optimises (target: dpol's <= x 1.001)."""
    ours = {(r["strategy"], r["T"], r["k"]): r for r in rows}
    pairs = []
    for r in theirs:
        tuned = ours[(f"blt-part ({r['error']})", r["T"], r["k"])]
        single = ours[(f"blt ({r['error']})", r["T"], r["k"])]
        key = f"{r['error']}_loss"
        ratio = tuned[key] / r["loss"]
        pairs.append({"T": r["T"], "k": r["k"], "b": r["b"], "error": r["error"],
                      "jax_privacy": r["loss"], "jax_buffers": r["buffers"],
                      "jax_seconds": r["seconds"], "dpol_single_pass": single[key],
                      "dpol": tuned[key], "dpol_seconds": tuned["optimise_seconds"],
                      "dpol_cpu_seconds": tuned["optimise_cpu_seconds"],
                      "ratio": ratio, "single_pass_ratio": single[key] / r["loss"],
                      "ok": ratio <= 1.001})
    if pairs:
        header = (f"{'T':>6s} {'k':>3s} {'b':>5s} {'error':>5s} {'jaxp loss':>10s} "
                  f"{'dpol 1-pass':>11s} {'dpol part':>10s} {'ratio':>7s} "
                  f"{'jaxp s':>7s} {'dpol s':>7s} {'cpu s':>6s}")
        print("\nBLT optimised for the participation\n" + header + "\n" + "-" * len(header))
        for p in pairs:
            print(f"{p['T']:6d} {p['k']:3d} {p['b']:5d} {p['error']:>5s} "
                  f"{p['jax_privacy']:10.3f} {p['dpol_single_pass']:11.3f} {p['dpol']:10.3f} "
                  f"{p['ratio']:7.4f} {p['jax_seconds']:7.1f} {p['dpol_seconds']:7.2f} "
                  f"{p['dpol_cpu_seconds']:6.2f} "
                  f"{verdict(p['ok'])}")
    return pairs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T = 256 only")
    parser.add_argument("--out", default="benchmarks/results/participation.json")
    parser.add_argument("--jax-python", default=None,
                        help="python of a separate venv with jax_privacy (optional)")
    parser.add_argument("--jax-blt-max-horizon", type=int, default=1024,
                        help="largest T at which jax_privacy optimises its own BLTs")
    args = parser.parse_args(argv)
    horizons = (256,) if args.quick else (256, 1024, 2**14)
    rows, pairs, blt_pairs = [], [], []
    for horizon in horizons:
        got, encoders = measure(horizon, EPOCHS)
        rows += got
        patterns = sorted({(r["k"], r["b"]) for r in got})
        pairs += side_by_side(got, jax_privacy_rows(args.jax_python, encoders, patterns))
        if horizon <= args.jax_blt_max_horizon:
            blt_pairs += blt_side_by_side(got, jax_blt_rows(args.jax_python, horizon,
                                                            patterns))
    header = (f"{'strategy':22s} {'T':>6s} {'epochs':>6s} {'b':>6s} {'mean loss':>11s} "
              f"{'max loss':>11s} {'x 1 epoch':>9s}")
    print("\n" + header + "\n" + "-" * len(header))
    single = {(r["strategy"], r["T"]): r["mean_loss"] for r in rows if r["k"] == 1}
    for r in rows:
        growth = r["mean_loss"] / single[(r["strategy"], r["T"])]
        print(f"{r['strategy']:22s} {r['T']:6d} {r['k']:6d} {r['b']:6d} "
              f"{r['mean_loss']:11.2f} {r['max_loss']:11.2f} {growth:9.2f}")
    best = {}
    for r in rows:
        key = (r["T"], r["k"])
        if key not in best or r["mean_loss"] < best[key]["mean_loss"]:
            best[key] = r
    print("\nlowest mean loss: " + "; ".join(
        f"T={t} k={k}: {r['strategy']} ({r['mean_loss']:.2f})" for (t, k), r in best.items()))
    write_json(args.out, {"meta": meta(bands=BANDS, epochs=list(EPOCHS)), "rows": rows,
                          "jax_privacy": pairs, "jax_privacy_blt": blt_pairs,
                          "best": [{"T": t, "k": k, "strategy": r["strategy"]}
                                   for (t, k), r in best.items()]})
    return rows


if __name__ == "__main__":
    main()
