"""Streams from tables: CSV (a file or standard input), NPY and Parquet files (layer L4).

:func:`read_table` turns a file into a numeric matrix and its column names;
:func:`table_stream` picks the label column and brings the rows to the declared bounds,
counting what it changed. Two normalisations:

* ``"clip"`` (default): rows of l2 norm above ``x_bound`` are scaled down to it and
  labels outside ``[-y_bound, y_bound]`` are clipped. It reads nothing of the data but
  each row itself, so the privacy guarantee of what is learned covers the whole run.
* ``"standardize"``: columns standardised, rows divided by the largest row norm, the
  label mapped affinely onto ``[-y_bound, y_bound]`` (JKT spec 6.3). It reads means,
  standard deviations, the largest row norm and the label range of the data: treat them
  as public, since the guarantee does not cover them.

Classification labels must take exactly two values; the smaller becomes -1 and the
larger +1.
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from dpol._validation import check_choice, check_real, clip_rows_l2, fail
from dpol.datasets.real import normalize_regression, normalize_rows
from dpol.datasets.synthetic import Stream

__all__ = ["NORMALIZATIONS", "TASKS", "read_table", "table_stream"]

NORMALIZATIONS = ("clip", "standardize")
TASKS = ("regression", "classification")
SUFFIXES = (".csv", ".txt", ".data", ".npy", ".parquet")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_csv(handle: TextIO, where: str) -> tuple[np.ndarray, list[str]]:
    lines = [line for line in handle.read().splitlines() if line.strip()]
    if not lines:
        raise fail("data", "hold at least one row", where)
    first = [f.strip() for f in lines[0].split(",")]
    header = not all(_is_number(f) for f in first)
    names = first if header else [f"x{i}" for i in range(len(first))]
    body = lines[1:] if header else lines
    if not body:
        raise fail("data", "hold at least one row below its header", where)
    try:
        table = np.loadtxt(body, delimiter=",", ndmin=2, dtype=np.float64)
    except ValueError as exc:
        raise fail("data", f"hold numbers only, {len(names)} per row ({exc})", where) from None
    return table, names


def _read_parquet(path: Path) -> tuple[np.ndarray, list[str]]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError("reading Parquet needs pyarrow: pip install 'dpol[parquet]'") \
            from exc
    frame = pq.read_table(path)
    try:
        columns = [np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
                   for col in frame.columns]
    except (TypeError, ValueError) as exc:
        raise fail("data", f"hold numeric columns only ({exc})", str(path)) from None
    return np.column_stack(columns), list(frame.column_names)


def read_table(source: str | Path | TextIO) -> tuple[np.ndarray, list[str]]:
    """A numeric table (n, k) and its column names from a file, ``"-"`` or a text stream.

    CSV (``.csv``, ``.txt``, ``.data``, gzipped as ``.gz`` too, or standard input):
    comma-separated numbers, with an optional header line (detected: a first line that is
    not all numbers). NPY: a 2-d array (columns ``x0, x1, ...``). Parquet: numeric
    columns (the ``parquet`` extra).

    Examples
    --------
    >>> import io
    >>> table, names = read_table(io.StringIO("a,b,label\\n1,2,3\\n4,5,6\\n"))
    >>> table.shape, names
    ((2, 3), ['a', 'b', 'label'])
    """
    if source == "-":
        return _read_csv(sys.stdin, "standard input")
    if isinstance(source, io.TextIOBase):
        return _read_csv(source, "the text stream")
    if not isinstance(source, (str, Path)):
        raise fail("data", "be a path, '-' or a text stream", source)
    path = Path(source)
    if not path.is_file():
        raise fail("data", "name an existing file", str(path))
    gz = path.suffix.lower() == ".gz"
    suffix = Path(path.stem).suffix.lower() if gz else path.suffix.lower()
    if suffix not in SUFFIXES or (gz and suffix in (".npy", ".parquet")):
        raise fail("data", f"end in one of {', '.join(SUFFIXES)}", str(path))
    if suffix == ".npy":
        table = np.load(path, allow_pickle=False)
        if table.ndim != 2 or table.dtype.kind not in "iuf":
            raise fail("data", "hold a 2-d numeric array", f"{path}: {table.dtype}{table.shape}")
        return table.astype(np.float64), [f"x{i}" for i in range(table.shape[1])]
    if suffix == ".parquet":
        return _read_parquet(path)
    with (gzip.open(path, "rt") if gz else path.open()) as handle:
        return _read_csv(handle, str(path))


def _target_index(target: int | str | None, names: list[str]) -> int:
    if target is None:
        return len(names) - 1
    if isinstance(target, str) and not target.lstrip("-").isdigit():
        if target not in names:
            raise fail("target_col", f"name a column ({', '.join(names)})", target)
        return names.index(target)
    index = int(target)
    if not -len(names) <= index < len(names):
        raise fail("target_col", f"be a column index in [-{len(names)}, {len(names) - 1}]",
                   target)
    return index % len(names)


def _labels(raw: np.ndarray) -> tuple[np.ndarray, str]:
    values = np.unique(raw)
    if values.size != 2:
        raise fail("target_col", "hold exactly two distinct labels for classification",
                   f"{values.size} distinct values")
    return np.where(raw == values[1], 1.0, -1.0), f"label {values[0]:g} -> -1, {values[1]:g} -> +1"


def table_stream(table: np.ndarray, names: list[str] | None = None, *,
                 target_col: int | str | None = None, task: str = "regression",
                 normalize: str = "clip", x_bound: float = 1.0, y_bound: float = 1.0,
                 limit: int | None = None, name: str = "table") -> Stream:
    """A :class:`Stream` from a table: the label column, rows within the declared bounds.

    Parameters
    ----------
    table : array (n, k)
        k >= 2 finite columns.
    names : list of str, optional
        Column names (default ``x0 .. x{k-1}``).
    target_col : int or str, optional
        The label column, by index (negative counts from the end) or name; default last.
    task : {"regression", "classification"}
    normalize : {"clip", "standardize"}
        See the module docstring; ``Stream.n_clipped`` counts the rows clipping changed.
    x_bound, y_bound : float
        The declared bounds ``||x|| <= x_bound`` and ``|y| <= y_bound``.
    limit : int, optional
        Keep the first ``limit`` rows.
    name : str
        The stream's name in reports.

    Examples
    --------
    >>> t = np.array([[3.0, 4.0, 2.0], [0.3, 0.4, 0.5]])
    >>> s = table_stream(t)
    >>> np.round(s.X, 3).tolist(), s.y.tolist(), s.n_clipped
    ([[0.6, 0.8], [0.3, 0.4]], [1.0, 0.5], 1)
    >>> s.normalization
    'rows clipped to ||x|| <= 1 (1 of 2), labels to |y| <= 1 (1 of 2)'
    """
    task = check_choice("task", task, TASKS)
    normalize = check_choice("normalize", normalize, NORMALIZATIONS)
    x_bound = check_real("x_bound", x_bound, low=0.0, low_open=True)
    y_bound = check_real("y_bound", y_bound, low=0.0, low_open=True)
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[1] < 2 or table.shape[0] < 1:
        raise fail("data", "have at least one row and two columns (features, label)",
                   f"shape {table.shape}")
    names = list(names) if names is not None else [f"x{i}" for i in range(table.shape[1])]
    if len(names) != table.shape[1]:
        raise fail("names", f"name all {table.shape[1]} columns", names)
    if limit is not None:
        table = table[:limit]
    bad = ~np.isfinite(table)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise fail("data", "contain only finite numbers",
                   f"{table[row, col]} in row {row + 1}, column {names[col]!r}")
    j = _target_index(target_col, names)
    X, raw = np.delete(table, j, axis=1), table[:, j]
    label_note = ""
    if task == "classification":
        y, label_note = _labels(raw)
        raw = y
    if normalize == "standardize":
        if task == "regression":
            X, y, how = normalize_regression(X, raw)
            y = y * y_bound
        else:
            X, how = normalize_rows(X)
        X = X * x_bound
        how += "; uses statistics of the data (not covered by the privacy guarantee)"
        clipped = 0
    else:
        X, over_x = X.copy(), np.linalg.norm(X, axis=1) > x_bound * (1.0 + 1e-12)
        X, _ = clip_rows_l2(X, x_bound)
        over_y = np.abs(raw) > y_bound
        y = np.clip(raw, -y_bound, y_bound)
        clipped = int(np.count_nonzero(over_x | over_y))
        how = (f"rows clipped to ||x|| <= {x_bound:g} ({int(over_x.sum())} of {len(y)}), "
               f"labels to |y| <= {y_bound:g} ({int(over_y.sum())} of {len(y)})")
    if label_note:
        how = f"{label_note}; {how}"
    features = [n for i, n in enumerate(names) if i != j]
    return Stream(X, y, f"{name} (label {names[j]!r}, {len(features)} features)", how,
                  n_clipped=clipped)
