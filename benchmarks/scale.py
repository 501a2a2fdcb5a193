"""Scale benchmark: whole streams of the size of the papers' real data sets, end to end.

The scale targets: PrivateQuadraticFTL on a d = 90, T = 515,345 regression stream
(YearPredictionMSD's shape; synthetic data, ``linear_regression_stream``) in at most 60 s
with peak memory under 4 GiB, and PrivateIGD on a 581,012 x 54 logistic stream
(Covertype's shape, ``logistic_stream``) in at most 60 s. Each job runs in a fresh
process, so its peak resident memory (``ru_maxrss``, data included) is its own; the time
is ``learner.run(X, y)`` alone: construction, the whole replay and the trace (losses),
as wall time and as CPU time (this process's and its children's: on long streams
PQFTL's replay forks a helper process that solves on the second core, so CPU can exceed
wall).
Prints a table and writes JSON (default benchmarks/results/scale.json).

    python benchmarks/scale.py                   # both jobs at full size (several minutes)
    python benchmarks/scale.py --quick           # 1/20 of the streams
    python benchmarks/scale.py --jobs pqftl      # one job only
    python benchmarks/scale.py --epsilons 1 10   # PQFTL at several privacy levels
    python benchmarks/scale.py --jobs pqftl --counters tree blt   # PQFTL's counter
    python benchmarks/scale.py --jobs pqftl --repeat 5   # five runs, then median and max
    python benchmarks/scale.py --jobs pqftl --generators pcg64 sfc64   # seed's bit generator

PQFTL's cost depends on epsilon: a step whose noisy V_t is positive definite needs two
Cholesky factorizations, a step where noise makes it indefinite needs the PSD projection
(docs/errata.md, JKT-5) through a tridiagonalisation and the negative eigenpairs, 7-10x more at
d = 90. The JSON records the share of such steps. Timings move with the machine's load:
re-run on a quiet machine before quoting them (the JSON records the load average).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _timing import max_rss_mib, meta, speed_line, verdict, write_json

#: the scale targets: job -> (rows, dim, seconds, GiB of peak memory or None)
TARGETS = {"pqftl": (515_345, 90, 60.0, 4.0), "igd": (581_012, 54, 60.0, None)}


#: --generators: the learner's seed. "pcg64" is the int 0 (every target is met with
#: it); "sfc64" a Generator(SFC64(0)), whose children are SFC64 too (spawn_seeds)
GENERATORS = ("pcg64", "sfc64")


def child(job: str, rows: int, epsilon: float, counter: str, generator: str = "pcg64"
          ) -> dict:
    """Run one job in this process; return its measurements."""
    import numpy as np

    from dpol.datasets import linear_regression_stream, logistic_stream
    from dpol.learners import PrivateIGD, PrivateQuadraticFTL
    from dpol.losses import LogisticLoss, Regularized
    from dpol.sets import L2Ball

    dim = TARGETS[job][1]
    seed = 0 if generator == "pcg64" else np.random.Generator(np.random.SFC64(0))
    start = time.perf_counter()
    if job == "pqftl":
        stream = linear_regression_stream(rows, dim, seed=0)
        # n_jobs=2: the forked solver process on the second core (PrivateQuadraticFTL)
        learner = PrivateQuadraticFTL(dim, horizon=rows, epsilon=epsilon, delta=1e-5,
                                      seed=seed, counter=counter, n_jobs=2)
    else:
        alpha = 1e-3  # the smaller of JKT G.2's two (dpol.experiments.reproductions.jkt_appendix_g)
        stream = logistic_stream(rows, dim, seed=0)
        radius = math.sqrt(2.0 * math.log(2.0) / alpha)  # holds the regularised optimum
        learner = PrivateIGD(dim, loss=Regularized(LogisticLoss(), alpha),
                             domain=L2Ball(dim, radius), horizon=rows, epsilon=epsilon,
                             delta=1e-5, seed=seed)
    data_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), cpu_seconds()
    trace = learner.run(stream.X, stream.y)
    run_s, cpu_s = time.perf_counter() - start, cpu_seconds() - cpu
    out = {"job": job, "counter": counter if job == "pqftl" else "-", "generator": generator,
           "rows": rows,
           "d": dim, "epsilon": epsilon, "data_s": data_s,
           "run_s": run_s, "cpu_s": cpu_s, "peak_rss_mib": max_rss_mib(),
           "mean_loss": float(np.mean(trace.losses))}
    if job == "pqftl":
        out["indefinite_share"] = indefinite_share(learner, stream.X)
    return out


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (PQFTL's helper process)."""
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def indefinite_share(learner, X, samples: int = 200) -> float:
    """Share of steps whose released V_t is indefinite, estimated from 200 steps spread
    over the stream (replayed with fresh noise of the same law: symmetrised full-matrix
    noise, as svec's unscaled release; timing excluded)."""
    import numpy as np

    rng = np.random.default_rng(1)
    horizon, d = X.shape
    counter = learner._counters[0]  # the V_t counter: per-entry release variance at t
    ts = np.unique(np.linspace(1, horizon, samples).astype(np.int64))
    gram, prev, hits = np.zeros((d, d)), 0, 0
    for t in ts:
        gram += X[prev:t].T @ X[prev:t]
        prev = t
        noise = rng.normal(size=(d, d)) * math.sqrt(counter.variance(int(t)))
        hits += np.linalg.eigvalsh(gram + 0.5 * (noise + noise.T))[0] < 0
    return hits / len(ts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/20 of each stream")
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0],
                        help="privacy levels of the PQFTL job (default: 1)")
    parser.add_argument("--jobs", nargs="+", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--out", default="benchmarks/results/scale.json")
    parser.add_argument("--counters", nargs="+", default=["tree"],
                        help="PQFTL's counters (default: tree, JKT's; blt has less noise)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each job (the machine's speed moves: see the summary)")
    parser.add_argument("--generators", nargs="+", default=["pcg64"], choices=GENERATORS,
                        help="the seed's bit generator (default: pcg64, an int seed)")
    parser.add_argument("--child", nargs=5,
                        metavar=("JOB", "ROWS", "EPSILON", "COUNTER", "GENERATOR"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        job, rows, eps, counter, generator = args.child
        print(json.dumps(child(job, int(rows), float(eps), counter, generator)))
        return None
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    runs = [(job, eps, counter, generator) for _ in range(args.repeat) for job in args.jobs
            for eps in (args.epsilons if job == "pqftl" else [1.0])
            for counter in (args.counters if job == "pqftl" else ["-"])
            for generator in args.generators]
    context = meta(quick=args.quick, targets=TARGETS)
    print(speed_line(context["machine_speed"]))
    rows = []
    for job, eps, counter, generator in runs:
        n = TARGETS[job][0] // (20 if args.quick else 1)
        command = [sys.executable, str(Path(__file__).resolve()), "--child", job, str(n),
                   str(eps), counter, generator]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        seconds, gib = TARGETS[job][2], TARGETS[job][3]
        full = not args.quick  # the targets are for the full streams only
        rows[-1]["pass_time"] = rows[-1]["run_s"] <= seconds if full else None
        rows[-1]["pass_memory"] = (rows[-1]["peak_rss_mib"] <= gib * 1024
                                   if full and gib is not None else None)
    header = (f"{'job':6s} {'counter':8s} {'rng':6s} {'rows':>8s} {'d':>3s} {'eps':>5s} "
              f"{'run s':>8s} {'cpu s':>7s} {'data s':>7s} {'peak MiB':>9s} {'indefinite':>10s}"
              "  verdict")
    print(header)
    print("-" * len(header))
    for r in rows:
        share = f"{r['indefinite_share']:.0%}" if "indefinite_share" in r else "-"
        mem = "" if r["pass_memory"] is None else f", memory {verdict(r['pass_memory'])}"
        judged = ("(quick: no target)" if r["pass_time"] is None
                  else f"time {verdict(r['pass_time'])}{mem}")
        print(f"{r['job']:6s} {r['counter']:8s} {r['generator']:6s} {r['rows']:8d} {r['d']:3d} "
              f"{r['epsilon']:5g} {r['run_s']:8.1f} {r['cpu_s']:7.1f} {r['data_s']:7.1f} "
              f"{r['peak_rss_mib']:9.0f} {share:>10s}  {judged}")
    if args.repeat > 1:  # one job's runs differ with the machine's speed, not the code
        print()

        def key(r):
            return r["job"], r["counter"], r["generator"], r["epsilon"]

        for job, counter, generator, eps in dict.fromkeys(map(key, rows)):
            times = sorted(r["run_s"] for r in rows if key(r) == (job, counter, generator, eps))
            over = "-" if args.quick else sum(t > TARGETS[job][2] for t in times)
            print(f"{job} {counter} {generator} eps={eps:g}: {len(times)} runs, median "
                  f"{statistics.median(times):.1f} s, min {times[0]:.1f} s, max "
                  f"{times[-1]:.1f} s, over the target: {over}")
    write_json(args.out, {"meta": context, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
