"""``dpol run --by KEY --chunk-rows N``: one private model per key of a file larger than
memory (layer L5).

**Design: spill, then run each key chunked.** One pass reads the file ``N`` rows at a time
(:func:`dpol.datasets.chunks.iter_table`), groups each chunk's rows by key (a stable
sort: a key's rows keep their file order) and appends them to that key's NPY file
(:func:`spill_by_key`); then each key's file is an ordinary chunked run
(:mod:`~dpol.experiments.runs.chunked`) on the engine of ``--backend``, as the keys of a
run by key without chunks are (:mod:`~dpol.experiments.runs.by_key`). So each key's
releases are those of ``dpol run LEARNER <the key's rows alone> --chunk-rows N`` with the
key's seed (:func:`~dpol.experiments.runs.by_key_parts.key_seeds`), bit for bit: the same rows
in the same chunks of ``N`` rows, down to the running sums of the report. Routing each
chunk's rows to a learner per key in one process would need no disk, but a key's rows
would reach its learner in pieces of any size (its sums in another order, not its own
run's), the keys could not run in parallel, and buffering ``N`` rows per key to keep the
chunks would hold ``N`` rows of every key at once.

* Memory: the pass holds one chunk (and its grouped copy); each key's run one chunk of its
  rows and its learners, on each worker. The table is never read whole (measured, 8 keys,
  11 columns, chunks of 20,000: peak RSS 228 MB at 400,000 rows, 235 MB at 800,000; read
  whole, 380 MB at 400,000; the imports alone 142 MB).
* Disk: the rows once more, as float64 without the key column (8 bytes a cell), in an
  owner-only folder (raw rows): inside the staging folder (removed with it, even after a
  ``kill -9``: the next run into ``--out`` removes it), or with ``checkpoint_every`` in
  the checkpoint folder (``OUT.checkpoint/rows``), deleted once the outputs are published.
* Parallelism: the keys' runs are independent jobs of the engine; on Ray or Dask across
  machines, the folder of ``--out`` must be on a file system every worker shares (each key's
  run reads its rows and writes its outputs there).
* Checkpoints: the keys' runs checkpoint as chunked runs do, under the run by key's manifest
  (:mod:`~dpol.experiments.runs.by_key_checkpoint`), whose hash of the rows the pass
  computes. A resumed run spills the file again (the same files: the rows are checked
  against the manifest's hash), takes the finished keys as they are and continues the
  others from their checkpoints. A chunked run removes its checkpoint once its outputs are
  published, so a key killed between that and its record is run again from its start
  (with a seed: the same files; its earlier outputs sat only in the checkpoint folder).

What a chunked run leaves out (regret, held-out split, bounds or scaling estimated
privately) each key's run leaves out, and its report says so.

Privacy
-------
As in a run by key without chunks: each key's model is its own mechanism with the
guarantee its report states, and the split by key is **public**: which key a row has and
how many rows each key holds (each key's horizon, known here only once the pass has read
the file, as it is there once the table is read). Under replace-one of a row by a row of
the same key, a row changes one key's stream only: all the releases together are (max
epsilon, max delta)-DP by parallel composition (McSherry 2009, Theorem 4). A private key
is not covered.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from concurrent.futures import as_completed
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from dpol._validation import fail
from dpol.datasets.chunks import iter_table
from dpol.datasets.files import split_label
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs import by_key_parts as keyed
from dpol.experiments.runs.by_key_checkpoint import (
    finished_keys,
    run_key_checkpointed,
    start_manifest,
)
from dpol.experiments.runs.checkpoint import check_resumed, data_fingerprint, private_folder
from dpol.experiments.runs.chunked import _check_chunked, _labels, _outputs
from dpol.experiments.runs.output import checkpoint_folder, remove_checkpoint, staged_output
from dpol.experiments.runs.pipeline import run_learner, run_request
from dpol.experiments.sweeps.engines import open_engine

__all__ = ["KeyRows", "Spilled", "run_by_key_chunked", "spill_by_key"]

#: the manifest's entries that are the run by key's own, not each key's run's
_BY_KEY = ("learner", "data", "out_dir", "by", "backend", "workers", "address", "seed")
#: key files kept open at once while spilling (the others are reopened when their key
#: comes again): far below the usual limit of 1,024 open files
_OPEN = 256


class KeyRows(str):
    """One key's rows spilled to an NPY file (the string: its path), with the column names
    and the name (``t.csv [key=3]``) its chunked run shows, as a run by key's
    :class:`~dpol.datasets.table.Table` carries them.

    >>> import pickle
    >>> rows = pickle.loads(pickle.dumps(KeyRows("/tmp/0.npy", "t.csv [key=3]", ["x", "y"])))
    >>> str(rows), rows.label, rows.names  # to a worker process, whole
    ('/tmp/0.npy', 't.csv [key=3]', ['x', 'y'])
    """

    label: str
    names: list[str]

    def __new__(cls, path: str, label: str, names: list[str]) -> KeyRows:
        rows = super().__new__(cls, path)
        rows.label, rows.names = label, list(names)
        return rows

    def __reduce__(self):  # to a worker process, with its label and names
        return KeyRows, (str(self), self.label, self.names)


@dataclass
class Spilled:
    """What :func:`spill_by_key` wrote: the key column's name, the sorted keys, each
    one's rows (file and count), the label column's index without the key column, and the
    SHA-256 of the chunks read (None unless asked)."""

    column: str
    keys: np.ndarray
    rows: list[KeyRows]
    counts: list[int]
    target: int
    digest: str | None


class _KeyFile:
    """The NPY file of one key's rows, written by appends: a header for 0 rows first
    (numpy pads it to the same length for any number of rows), the true one at the end."""

    def __init__(self, path: Path, width: int) -> None:
        self.path, self.width, self.n, self.fh = path, width, 0, None

    def _header(self) -> bytes:
        out = io.BytesIO()
        np.lib.format.write_array_header_1_0(out, {
            "descr": "<f8", "fortran_order": False, "shape": (self.n, self.width)})
        return out.getvalue()

    def open(self) -> _KeyFile:
        """Open for appends (kept open across chunks while fewer than _OPEN are)."""
        if self.path.exists():
            self.fh = open(self.path, "ab")
        else:
            self.fh = open(self.path, "wb")
            self.fh.write(self._header())
        return self

    def append(self, rows: np.ndarray) -> None:
        self.fh.write(np.ascontiguousarray(rows, dtype="<f8").tobytes())
        self.n += len(rows)

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def finish(self) -> None:
        self.close()
        with open(self.path, "r+b") as fh:
            fh.write(self._header())


def spill_by_key(data: str | Path, chunk_rows: int, by: int | str, folder: Path, *,
                 target_col: int | str | None = None, labels=None, hashed: bool = False
                 ) -> Spilled:
    """Read ``data`` ``chunk_rows`` rows at a time and write each key's rows of the column
    ``by`` (in file order, without the key column) to ``folder/RANK.npy``, the keys ranked
    in sorted order. ``labels(y, start, folder)``, if given, checks each key's labels as
    they come (``start``: the key's rows before them); ``hashed``: a SHA-256 of the chunks.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("k,x,y\\n7,1,2\\n3,3,4\\n7,5,6\\n3,7,8\\n7,9,0\\n")
    >>> s = spill_by_key(path, 2, "k", path.parent / "rows")
    >>> s.column, s.keys.tolist(), s.counts, np.load(s.rows[1]).tolist(), s.rows[1].label
    ('k', [3.0, 7.0], [2, 3], [[1.0, 2.0], [5.0, 6.0], [9.0, 0.0]], 't.csv [k=7]')
    """
    shutil.rmtree(folder, ignore_errors=True)  # a killed run's
    folder.mkdir(mode=0o700, parents=True)
    digest = hashlib.sha256() if hashed else None
    files: dict[float, _KeyFile] = {}
    opened: list[_KeyFile] = []  # the files open now
    column = target = None
    try:
        for table, names in iter_table(data, chunk_rows):
            if column is None:  # the columns' checks of a run, on the first chunk
                column = keyed.key_column(by, names)
                rest = [n for i, n in enumerate(names) if i != column]
                target = len(rest) - 1 if target_col is None else keyed.target_without_key(
                    target_col, names, column)
                split_label(np.delete(table[:1], column, axis=1), rest, target_col=target)
            if digest is not None:
                data_fingerprint(table, digest=digest)
            values, inverse = np.unique(table[:, column], return_inverse=True)
            order = np.argsort(inverse, kind="stable")  # stable: a key's rows keep order
            parts = np.split(np.delete(table, column, axis=1)[order],
                             np.cumsum(np.bincount(inverse))[:-1])
            for value, part in zip(values.tolist(), parts, strict=True):
                f = files.get(value)
                if f is None or f.fh is None:
                    if len(opened) >= _OPEN:  # all closed: the keys to come reopen theirs
                        for g in opened:
                            g.close()
                        opened.clear()
                    if f is None:
                        f = files[value] = _KeyFile(folder / f"{len(files)}.part", len(rest))
                    opened.append(f.open())
                if labels is not None:
                    labels(part[:, target], f.n, f"{names[column]}={keyed.key_name(value)}")
                f.append(part)
    finally:
        for f in files.values():
            f.close()
    if column is None:
        raise fail("data", "hold at least one row", str(data))
    keys = np.array(sorted(files))
    for f in files.values():
        f.finish()
    keyed.check_counts(keys, np.array([files[k].n for k in keys.tolist()]), names[column], by)
    label = Path(str(data)).name
    rows = []
    for rank, value in enumerate(keys.tolist()):
        path = (folder / f"{rank}.npy").absolute()
        os.replace(files[value].path, path)
        folder_name = f"{names[column]}={keyed.key_name(value)}"
        rows.append(KeyRows(str(path), f"{label} [{folder_name}]", rest))
    return Spilled(names[column], keys, rows, [files[k].n for k in keys.tolist()], target,
                   None if digest is None else digest.hexdigest())


def _run_key_rows(learner: str, rows: KeyRows, args: dict, seed: object, where: str
                  ) -> tuple[list, list, None]:
    """One key's chunked run (in a worker) into the folder ``where``: its rows and notes."""
    result = run_learner(learner, rows, where, seed=seed, **args)
    return result.rows, result.notes, None


def _chunked_checks(learner: str, data: object, out: Path, run_args: dict):
    """The chunked run's checks of the arguments, before any row is read, and its check of
    each key's labels (None for a regression), refusing with the key's folder."""
    request = run_request(learner, data, out, **run_args)
    _check_chunked(request)
    outputs = _outputs(request)
    if not request.classification:
        return None
    return lambda y, start, folder: keyed.with_key(
        folder, lambda: _labels(y, start, outputs, learner))


def run_by_key_chunked(learner: str, data: object, out_dir: str | Path, manifest: dict,
                       progress=None, _resumed: dict | None = None) -> ExperimentResult:
    """:func:`~dpol.experiments.runs.by_key.run_by_key` with ``chunk_rows`` (the module
    docstring), its arguments in ``manifest`` (checked by it).

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.by_key import run_by_key
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(150, 2)) / 2
    >>> table = np.column_stack([rng.integers(0, 3, 150), X, X @ [0.5, -0.3]])
    >>> path = Path(tempfile.mkdtemp()) / "t.npy"; np.save(path, table)
    >>> res = run_by_key("ridge", path, path.parent / "out", by=0, seed=1, baseline=False,
    ...                  chunk_rows=40)
    >>> [(r["key"], r["rows"]) for r in res.rows], "average_regret" in res.rows[0]
    ([('0', 54), ('1', 50), ('2', 46)], False)
    """
    run_args = {k: v for k, v in manifest.items() if k not in _BY_KEY}
    out, every = Path(out_dir), run_args.get("checkpoint_every")
    if _resumed is None:
        labels = _chunked_checks(learner, data, out, run_args)
    else:  # checked when it started; the manifest's hash checks the rows
        labels = None
        check_resumed(manifest, _resumed)
    with staged_output(out, replace=run_args.get("replace", False),
                       then=None if every is None else lambda: remove_checkpoint(out)
                       ) as stage:
        folder = stage / ".rows" if every is None else private_folder(
            checkpoint_folder(out).absolute()) / "rows"
        try:
            spilled = spill_by_key(data, run_args["chunk_rows"], manifest["by"], folder,
                                   target_col=run_args.get("target_col"), labels=labels,
                                   hashed=every is not None)
            kept = None if every is None else start_manifest(out, manifest, spilled.digest,
                                                             _resumed)
        except BaseException:
            if every is not None and _resumed is None:  # no manifest: nothing to resume
                remove_checkpoint(out)
            raise
        summary, notes = _run_keys(learner, manifest, run_args, spilled, stage, kept,
                                   progress)
        if every is None:  # raw rows: never published (a failure here publishes nothing)
            shutil.rmtree(folder)
    return ExperimentResult(f"run_{learner}_by_{spilled.column}", summary, out / "report.md",
                            out / "summary.csv", [], notes)


def _run_keys(learner: str, manifest: dict, run_args: dict, spilled: Spilled, stage: Path,
              kept: Path | None, progress) -> tuple[list[dict], list[str]]:
    """Every key's chunked run on the engine, its outputs in ``stage``; the summary and
    report written; the summary rows and the notes."""
    keys, rows = spilled.keys, spilled.rows
    seeds = keyed.key_seeds(manifest["seed"], len(keys))
    folders = [f"{spilled.column}={keyed.key_name(k)}" for k in keys]
    args = {k: v for k, v in run_args.items() if k not in ("replace", "command")}
    args["target_col"] = spilled.target
    done = {} if kept is None else finished_keys(kept, folders)
    rows_done = 0
    with open_engine(manifest["backend"], manifest["workers"], manifest["address"]) as engine:
        futures = {(engine.submit(_run_key_rows, learner, rows[i], args, seeds[i],
                                  str(stage / folders[i])) if kept is None else
                    engine.submit(run_key_checkpointed, learner, rows[i], args, seeds[i],
                                  str(kept / folders[i]))): i
                   for i in range(len(keys)) if i not in done}
        for item in chain(sorted(done), as_completed(futures)):  # finished keys first
            if isinstance(item, int):
                i = item
            else:
                i = futures[item]
                done[i] = keyed.with_key(folders[i], item.result)[:2]
            if kept is not None:  # its run's outputs, in the checkpoint folder
                shutil.copytree(kept / folders[i], stage / folders[i],
                                copy_function=_link_or_copy)
            rows_done += spilled.counts[i]
            if progress:
                progress(rows_done, sum(spilled.counts), f"{len(done)}/{len(keys)} keys")
        return keyed.publish_keys(stage, learner, Path(str(manifest["data"])).name,
                                  spilled.column, folders, keys, spilled.counts, done,
                                  engine.describe())


def _link_or_copy(source: str, target: str) -> None:
    """A hard link (a key's iterates may be as large as its rows), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
