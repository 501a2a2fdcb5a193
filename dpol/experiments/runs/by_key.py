"""``dpol run --by KEY``: one private model per key of a table, in parallel (layer L5).

The table's rows are split by the value of the column ``by`` (a tenant, a region, a
device group), each key's rows kept in their order, and each key's stream runs as its own
``dpol run`` (:func:`~dpol.experiments.runs.pipeline.run_learner`: the same stages,
report and files) on an engine of :mod:`dpol.experiments.sweeps.engines` (local
processes, Ray or Dask). The output folder holds one sub-folder per key, ``BY=KEY``, a
``summary.csv`` with a row per key and a ``report.md`` that lists each key's guarantee;
it appears whole or not at all. With ``checkpoint_every`` each key's run is checkpointed
and a stopped run resumed (:mod:`~dpol.experiments.runs.by_key_checkpoint`). With
``chunk_rows`` the table is never read whole: each key's rows are written to a file of
their own, then each key's run is chunked (:mod:`~dpol.experiments.runs.by_key_chunked`).

Privacy
-------
Each key's model is its own mechanism, with the guarantee its report states (relation,
sensitivity and calibration of its learner, at the run's epsilon and delta). The keys
split the rows into disjoint streams, and the split is treated as **public**: which key a
row belongs to, and how many rows each key holds (each model's horizon), as a tenant id
is. Under that relation (replace-one of a row by another row of the same key), a row
changes one key's stream only, so the whole output, every key's releases together, is
(max epsilon, max delta)-DP by parallel composition (McSherry 2009, Theorem 4): the
budget is not split across keys. A row that may move between keys (a private key)
changes two streams: the guarantee is then the composition of two keys' (about 2
epsilon), which this module does not claim; protect the key by other means. Seeds: with
``seed`` the keys (in sorted order) take independent seeds, :func:`key_seeds` (children
of ``numpy.random.SeedSequence(seed)``); without, every key's noise comes from fresh OS
entropy.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import as_completed
from itertools import chain
from pathlib import Path

import numpy as np

from dpol._validation import fail
from dpol.datasets.files import read_table
from dpol.datasets.table import Table
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs.by_key_checkpoint import (
    finished_keys,
    run_key_checkpointed,
    start_manifest,
)
from dpol.experiments.runs.by_key_chunked import run_by_key_chunked
from dpol.experiments.runs.by_key_parts import (
    SCORES,
    check_counts,
    key_column,
    key_name,
    key_seeds,
    publish_keys,
    target_without_key,
    with_key,
)
from dpol.experiments.runs.checkpoint import data_fingerprint, load_checkpoint
from dpol.experiments.runs.output import find_checkpoint, remove_checkpoint, staged_output
from dpol.experiments.runs.pipeline import run_learner, run_request
from dpol.experiments.runs.stages import read_rows
from dpol.experiments.sweeps.engines import check_address, open_engine, require

__all__ = ["SCORES", "key_seeds", "resume_any", "run_by_key", "split_by_key"]


def split_by_key(table: np.ndarray, names: list[str], by: int | str
                 ) -> tuple[str, np.ndarray, list[np.ndarray], np.ndarray, list[str]]:
    """The key column's name, the sorted keys, each key's row indices (in file order),
    and the table without the key column and its names.

    Examples
    --------
    >>> t = np.array([[2, 0.1, 1.0], [1, 0.2, 2.0], [2, 0.3, 3.0], [1, 0.4, 4.0]])
    >>> name, keys, rows, rest, names = split_by_key(t, ["tenant", "x", "y"], "tenant")
    >>> name, keys.tolist(), [r.tolist() for r in rows], names
    ('tenant', [1.0, 2.0], [[1, 3], [0, 2]], ['x', 'y'])
    """
    column = key_column(by, names)
    keys, inverse = np.unique(table[:, column], return_inverse=True)
    counts = np.bincount(inverse)
    check_counts(keys, counts, names[column], by)
    order = np.argsort(inverse, kind="stable")  # stable: a key's rows keep their order
    rows = np.split(order, np.cumsum(counts)[:-1])
    rest = np.delete(table, column, axis=1)
    return names[column], keys, rows, rest, [n for i, n in enumerate(names) if i != column]


def _run_key(learner: str, table: Table, args: dict, seed: object) -> tuple[list, list, dict]:
    """One key's run, in a worker: its result rows, notes and files (name -> bytes), so a
    worker on another machine sends its outputs back to the driver."""
    scratch = Path(tempfile.mkdtemp(prefix="dpol-key-"))
    try:
        result = run_learner(learner, table, scratch / "run", seed=seed, **args)
        files = {p.name: p.read_bytes() for p in (scratch / "run").iterdir() if p.is_file()}
        return result.rows, result.notes, files
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _check(learner: str, data: object, out_dir: str | Path, by: object, backend: str,
           address: str | None, run_args: dict, resumed: dict | None) -> None:
    """Every argument, before any row is read: one line naming what is refused."""
    if by is None or (isinstance(by, str) and not by):
        raise fail("by", "name the key column (a name or an index)", by)
    if run_args.get("checkpoint_every") is not None and str(data) == "-":
        raise fail("checkpoint_every", "be unset for data read from standard input (a "
                   "resumed run must read the same rows again)", run_args["checkpoint_every"])
    if resumed is None:  # a resumed run's arguments were checked when it started
        run_request(learner, "synthetic-regression", out_dir, **run_args)  # the run's checks
    require(backend)
    check_address(backend, address)


def run_by_key(learner: str, data: object, out_dir: str | Path, *, by: int | str,
               backend: str = "local", workers: int = 1, address: str | None = None,
               seed: int | None = None, progress=None, _resumed: dict | None = None,
               **run_args) -> ExperimentResult:
    """Run ``learner`` on each key's rows of ``data`` (module docstring); write outputs.

    ``run_args`` are :func:`~dpol.experiments.runs.pipeline.run_learner`'s (epsilon,
    target_col, test_fraction, ...), the same for every key; ``target_col`` counts the
    columns of the file, key column included. ``progress(rows, total, label)`` as keys
    finish (the rows of the keys done; ``label``: how many keys). Every key's rows pass the
    run's checks (labels, bounds) before any key runs; a refusal names its key.
    ``checkpoint_every`` checkpoints each key's run in ``OUT.checkpoint``, :func:`resume_any`
    continues a stopped run, finished keys as they are (:mod:`.by_key_checkpoint`);
    ``chunk_rows`` runs each key chunked, the table never read whole (:mod:`.by_key_chunked`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(150, 2)) / 2
    >>> table = np.column_stack([rng.integers(0, 3, 150), X, X @ [0.5, -0.3]])
    >>> path = Path(tempfile.mkdtemp()) / "t.npy"; np.save(path, table)
    >>> res = run_by_key("ridge", path, path.parent / "out", by=0, seed=1, baseline=False)
    >>> [(r["key"], r["rows"]) for r in res.rows], sorted(p.name for p in res.csv.parent.glob("*"))
    ([('0', 54), ('1', 50), ('2', 46)], ['report.md', 'summary.csv', 'x0=0', 'x0=1', 'x0=2'])
    """
    _check(learner, data, out_dir, by, backend, address, run_args, _resumed)
    manifest = {"learner": learner, "data": _absolute(data), "out_dir": str(out_dir),
                "by": by, "backend": backend, "workers": workers, "address": address,
                "seed": seed, **run_args}
    if run_args.get("chunk_rows") is not None:  # a file larger than memory: another path
        return run_by_key_chunked(learner, data, out_dir, manifest, progress, _resumed)
    table, names = read_table(data)
    if "target_col" in run_args and run_args["target_col"] is not None:
        run_args = {**run_args, "target_col": target_without_key(
            run_args["target_col"], names, key_column(by, names))}
    column, keys, rows, rest, rest_names = split_by_key(table, names, by)
    seeds = key_seeds(seed, len(keys))
    label = "standard input" if str(data) == "-" else Path(str(data)).name
    args = {k: v for k, v in run_args.items() if k not in ("replace", "command")}
    folders = [f"{column}={key_name(k)}" for k in keys]
    out = Path(out_dir)
    tables = [Table(rest[r], rest_names, f"{label} [{folders[i]}]") for i, r in enumerate(rows)]
    for t, folder in zip(tables, folders, strict=True):  # each key's refusals, first
        with_key(folder, lambda t=t, where=out / folder: read_rows(run_request(
            learner, t, where, **{**args, "replace": True})))
    kept = None if run_args.get("checkpoint_every") is None else start_manifest(
        out, manifest, data_fingerprint(table), _resumed)
    done: dict[int, tuple] = {} if kept is None else finished_keys(kept, folders)
    rows_done = 0
    with staged_output(out, replace=run_args.get("replace", False),
                       then=None if kept is None else lambda: remove_checkpoint(out)) as stage, \
            open_engine(backend, workers, address) as engine:
        futures = {(engine.submit(_run_key, learner, t, args, seeds[i]) if kept is None else
                    engine.submit(run_key_checkpointed, learner, t, args, seeds[i],
                                  str(kept / folders[i]))): i
                   for i, t in enumerate(tables) if i not in done}
        for item in chain(sorted(done), as_completed(futures)):  # finished keys first
            if isinstance(item, int):  # a key finished before a resumption, as it is
                i, files = item, None
            else:
                i = futures[item]
                key_rows, key_notes, files = with_key(folders[i], item.result)
                done[i] = key_rows, key_notes  # the files go to disk now, not held for all
            if files is None:  # in its checkpointed run's folder
                shutil.copytree(kept / folders[i], stage / folders[i],
                                copy_function=shutil.copyfile)
            else:
                (stage / folders[i]).mkdir()
                for name, blob in files.items():
                    (stage / folders[i] / name).write_bytes(blob)
            rows_done += len(rows[i])
            if progress:
                progress(rows_done, len(table), f"{len(done)}/{len(keys)} keys")
        summary, notes = publish_keys(stage, learner, label, column, folders, keys,
                                      [len(r) for r in rows], done, engine.describe())
    return ExperimentResult(f"run_{learner}_by_{column}", summary, out / "report.md",
                            out / "summary.csv", [], notes)


def resume_any(out_dir: str | Path, *, progress=None) -> ExperimentResult:
    """Continue the stopped ``dpol run`` of the output folder ``out_dir`` (or of its
    checkpoint folder): a run by key from its manifest, any other as
    :func:`~dpol.experiments.runs.pipeline.resume_run` does."""
    folder, out = find_checkpoint(out_dir)
    saved = load_checkpoint(folder)
    run = run_by_key if saved.get("by_key") else run_learner
    return run(**{**saved["args"], "out_dir": out}, progress=progress, _resumed=saved)


def _absolute(data: object) -> object:
    """A file as an absolute path (a resumed run may start elsewhere), else as given."""
    if isinstance(data, (str, Path)) and str(data) != "-" and Path(data).is_file():
        return str(Path(data).absolute())
    return data


