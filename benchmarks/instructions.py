"""Instructions per learn_one step, counted by valgrind: a measure the machine does not move.

The 2-core machine's timings of one learn_one step move 1.5-2x within an hour (a shared
virtual machine; see docs/benchmarks/performance.md), so a per-step change of 10% cannot
be seen in microseconds. Valgrind's cachegrind counts the instructions executed instead,
reproducible to about 0.1% (PYTHONHASHSEED fixed). Each learner runs ``short`` and
``long`` steps in two processes; the difference over ``long - short`` steps is the cost of
a step without the start-up. Needs ``valgrind`` on the PATH (it is not a Python package:
the script says so and stops when it is missing). OpenBLAS is held to one thread.

    .venv/bin/python benchmarks/instructions.py            # ~1.5 min on 2 cores
    .venv/bin/python benchmarks/instructions.py --quick    # ~1 min
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _timing import meta, write_json

ROOT = Path(__file__).resolve().parent
#: the two learn_one speed targets (learners.py's TARGETS_US)
CASES = [("PrivateFTAL(tree)", 10), ("PrivateQuadraticFTL", 10)]

# one process: build the learner of benchmarks/learners.py and take `steps` learn_one steps
_STEPS = """
import sys
sys.path.insert(0, {root!r})
from learners import learners, data
name, d, steps = {name!r}, {d}, {steps}
build, kind = learners(d, 20_000)[name]
X, y = data(d, 20_000, kind)
learner = build()
for i in range(steps):
    learner.learn_one(X[i], y[i])
"""


def instructions(name: str, d: int, steps: int) -> int:
    """Instructions valgrind counts for a whole process taking ``steps`` steps."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    code = _STEPS.format(root=str(ROOT), name=name, d=d, steps=steps)
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, "-c", code],
        env=env, capture_output=True, text=True, check=True)
    match = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="benchmarks/results/instructions.json")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH; install it (e.g. apt install valgrind) to count "
              "instructions")
        return []
    short, long = (200, 600) if args.quick else (1000, 3000)
    rows = []
    print(f"instructions per learn_one step (difference of {long} and {short} steps)")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # one valgrind a core
        counts = {(name, d, steps): pool.submit(instructions, name, d, steps)
                  for name, d in CASES for steps in (short, long)}
        for name, d in CASES:
            per_step = (counts[name, d, long].result() - counts[name, d, short].result()) \
                / (long - short)
            rows.append({"learner": name, "d": d, "instructions_per_step": round(per_step)})
            print(f"  {name:22s} d = {d:2d}  {per_step / 1e3:8.1f} k")
    write_json(args.out, {"meta": meta(steps=[short, long]), "rows": rows})
    return rows


if __name__ == "__main__":
    main()
