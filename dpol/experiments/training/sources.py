"""The data of ``dpol train``: partitions of a Parquet folder, a Dask DataFrame or a Ray
Dataset, their columns checked from metadata before anything is read (layer L5).

A partition is a unit of the data itself (a Parquet file, a Dask partition, a Ray block),
in the data's own order: row ids (which fix the public batch schedule) and the order in
which the driver adds the partitions' gradient sums depend on the data, never on how
many workers hold it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpol._validation import fail

__all__ = ["Partition", "Source", "as_source", "load_partition", "table_arrays"]


@dataclass(frozen=True)
class Partition:
    """One partition: its place in the data's order and how a worker reads it.

    ``kind`` is "parquet" (``ref``: the file), "pandas" (``ref``: a Dask delayed or Ray
    object reference the engine resolves to a pandas DataFrame) or "arrays" (``ref``:
    (X, y) in memory).
    """

    index: int
    kind: str
    ref: object = field(repr=False, compare=False)
    n_rows: int | None = None


@dataclass(frozen=True)
class Source:
    """Partitions with the columns they are read as (features, then the label)."""

    partitions: tuple[Partition, ...]
    features: tuple[str, ...]
    label: str
    kind: str  # "parquet", "dask", "ray", "arrays"

    @property
    def n_rows(self) -> int | None:
        """The rows in all, when the metadata says (Parquet, arrays), else None."""
        counts = [p.n_rows for p in self.partitions]
        return None if None in counts else int(sum(counts))


def _columns(names: list[str], kinds: dict[str, bool], label: str,
             features: object, where: str) -> tuple[tuple[str, ...], str]:
    """(features, label) checked against the columns ``names`` (``kinds``: numeric?)."""
    if label not in names:
        raise fail("label", f"name a column of {where} (columns: {', '.join(names)})", label)
    if features is None:
        features = [c for c in names if c != label]
    elif isinstance(features, str):
        features = [f for f in features.split(",") if f]
    features = list(features)
    missing = [c for c in features if c not in names]
    if missing or not features:
        raise fail("features", f"name columns of {where} (missing: {', '.join(missing)}; "
                   f"columns: {', '.join(names)})", features)
    for c in [*features, label]:
        if not kinds[c]:
            raise fail("features" if c != label else "label", f"name numeric columns only "
                       f"(column {c!r} of {where} is not numeric)", c)
    return tuple(features), label


def _parquet(folder: Path, label: str, features: object) -> Source:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(folder.rglob("*.parquet")) if folder.is_dir() else [folder]
    if not files or not files[0].is_file():
        raise fail("data", "be a Parquet file or a folder holding *.parquet files",
                   str(folder))
    parts, names = [], None
    for i, path in enumerate(files):
        meta = pq.ParquetFile(path)
        schema = meta.schema_arrow
        kinds = {f.name: pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
                 or pa.types.is_boolean(f.type) for f in schema}
        here = _columns(schema.names, kinds, label, features, f"{path.name}")
        if names is not None and here != names:
            raise fail("data", f"hold the same columns in every file ({path.name} differs)",
                       str(folder))
        names = here
        parts.append(Partition(i, "parquet", str(path), meta.metadata.num_rows))
    return Source(tuple(parts), names[0], names[1], "parquet")


def _dask(frame, label: str, features: object) -> Source:
    names = [str(c) for c in frame.columns]
    kinds = {str(c): t.kind in "iufb" for c, t in frame.dtypes.items()}
    features, label = _columns(names, kinds, label, features, "the Dask DataFrame")
    parts = tuple(Partition(i, "pandas", d) for i, d in enumerate(frame.to_delayed()))
    return Source(parts, features, label, "dask")


def _ray(dataset, label: str, features: object) -> Source:
    import pyarrow as pa

    schema = dataset.schema()
    names = list(schema.names)
    kinds = {n: (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t))
             if isinstance(t, pa.DataType) else np.dtype(t).kind in "iufb"
             for n, t in zip(names, schema.types, strict=True)}
    features, label = _columns(names, kinds, label, features, "the Ray Dataset")
    refs = dataset.to_pandas_refs()
    return Source(tuple(Partition(i, "pandas", r) for i, r in enumerate(refs)),
                  features, label, "ray")


def as_source(data: object, label: str, features: object = None) -> Source:
    """The partitions of ``data`` (a path, a Dask DataFrame, a Ray Dataset or (X, y)
    arrays), their columns checked: one clear error naming the argument, nothing read.

    Examples
    --------
    >>> X = np.zeros((4, 2)); y = np.ones(4)
    >>> s = as_source((X, y), label="y")
    >>> s.n_rows, s.features, s.kind
    (4, ('x0', 'x1'), 'arrays')
    """
    if isinstance(data, str | Path):
        return _parquet(Path(data), label, features)
    if isinstance(data, tuple) and len(data) == 2:
        X = np.asarray(data[0])
        if X.ndim != 2:
            raise fail("data", "be (X, y) with X of shape (n, d)", X.shape)
        names = tuple(f"x{j}" for j in range(X.shape[1]))
        return Source((Partition(0, "arrays", data, X.shape[0]),), names, "y", "arrays")
    kind = type(data).__module__.split(".")[0]
    if kind == "dask":
        return _dask(data, label, features)
    if kind == "ray":
        return _ray(data, label, features)
    raise fail("data", "be a Parquet folder or file, a Dask DataFrame, a Ray Dataset or "
               "(X, y)", type(data).__name__)


def table_arrays(columns: dict, features: tuple[str, ...], label: str,
                 where: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) from a mapping of column name -> 1-d array; NaN or inf refused by name."""
    X = np.column_stack([np.asarray(columns[c]) for c in features])
    if X.dtype.kind != "f":
        X = X.astype(np.float64)
    y = np.asarray(columns[label], dtype=np.float64)
    for name, values in ((label, y), *((c, X[:, j]) for j, c in enumerate(features))):
        if not np.all(np.isfinite(values)):
            raise fail(f"column {name!r} of {where}", "hold finite numbers only (NaN or "
                       "inf found)", int(np.count_nonzero(~np.isfinite(values))))
    return X, y


def load_partition(part: Partition, features: tuple[str, ...], label: str,
                   resolved: object = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of one partition, on the worker that will hold it (``resolved``: the
    pandas DataFrame an engine resolved a "pandas" partition's reference to)."""
    if part.kind == "arrays":
        X, y = part.ref
        return np.asarray(X), np.asarray(y, dtype=np.float64)
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(part.ref, columns=[*features, label])
        columns = {c: table.column(c).to_numpy() for c in (*features, label)}
        return table_arrays(columns, features, label, Path(part.ref).name)
    return table_arrays({c: resolved[c].to_numpy() for c in (*features, label)},
                        features, label, f"partition {part.index}")
