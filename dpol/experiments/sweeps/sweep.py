"""``dpol sweep``: a grid of cells on an engine, each result kept at once (layer L5).

:func:`sweep` checks the config and the engine choice before any task starts, skips the
cells the store already holds as finished, runs the rest on local processes, Ray or
Dask (:mod:`dpol.experiments.sweeps.engines`) and writes every result to the store
(:mod:`dpol.experiments.sweeps.store`) the moment it arrives. A worker that dies is
replaced and its task resubmitted; a cell that raises is stored as failed with its
error; a Ctrl-C stops the sweep with every finished cell kept (:class:`SweepInterrupted`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dpol._validation import check_int
from dpol.experiments.sweeps.cell import run_cell
from dpol.experiments.sweeps.config import SweepConfig, cell_key, load_config
from dpol.experiments.sweeps.engines import check_address, open_engine, require
from dpol.experiments.sweeps.runner import run_tasks
from dpol.experiments.sweeps.store import ResultStore, finished_cells

__all__ = ["SweepInterrupted", "SweepSummary", "sweep"]


@dataclass(frozen=True)
class SweepSummary:
    """What one call did: cells in the grid, already finished, run now, failed."""

    store: Path
    backend: str
    total: int
    skipped: int
    done: int
    failed: int

    def line(self) -> str:
        return (f"{self.total} cells: {self.skipped} already in the store, {self.done} "
                f"finished now, {self.failed} failed ({self.backend}); store: {self.store}")


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; the finished cells are in the store (``summary``)."""

    def __init__(self, summary: SweepSummary) -> None:
        super().__init__(f"interrupted: {summary.skipped + summary.done + summary.failed} of "
                         f"{summary.total} cells kept in {summary.store}; rerun the same "
                         "command to finish the others")
        self.summary = summary


def sweep(config: str | Path | SweepConfig, *, backend: str | None = None,
          workers: int | None = None, address: str | None = None,
          store: str | Path | None = None,
          progress: Callable[[int, int], None] | None = None) -> SweepSummary:
    """Run the cells of ``config`` (a TOML path or a :class:`SweepConfig`) not yet finished.

    ``backend``, ``workers`` and ``address`` override the config's ``[run]`` table
    (defaults: local, one worker per CPU, no address); ``store`` its store path.
    ``progress(done, total)`` counts the cells run by this call. The store is created
    only once the engine runs: a refused config, engine or address (one that does not
    answer as a Ray head or Dask scheduler within
    :data:`~dpol.experiments.sweeps.engines.probe.CONNECT_TIMEOUT` seconds) leaves
    nothing behind.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.sweeps.config import parse_config
    >>> cfg = parse_config({"horizon": 100, "grid": {"learners": ["pqftl"],
    ...     "epsilons": [1.0, 2.0], "seeds": 1, "datasets": ["synthetic-regression"]}})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = sweep(cfg, workers=1, store=Path(tmp, "s.sqlite"))
    ...     again = sweep(cfg, workers=1, store=Path(tmp, "s.sqlite"))
    >>> (first.done, first.skipped), (again.done, again.skipped)
    ((2, 0), (0, 2))
    """
    cfg = config if isinstance(config, SweepConfig) else load_config(config)
    backend = require(backend or cfg.run.get("backend", "local"))
    workers = check_int("workers", workers or cfg.run.get("workers") or os.cpu_count() or 1,
                        low=1)
    address = check_address(backend, address or cfg.run.get("address"))
    path = Path(store) if store is not None else cfg.store
    # the store is created only once the engine runs: a refused or unreachable engine
    # leaves nothing behind (an existing store is read for its finished cells first)
    finished = finished_cells(path)
    keys = [cell_key(c) for c in cfg.cells]
    todo = [(k, c) for k, c in zip(keys, cfg.cells, strict=True) if k not in finished]
    skipped = len(cfg.cells) - len(todo)
    counts = {"done": 0, "failed": 0}

    def summary() -> SweepSummary:
        return SweepSummary(path, backend, len(cfg.cells), skipped, **counts)

    if progress:
        progress(0, len(todo))
    if not todo:
        return summary()
    try:
        with open_engine(backend, min(workers, len(todo)), address) as engine, \
                ResultStore(path) as results:

            def keep(i: int, result: dict) -> None:
                key, cell = todo[i]
                results.put(key, cell, result, backend)
                counts["done" if result["status"] == "done" else "failed"] += 1
                if progress:
                    progress(counts["done"] + counts["failed"], len(todo))

            run_tasks(engine, run_cell, [c for _, c in todo], keep)
    except KeyboardInterrupt:
        raise SweepInterrupted(summary()) from None
    return summary()
