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

import math
import shutil
import tempfile
from concurrent.futures import as_completed
from itertools import chain
from pathlib import Path

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.datasets.files import _target_index, read_table
from dpol.datasets.table import Table
from dpol.errors import InvalidInputError
from dpol.experiments.report import ExperimentResult, markdown_table, write_csv
from dpol.experiments.runs.by_key_checkpoint import (
    finished_keys,
    run_key_checkpointed,
    start_manifest,
)
from dpol.experiments.runs.checkpoint import data_fingerprint, load_checkpoint
from dpol.experiments.runs.output import find_checkpoint, remove_checkpoint, staged_output
from dpol.experiments.runs.pipeline import run_learner, run_request
from dpol.experiments.runs.stages import read_rows
from dpol.experiments.sweeps.engines import check_address, open_engine, require

__all__ = ["SCORES", "check_counts", "key_seeds", "resume_any", "run_by_key",
           "split_by_key"]

#: the scores of a key's private model that the summary keeps (those its run gives)
SCORES = ("accuracy", "heldout_accuracy", "heldout_r2", "heldout_mse", "average_regret",
          "mean_loss")


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
    column = _key_column(by, names)
    keys, inverse = np.unique(table[:, column], return_inverse=True)
    counts = np.bincount(inverse)
    check_counts(keys, counts, names[column], by)
    order = np.argsort(inverse, kind="stable")  # stable: a key's rows keep their order
    rows = np.split(order, np.cumsum(counts)[:-1])
    rest = np.delete(table, column, axis=1)
    return names[column], keys, rows, rest, [n for i, n in enumerate(names) if i != column]


def check_counts(keys: np.ndarray, counts: np.ndarray, column: str, by: object) -> None:
    """Refuse a key of one row (``counts``: each of ``keys``' rows in the column named
    ``column``): a stream of one row is an id column, or a key to merge."""
    if np.any(counts < 2):
        single = keys[counts < 2]
        raise fail("by", "name a column whose keys each hold 2 rows or more (one stream per "
                   f"key): {len(single)} of {len(keys)} keys of {column!r} hold one "
                   f"row, e.g. {_key(single[0])}", by)


def _key(value: float) -> str:
    """A key as written: the shortest decimal that reads back as it (1, 0.1, 1.0000001),
    so two keys never share a name or a folder."""
    return np.format_float_positional(value, trim="-")


def _key_column(by: int | str, names: list[str]) -> int:
    if isinstance(by, str) and by in names:
        return names.index(by)
    if isinstance(by, (int, np.integer, str)) and str(by).lstrip("-").isdigit():
        index = int(by)
        if -len(names) <= index < len(names):
            return index % len(names)
    raise fail("by", f"be a column name or index of the table ({', '.join(names)})", by)


def key_seeds(seed: int | None, n: int) -> list[int | None]:
    """The int seed of each of ``n`` keys (sorted) of a run seeded with ``seed``: the first
    32-bit word of the child ``SeedSequence(seed).spawn(n)[i]``, so one key's run is
    replayed by ``dpol run --seed`` on its rows alone; None: OS entropy for every key.

    >>> key_seeds(None, 2), key_seeds(3, 2) == key_seeds(3, 2), len(set(key_seeds(3, 50)))
    ([None, None], True, 50)
    """
    if seed is None:
        return [None] * n
    return [int(child.generate_state(1)[0]) for child in spawn_seeds(seed, n)]


def _with_key(folder: str, call):
    """``call()``, its refusal naming the key it is about."""
    try:
        return call()
    except InvalidInputError as exc:
        raise InvalidInputError(f"{folder}: {exc}") from None


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
    ``checkpoint_every`` checkpoints each key's run in ``OUT.checkpoint``, and
    :func:`resume_any` continues a stopped run, finished
    keys as they are (:mod:`~dpol.experiments.runs.by_key_checkpoint`). ``chunk_rows``
    reads the file that many rows at a time and runs each key chunked
    (:mod:`~dpol.experiments.runs.by_key_chunked`).

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
    every = run_args.get("checkpoint_every")
    manifest = {"learner": learner, "data": _absolute(data), "out_dir": str(out_dir),
                "by": by, "backend": backend, "workers": workers, "address": address,
                "seed": seed, **run_args}
    if run_args.get("chunk_rows") is not None:  # a file larger than memory: another path
        from dpol.experiments.runs.by_key_chunked import run_by_key_chunked

        return run_by_key_chunked(learner, data, out_dir, manifest, progress=progress,
                                  _resumed=_resumed)
    table, names = read_table(data)
    if "target_col" in run_args and run_args["target_col"] is not None:
        run_args = {**run_args, "target_col": _target_without_key(
            run_args["target_col"], names, _key_column(by, names))}
    column, keys, rows, rest, rest_names = split_by_key(table, names, by)
    seeds = key_seeds(seed, len(keys))
    label = "standard input" if str(data) == "-" else Path(str(data)).name
    args = {k: v for k, v in run_args.items() if k not in ("replace", "command")}
    folders = [f"{column}={_key(k)}" for k in keys]
    out = Path(out_dir)
    tables = [Table(rest[r], rest_names, f"{label} [{folders[i]}]") for i, r in enumerate(rows)]
    for t, folder in zip(tables, folders, strict=True):  # each key's refusals, first
        _with_key(folder, lambda t=t, where=out / folder: read_rows(run_request(
            learner, t, where, **{**args, "replace": True})))
    kept = None if every is None else start_manifest(
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
                key_rows, key_notes, files = _with_key(folders[i], item.result)
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
        summary = [_summary_row(folders[i], keys[i], len(rows[i]), *done[i])
                   for i in range(len(keys))]
        write_csv(summary, stage / "summary.csv")
        _write_report(stage / "report.md", learner, label, column, summary, engine.describe())
    notes = _grouped_notes([done[i][1] for i in range(len(keys))], folders)
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


def _target_without_key(target: int | str, names: list[str], key: int) -> int:
    """``target_col`` of the file, as an index of the table without its key column."""
    index = _target_index(target, names)  # the file's rule: a name or an index
    if index == key:
        raise fail("target_col", "be a column of the table other than the key column",
                   target)
    return index - (index > key)


def _summary_row(folder: str, key: float, n: int, rows: list[dict], notes: list) -> dict:
    private = rows[0]
    trivial = next((r for r in rows if "trivial" in r["model"]), {})
    out = {"key": _key(key), "rows": n, "guarantee": private["guarantee"]}
    for score in SCORES:
        value = private.get(score)
        if isinstance(value, float) and not math.isnan(value):
            out[score] = value
            base = trivial.get(score)
            if isinstance(base, float) and not math.isnan(base):
                out[f"trivial_{score}"] = base
    return {**out, "notes": len(notes), "folder": folder}


def _grouped_notes(notes: list[list[str]], folders: list[str], shown: int = 5) -> list[str]:
    """Each key's notes, for the console: a note every key has once, the others with their
    key, the first ``shown`` keys' only and a count of the rest (thousands of keys)."""
    common = [n for n in notes[0] if all(n in other for other in notes[1:])]
    own = [(f, n) for f, keyed in zip(folders, notes, strict=True) for n in keyed
           if n not in common]
    keyed = sorted({f for f, _ in own}, key=folders.index)
    out = common + [f"{f}: {n}" for f, n in own if f in keyed[:shown]]
    if len(keyed) > shown:
        out.append(f"{len(keyed) - shown} more keys have notes of their own (the 'notes' "
                   "column of summary.csv; each key's report.md)")
    return out


def _epsilon_delta(guarantee: str) -> tuple[float, float]:
    """(epsilon, delta) of a guarantee as its report writes it: "(1, 1e-05)-DP, ..."."""
    epsilon, delta = guarantee[1:guarantee.index(")-DP")].split(", ")
    return float(epsilon), float(delta)


def _write_report(path: Path, learner: str, data: str, column: str, summary: list[dict],
                  engine: str) -> None:
    keys = list(dict.fromkeys(k for r in summary for k in r))
    table = [{k: r.get(k, "") for k in keys} for r in summary]
    worst = max((r["guarantee"] for r in summary), key=_epsilon_delta)
    path.write_text("\n".join([
        f"# {learner} on {data}, one model per {column}", "",
        f"{len(summary)} keys, {sum(r['rows'] for r in summary)} rows, run on {engine}. "
        f"Each key's folder holds its own run: report, iterates, losses and plots.", "",
        "## Privacy", "",
        "Each key's model has the guarantee of its own report (below). The keys split the "
        "rows into disjoint streams and the split is public (a row's key, each key's number "
        "of rows): a row changes one key's stream only, so all the releases together are "
        f"as private as the least private key, {worst} (parallel composition). A key that "
        "is itself private is not covered: a row moving between keys changes two streams.",
        "", "## Keys", "", markdown_table(table), ""]))
