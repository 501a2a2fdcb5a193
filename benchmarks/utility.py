"""Utility of dpol's private learners on real and synthetic data, beside the alternatives.

One command measures, for every data set that is available offline and every epsilon in
{0.1, 1, 10} (delta = min(1e-5, 1/n), replace-one, 5 noise seeds), two scores of dpol's
learners: the **prequential** score (each stream row predicted by ``predict_one`` before
it is learned, averaged over the stream) and the **held-out** score of the final released
model on a fixed 20% split. Beside them: the trivial baseline (majority class / training
mean / predict 0) and the private trivial model (the same learned privately on the whole
budget, ``_utility_trivial.py``: T1's baseline, on 100 seeds and four check groups), each
learner's non-private twin
(epsilon = inf), river's and scikit-learn's non-private online linear models, and
diffprivlib's offline private LogisticRegression / LinearRegression at the same epsilon
and the same declared bounds. The data sets are split once, in the code (``GROUPS`` in
``_utility_data.py``), into a tuning group (the defaults may be chosen on it) and an
evaluation group (never tuned on).
It judges the utility targets (``_utility_targets.py``) for the default learner of each
task (the default of ``OnlineClassifier`` / ``OnlineRegressor``) at epsilon 1 and 0.1,
on each group separately, and writes a table, JSON, a plot and
``docs/benchmarks/utility.md``.

    python benchmarks/utility.py --jobs 2 --learners default  # the report (~5 min)
    python benchmarks/utility.py --jobs 2        # every learner too (about 2 hours)
    python benchmarks/utility.py --quick         # 2 seeds, streams of 5,000 rows
    python benchmarks/utility.py --quick --group evaluation   # the never-tuned sets only
    python benchmarks/utility.py --sets iris,digits --epsilons 1  # a few sets
    python benchmarks/utility.py --render benchmarks/results/utility.json  # report only

Learners are built through the registry (``dpol.adapters.make_learner``, its defaults
for a stream with ||x|| <= 1 and |y| <= 1, and the adapters' defaults for what they pass
on: intercept, post-processing), so the benchmark measures whatever the library does
when it runs. The streams go through the learners' vectorised ``run``
when its trace gives the predictions of a ``predict_one`` / ``learn_one`` loop on a
200-row prefix (checked per learner and data set), else through that loop. Preprocessing, its
statistics outside the guarantee: see ``benchmarks/_utility_data.py``. diffprivlib needs
scikit-learn < 1.7 (``pip install 'dpol[bench]'``); without it its columns say so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
from _utility_baselines import (
    diffprivlib_offline,
    diffprivlib_version,
    river_online,
    score,
    sklearn_online,
    trivial,
    trivial_standard_error,
)
from _utility_data import GROUPS, RAW_LABELS, SOURCES, available, group_of, prepare
from _utility_dpol import (
    TASKS,
    adapter_check,
    adapter_defaults,
    default_learners,
    delta_for,
    learner_methods,
    run_dpol,
)
from _utility_estimators import run_multiclass, run_raw_labels
from _utility_markdown import write_outputs
from _utility_report import print_tables
from _utility_targets import TARGET_EPSILONS, eps_key, summarise, targets
from _utility_trivial import BASELINE_SEEDS, CHECK_GROUPS, run_private_trivial

ROOT = Path(__file__).resolve().parents[1]
EPSILONS = (0.1, 1.0, 10.0)
SEEDS = 5
#: learners skipped on longer streams: the twin (tau = 1) re-solves the ERM every step
MAX_STREAM = {"incremental-erm": 1_000}
QUICK_ROWS = 5_000

_DATA: dict[tuple[str, int | None], object] = {}


def _dataset(name: str, max_rows: int | None):
    if (name, max_rows) not in _DATA:
        _DATA[(name, max_rows)] = prepare(name, max_rows)
    return _DATA[(name, max_rows)]


def _scored(ds, out: dict, **fields) -> dict:
    held = score(ds, out["held_out"], "test")
    preq = None if out["prequential"] is None else score(ds, out["prequential"], "stream")
    return {**fields, "prequential": preq, "held_out": held}


def run_job(job: dict) -> dict | list[dict]:
    """One unit of work (run in a worker process when ``--jobs`` > 1): its record, or a
    record per seed (the private trivial model's)."""
    ds = _dataset(job["dataset"], job["max_rows"])
    start = time.perf_counter()
    base = {"dataset": ds.name, "kind": job["kind"], "method": job["method"],
            "epsilon": job.get("epsilon"), "seed": job.get("seed")}
    if job["kind"] in ("dpol", "twin"):
        eps = math.inf if job["kind"] == "twin" else job["epsilon"]
        run = run_multiclass if ds.task == "multiclass" else run_dpol
        return {**base, **run(ds, job["method"], eps, job["seed"])}
    if job["kind"] == "raw-labels":
        return {**base, **run_raw_labels(ds, job["epsilon"], job["seed"])}
    if job["kind"] == "adapter":
        return {**base, **adapter_check(ds, job["method"])}
    if job["kind"] == "diffprivlib":
        out = diffprivlib_offline(ds, job["epsilon"], job["seed"])
    elif job["kind"] == "private-trivial":  # cheap: all its seeds in one job
        return [_scored(ds, run_private_trivial(ds, job["epsilon"], seed), **{
            **base, "seed": seed, "method": "private-trivial" if seed < BASELINE_SEEDS
            else "private-trivial-check"}) for seed in job["seeds"]]
    else:
        out = {"trivial": trivial, "river": river_online, "sklearn": sklearn_online}[
            job["kind"]](ds)
    scored = _scored(ds, out, **base)
    if job["kind"] == "trivial":  # T1's tolerance
        scored["held_out"].update(trivial_standard_error(ds, scored["held_out"]))
    return {**scored, "seconds": round(time.perf_counter() - start, 3)}


def plan(names, methods_wanted, epsilons, seeds, max_rows, with_dpl) -> tuple[list, dict]:
    """The jobs, largest streams first (so two workers finish together), and per data set
    what was run and skipped."""
    defaults = default_learners()
    jobs, info = [], {}
    for name in names:
        ds = _dataset(name, max_rows)
        n = len(ds.y_train)
        methods = learner_methods(ds.task)
        chosen = [m for m in methods if methods_wanted is None or m in methods_wanted
                  or (m == defaults[ds.task] and "default" in methods_wanted)]
        skipped = {m: f"stream of {n} rows > {MAX_STREAM[m]}" for m in chosen
                   if n > MAX_STREAM.get(m, n)}
        chosen = [m for m in chosen if m not in skipped]
        info[name] = {"task": ds.task, "group": group_of(name), "source": ds.source,
                      "rows": ds.n_rows, "stream": n, "raw_labels": name in RAW_LABELS,
                      "held_out": len(ds.y_test), "dim": ds.dim, "delta": delta_for(n),
                      "preprocessing": ds.preprocessing, "default": defaults[ds.task],
                      "learners": chosen, "skipped": skipped,
                      "rows_outside_x_bound": ds.rows_outside_x_bound,
                      "labels_outside_y_bound": (ds.labels_outside_y_bound
                                                 if ds.task == "regression" else None),
                      "positive_share": (float(np.mean(ds.y_train > 0))
                                         if ds.task == "classification" else None),
                      "classes": ds.n_classes if ds.task == "multiclass" else None}
        common = {"dataset": name, "max_rows": max_rows, "cost": n}
        for kind in ("trivial", "river", "sklearn"):
            jobs.append({**common, "kind": kind, "method": kind})
        for seed in range(seeds):
            for m in chosen:
                jobs.append({**common, "kind": "twin", "method": m, "seed": seed})
                jobs += [{**common, "kind": "dpol", "method": m, "epsilon": e, "seed": seed}
                         for e in epsilons]
            if with_dpl:
                jobs += [{**common, "kind": "diffprivlib", "method": "diffprivlib",
                          "epsilon": e, "seed": seed} for e in epsilons]
            if name in RAW_LABELS and defaults[ds.task] in chosen:
                jobs += [{**common, "kind": "raw-labels", "method": "raw-labels",
                          "epsilon": e, "seed": seed} for e in epsilons]
        # T1's baseline, then its check groups (_utility_trivial)
        jobs += [{**common, "kind": "private-trivial", "method": "private-trivial",
                  "epsilon": e, "seeds": list(range(BASELINE_SEEDS + CHECK_GROUPS * seeds))}
                 for e in epsilons if eps_key(e) in TARGET_EPSILONS]
        # multiclass sets already run through the estimator
        if defaults[ds.task] in chosen and ds.task != "multiclass":
            jobs.append({**common, "kind": "adapter", "method": defaults[ds.task]})
    jobs.sort(key=lambda j: -j["cost"])
    return jobs, info


def _single_thread() -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"


def execute(jobs: list, n_jobs: int) -> list[dict]:
    """Run the jobs (in ``n_jobs`` processes), printing progress now and then."""
    records, start, last = [], time.perf_counter(), 0.0

    def progress(done: int) -> None:
        nonlocal last
        now = time.perf_counter() - start
        if now - last > 30 or done == len(jobs):
            last = now
            print(f"  {done}/{len(jobs)} jobs, {now:.0f} s", file=sys.stderr, flush=True)

    if n_jobs <= 1:
        for i, job in enumerate(jobs):
            _append(records, run_job(job))
            progress(i + 1)
        return records
    with ProcessPoolExecutor(n_jobs, initializer=_single_thread) as pool:
        futures = [pool.submit(run_job, job) for job in jobs]
        for i, fut in enumerate(as_completed(futures)):
            _append(records, fut.result())
            progress(i + 1)
    return records


def _append(records: list[dict], out: dict | list[dict]) -> None:
    """A job's record, or its records (the private trivial model's seeds)."""
    records.extend(out if isinstance(out, list) else [out])


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "scipy", "sklearn", "river", "statsmodels", "diffprivlib"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:
            out[mod] = None
    try:
        out["dpol_commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
            text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "dpol"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout
        out["dpol_uncommitted_changes"] = sorted(line[3:] for line in dirty.splitlines())
    except (OSError, subprocess.CalledProcessError):
        out["dpol_commit"] = None
    return out


def _numbers(obj: dict) -> dict:
    """JSON object hook: the non-finite scores written as strings, back to floats."""
    return {k: float(v) if v in ("inf", "-inf", "nan") else v for k, v in obj.items()}


def _csv(text: str | None) -> list[str] | None:
    return None if text in (None, "all") else [t.strip() for t in text.split(",") if t.strip()]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{2} seeds, streams subsampled to {QUICK_ROWS} rows")
    parser.add_argument("--sets", "--datasets", dest="datasets",
                        help=f"comma list of {', '.join(SOURCES)} (all of --group)")
    parser.add_argument("--group", choices=(*GROUPS, "all"), default="all",
                        help="the data sets of one group: tuning (the defaults may be "
                        "tuned on them) or evaluation (never tuned on); default all")
    parser.add_argument("--epsilons", help="comma list (default 0.1,1,10)")
    parser.add_argument("--seeds", type=int, help="noise seeds 0..k-1 (default 5; quick 2)")
    parser.add_argument("--learners", help="comma list of dpol learners, 'default' (the "
                        "default of each task) or 'all' (default)")
    parser.add_argument("--max-rows", type=int, help="cap every stream (held out: 1/4)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--out", help="folder for every output (default: results in "
                        "benchmarks/results, the full run's report in docs/benchmarks)")
    parser.add_argument("--render", metavar="JSON", help="redo the table, plot and report "
                        "of a saved result, without running anything")
    args = parser.parse_args(argv)
    if args.render:
        result = json.loads(Path(args.render).read_text(), object_hook=_numbers)
        result["summary"] = summarise(result["records"], result["datasets"])
        result["targets"] = targets(result["summary"], result["datasets"],
                                    result["diffprivlib"] is not None)
        print_tables(result)
        p = result["protocol"]
        tag = "utility" if p.get("report", p["full"]) else (
            "utility_quick" if p["quick"] else "utility_custom")
        write_outputs(result, tag, Path(args.out) if args.out else None, ROOT)
        return result
    epsilons = tuple(float(e) for e in _csv(args.epsilons) or EPSILONS)
    seeds = args.seeds or (2 if args.quick else SEEDS)
    max_rows = args.max_rows or (QUICK_ROWS if args.quick else None)
    in_group = [d for d in SOURCES if args.group == "all" or d in GROUPS[args.group]]
    wanted = _csv(args.datasets) or in_group
    unknown = [d for d in wanted if d not in SOURCES]
    if unknown or seeds < 1:
        parser.error(f"unknown data sets {unknown}" if unknown else "--seeds must be >= 1")
    outside = [d for d in wanted if d not in in_group]
    if outside:
        parser.error(f"data sets {outside} are not in group {args.group}")
    missing = {d: why for d in wanted if (why := available(d))}
    names = [d for d in wanted if d not in missing]
    dpl = diffprivlib_version()
    everywhere = not any((args.quick, args.datasets, args.epsilons, args.seeds,
                          args.max_rows, args.group != "all"))
    full = everywhere and not args.learners
    # the report of docs/benchmarks: every set, epsilon and seed, for every learner or
    # for the defaults alone (the targets' learners; every learner takes ~2 h on 2 cores)
    report = everywhere and args.learners in (None, "default")
    started = time.perf_counter()
    jobs, info = plan(names, _csv(args.learners), epsilons, seeds, max_rows, dpl is not None)
    print(f"{len(jobs)} jobs on {len(names)} data sets, {seeds} seeds, epsilons "
          f"{', '.join(f'{e:g}' for e in epsilons)}; diffprivlib: "
          f"{dpl or 'not installed (columns skipped)'}", file=sys.stderr)
    records = execute(jobs, args.jobs)
    summary = summarise(records, info)
    built = {t: adapter_defaults(t) for t in TASKS}
    result = {"protocol": {"epsilons": list(epsilons), "seeds": seeds, "max_rows": max_rows,
                           "learner_keywords": built,
                           "quick": args.quick, "full": full, "report": report,
                           "neighbouring": "replace_one",
                           "delta": "min(1e-5, 1/n)", "test_fraction": 0.2,
                           "argv": sys.argv[1:] if argv is None else argv},
              "versions": _versions(), "diffprivlib": dpl, "missing_datasets": missing,
              "datasets": info, "summary": summary,
              "targets": targets(summary, info, dpl is not None),
              "records": records, "seconds": round(time.perf_counter() - started, 1)}
    print_tables(result)
    tag = "utility" if report else ("utility_quick" if args.quick else "utility_custom")
    write_outputs(result, tag, Path(args.out) if args.out else None, ROOT)
    return result


if __name__ == "__main__":
    main()
