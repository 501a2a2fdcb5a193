"""The results store of a sweep: one SQLite file, one row per cell (layer L5).

Why SQLite (the standard library's ``sqlite3``) rather than a Parquet data set: each
finished cell is one transaction, committed the moment its result arrives, so a crash, a
lost node or a Ctrl-C loses no finished cell and never leaves a half-written row; a
rerun finds the finished cells by their key (an indexed lookup); it needs no extra
package; and the only writer is the driver (workers return their results to it), which
is the one pattern SQLite serves without locking trouble. Parquet files are immutable:
a row per finished cell would be a file per cell (10,000 small files for a 10,000-cell
grid) or a rewrite of the data set on every cell. Anything that reads SQLite (pandas'
``read_sql``, DuckDB, the ``sqlite3`` shell) reads the store.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from dpol.experiments.sweeps.config import canonical_cell, cell_key

__all__ = ["COLUMNS", "ResultStore", "finished_cells"]

#: the configuration of a cell, then what :func:`~dpol.experiments.sweeps.cell.run_cell`
#: records, then where and when it ran
CONFIG = ("learner", "dataset", "counter", "epsilon", "delta", "seed", "horizon",
          "calibration", "options")
#: the columns of the results store's ``cells`` table
COLUMNS = (*CONFIG, "status", "guarantee", "real_epsilon", "real_delta", "rows",
           "average_regret", "mean_loss", "accuracy", "n_clipped", "warnings", "error",
           "traceback", "seconds", "fit_seconds", "worker", "backend", "finished_at")


class ResultStore:
    """The cells of one or more sweeps, keyed by :func:`~dpol.experiments.sweeps.config.cell_key`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with ResultStore(Path(tmp, "s.sqlite")) as store:
    ...         cell = {"learner": "pqftl", "dataset": "diabetes", "counter": None,
    ...                 "epsilon": 1.0, "delta": None, "seed": 0, "horizon": None,
    ...                 "calibration": "tight", "options": {}}
    ...         store.put("k1", cell, {"status": "done", "mean_loss": 0.5}, "local")
    ...         rows = store.rows()
    ...         store.finished(), rows[0]["mean_loss"], rows[0]["options"]
    ({'k1'}, 0.5, {})
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")  # readers do not block the driver
        cols = ", ".join(f"{c}" for c in COLUMNS)
        self._db.execute(f"CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, "
                         f"config TEXT NOT NULL, {cols})")
        self._db.commit()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def finished(self) -> set[str]:
        """The keys of the cells that finished (failed cells run again on a rerun); a cell
        stored under an old learner or counter name counts under its canonical key too."""
        done = set()
        for key, config in self._db.execute("SELECT key, config FROM cells "
                                            "WHERE status = 'done'"):
            cell = json.loads(config)
            canonical = canonical_cell(cell)
            done |= {key} if canonical is cell else {key, cell_key(canonical)}
        return done

    def put(self, key: str, cell: dict, result: dict, backend: str) -> None:
        """Write one cell's result, committed at once (replacing an earlier failure)."""
        row = {**{c: cell.get(c) for c in CONFIG}, **{c: result.get(c) for c in COLUMNS
                                                       if c not in CONFIG}}
        row.update(options=json.dumps(cell.get("options", {}), sort_keys=True),
                   backend=backend, finished_at=datetime.now(timezone.utc).isoformat())
        names = ", ".join(("key", "config", *COLUMNS))
        marks = ", ".join("?" * (len(COLUMNS) + 2))
        with self._db:  # one transaction: committed, or rolled back on an error
            self._db.execute(f"INSERT OR REPLACE INTO cells ({names}) VALUES ({marks})",
                             (key, json.dumps(cell, sort_keys=True),
                              *(row[c] for c in COLUMNS)))

    def rows(self) -> list[dict]:
        """Every cell, in the order they finished (``options`` parsed back to a dict; learners
        and counters by their canonical names, as a store of old names is read)."""
        cur = self._db.execute(f"SELECT key, {', '.join(COLUMNS)} FROM cells ORDER BY rowid")
        names = [d[0] for d in cur.description]
        out = []
        for values in cur:
            row = dict(zip(names, values, strict=True))
            row["options"] = json.loads(row["options"] or "{}")
            row.update(canonical_cell({"learner": row["learner"], "counter": row["counter"]}))
            out.append(row)
        return out


def finished_cells(path: str | Path) -> set[str]:
    """The keys of the cells finished in the store at ``path``; none if it does not exist
    (and then nothing is created).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     finished_cells(Path(tmp, "none.sqlite")), Path(tmp, "none.sqlite").exists()
    (set(), False)
    """
    if not Path(path).exists():
        return set()
    with ResultStore(path) as store:
        return store.finished()
