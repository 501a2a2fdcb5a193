"""Shared pieces of the sweep tests: small grids and the comparison that ignores timings."""

from __future__ import annotations

from pathlib import Path

from dpol.experiments.sweeps.config import parse_config
from dpol.experiments.sweeps.store import ResultStore

#: what differs between two runs of the same cell: when, where and how long
RUN_FACTS = {"seconds", "fit_seconds", "worker", "backend", "finished_at"}

TINY = {"horizon": 300, "grid": {
    "learners": ["pqftl", "igd"], "counters": ["binary_tree", "honaker_tree"],
    "epsilons": [0.5, 2.0], "seeds": [0, 1],
    "datasets": ["synthetic-regression", "synthetic-classification"]}}

#: cells long enough (~0.5 s each) that a worker killed after the first result is mid-task
SLOW = {"horizon": 5000, "grid": {
    "learners": ["pqftl"], "epsilons": [0.5, 1.0, 2.0], "seeds": [0, 1],
    "datasets": ["synthetic-regression"]}}


def config(raw: dict):
    return parse_config(raw)


def results(store: Path) -> dict[str, dict]:
    """The store's cells by key, without the facts of where and when they ran."""
    with ResultStore(store) as s:
        return {r["key"]: {k: v for k, v in r.items() if k not in RUN_FACTS}
                for r in s.rows()}


def reference_results(tmp: Path) -> tuple[dict, dict]:
    """The TINY and SLOW grids run in this process: what every other run must equal."""
    from dpol.experiments.sweeps.sweep import sweep

    sweep(config(TINY), workers=1, store=tmp / "tiny.sqlite")
    sweep(config(SLOW), workers=1, store=tmp / "slow.sqlite")
    return results(tmp / "tiny.sqlite"), results(tmp / "slow.sqlite")
