"""Streams from tables: CSV (a file or standard input), NPY and Parquet files (layer L4).

:func:`read_table` turns a file into a numeric matrix and its column names;
:func:`split_label` picks the label column; :func:`clip_to_bounds` brings the rows to the
declared bounds, counting what it changed (:class:`Clipping`); :func:`table_stream` does
all three. Two normalisations:

* ``"clip"`` (default): rows scaled down to ``x_bound``, labels clipped to ``y_bound``.
  It reads nothing but each row itself, so the guarantee covers the whole run.
* ``"standardize"``: standardised columns, rows and centred labels divided by the 95th
  percentile of their norms, then clipped and scaled to the bounds (as dpol's
  reproductions of JKT's Appendix G). The means, stds and quantiles it reads are not
  covered by the guarantee: treat them as public.

Header detection: :mod:`dpol.datasets._csv_header`. Two-valued classification labels
become -1 / +1. Errors name a cell by its data row (from 1), column and line.
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path
from typing import NamedTuple, TextIO

import numpy as np

from dpol._clip_warning import suggested_bound
from dpol._validation import check_bound, check_choice, fail
from dpol.clipping import clip_norms, clip_rows_l2
from dpol.datasets._csv_header import SAMPLE, HeaderWarning, csv_header, warn_header
from dpol.datasets._csv_header import is_number as _is_number
from dpol.datasets.normalize import normalize_regression, normalize_rows
from dpol.datasets.synthetic import Stream
from dpol.datasets.table import Table
from dpol.errors import InvalidInputError

__all__ = ["NORMALIZATIONS", "TASKS", "Clipping", "HeaderWarning", "clip_to_bounds",
           "read_table", "split_label", "table_stream"]

#: how :func:`table_stream` brings rows within the bounds (its ``normalize`` argument)
NORMALIZATIONS = ("clip", "standardize")
#: the tasks a table is read for (the ``task`` argument)
TASKS = ("regression", "classification")
SUFFIXES = (".csv", ".txt", ".data", ".npy", ".parquet")


def _cell(row: int, names: list[str], col: int, line: int | None) -> str:
    where = f"row {row}, column {names[col]!r}" if col < len(names) else f"row {row}"
    return where if line is None else f"{where} (line {line})"


def _refuse(rule: str, where: str) -> InvalidInputError:
    """``fail`` without the repr: a cell's place is text, quoted only around the cell."""
    return InvalidInputError(f"data must {rule}; got {where}")


def _first_unreadable(body: list[tuple[int, str]], names: list[str], first_row: int = 1
                      ) -> str:
    """Where and why np.loadtxt failed: the first row with a wrong field count or a
    field that is not a number (numpy's own message names body rows from 0 or 1 by
    version and suggests ``usecols``, which means nothing to a ``dpol`` user)."""
    for row, (line, text) in enumerate(body, start=first_row):
        fields = [f.strip() for f in text.split(",")]
        if len(fields) != len(names):
            return f"{len(fields)} fields in row {row} (line {line})"
        for col, field in enumerate(fields):
            if not _is_number(field):
                shown = "an empty field" if not field else repr(field)
                return f"{shown} in {_cell(row, names, col, line)}"
    return "a row numpy could not read"  # pragma: no cover - loadtxt and float() agree


def _read_csv(handle: TextIO, where: str) -> tuple[np.ndarray, list[str]]:
    lines = [(n, line) for n, line in enumerate(handle.read().splitlines(), start=1)
             if line.strip()]
    if not lines:
        raise fail("data", "hold at least one row", where)
    header, note = csv_header(lines[0][1], [text for _, text in lines[1:SAMPLE + 1]], where)
    names = header or [f"x{i}" for i in range(len(lines[0][1].split(",")))]
    body = lines[1:] if header else lines
    if not body:
        raise fail("data", "hold at least one row below its header", where)
    try:
        table = np.loadtxt([text for _, text in body], delimiter=",", ndmin=2,
                           dtype=np.float64)
    except ValueError:
        raise _refuse(f"hold numbers only, {len(names)} per row",
                      f"{_first_unreadable(body, names)} of {where}") from None
    bad = ~np.isfinite(table)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise _refuse("contain only finite numbers", f"{table[row, col]} in "
                      f"{_cell(int(row) + 1, names, int(col), body[row][0])} of {where}")
    warn_header(note, stacklevel=3)  # at the caller of read_table
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


def checked_path(source: str | Path) -> tuple[Path, str]:
    """(path, its table suffix: .csv, .txt, .data, .npy or .parquet; .gz read through):
    an existing file of a kind dpol reads, else ``InvalidInputError`` naming ``data``."""
    path = Path(source)
    if not path.is_file():
        raise fail("data", "name an existing file", str(path))
    gz = path.suffix.lower() == ".gz"
    suffix = Path(path.stem).suffix.lower() if gz else path.suffix.lower()
    if suffix not in SUFFIXES or (gz and suffix in (".npy", ".parquet")):
        raise fail("data", f"end in one of {', '.join(SUFFIXES)}", str(path))
    return path, suffix


def check_npy(table: np.ndarray, path: Path) -> None:
    """A NPY table must be a 2-d numeric array."""
    if table.ndim != 2 or table.dtype.kind not in "iuf":
        raise fail("data", "hold a 2-d numeric array", f"{path}: {table.dtype}{table.shape}")


def read_table(source: str | Path | TextIO | Table) -> tuple[np.ndarray, list[str]]:
    """A numeric table (n, k) and its column names from a file, ``"-"``, a text stream or
    a :class:`~dpol.datasets.table.Table` in memory.

    CSV (``.csv``, ``.txt``, ``.data``, ``.gz``, or standard input): numbers with an
    optional header line (a first line not all numbers, or pandas' default ``0,1,...``
    names, with a :class:`HeaderWarning`; else columns ``x0, x1, ...``). NPY: a 2-d
    array. Parquet: numeric columns (the ``parquet`` extra). A non-finite CSV cell is
    refused with its row, column and line.

    Examples
    --------
    >>> import io
    >>> table, names = read_table(io.StringIO("a,b,label\\n1,2,3\\n4,5,6\\n"))
    >>> table.shape, names
    ((2, 3), ['a', 'b', 'label'])
    >>> read_table(io.StringIO("a,b\\n1,2\\n3,x\\n"))  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: data must hold numbers only, 2 per row; got 'x' in
    row 2, column 'b' (line 3) of the text stream
    """
    if isinstance(source, Table):  # rows already read (one key's, of dpol run --by)
        return source.values, list(source.names)
    if source == "-":
        return _read_csv(sys.stdin, "standard input")
    if isinstance(source, io.TextIOBase):
        return _read_csv(source, "the text stream")
    if not isinstance(source, (str, Path)):
        raise fail("data", "be a path, '-' or a text stream", source)
    path, suffix = checked_path(source)
    if suffix == ".npy":
        table = np.load(path, allow_pickle=False)
        check_npy(table, path)
        return table.astype(np.float64), [f"x{i}" for i in range(table.shape[1])]
    if suffix == ".parquet":
        return _read_parquet(path)
    gz = path.suffix.lower() == ".gz"
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


def _labels(raw: np.ndarray, multi_class: bool = False) -> tuple[np.ndarray, str]:
    values = np.unique(raw)
    codes = multi_class and bool(np.all(values == np.round(values)))  # not a real label
    if values.size > 2 and codes:  # classes sorted: column k of a row is class k's
        marks = ", ".join(f"{v:g} -> e{k + 1}" for k, v in enumerate(values))
        return ((raw[:, None] == values[None, :]).astype(np.float64),
                f"label {marks} (one-hot rows of {values.size} classes)")
    if values.size != 2:
        more = ", or whole numbers coding K > 2 classes," if multi_class else ""
        raise fail("target_col", f"hold exactly two distinct labels{more} for "
                   f"classification (it holds {values.size})", values[:5].tolist()
                   + (["..."] if values.size > 5 else []))
    return np.where(raw == values[1], 1.0, -1.0), f"label {values[0]:g} -> -1, {values[1]:g} -> +1"


def split_label(table: np.ndarray, names: list[str] | None = None, *,
                target_col: int | str | None = None, task: str = "regression",
                multi_class: bool = False) -> tuple[np.ndarray, np.ndarray, str, str]:
    """Features, labels, a description and the label mapping of a checked table.

    Returns ``(X, y, description, label_note)``: ``y`` is the label column (mapped to
    +-1 for classification, ``label_note`` says how), ``description`` names the label
    and counts the features. Non-finite cells are refused with their row (from 1).
    ``multi_class``: K > 2 label values, whole numbers (class codes, never a real
    label), become one-hot rows, ``y`` (n, K), column k for the k-th smallest value (two
    values stay +-1).

    Examples
    --------
    >>> X, y, what, note = split_label(np.array([[1.0, 5.0, 0.0], [2.0, 7.0, 1.0]]),
    ...                                ["a", "b", "c"], target_col="b",
    ...                                task="classification")
    >>> X.tolist(), y.tolist(), what, note
    ([[1.0, 0.0], [2.0, 1.0]], [-1.0, 1.0], "label 'b', 2 features", 'label 5 -> -1, 7 -> +1')
    """
    task = check_choice("task", task, TASKS)
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[1] < 2 or table.shape[0] < 1:
        raise fail("data", "have at least one row and two columns (features, label)",
                   f"shape {table.shape}")
    names = list(names) if names is not None else [f"x{i}" for i in range(table.shape[1])]
    if len(names) != table.shape[1]:
        raise fail("names", f"name all {table.shape[1]} columns", names)
    bad = ~np.isfinite(table)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise _refuse("contain only finite numbers",
                      f"{table[row, col]} in {_cell(int(row) + 1, names, int(col), None)}")
    j = _target_index(target_col, names)
    X, y, note = np.delete(table, j, axis=1), table[:, j], ""
    if task == "classification":
        y, note = _labels(y, multi_class)
    return X, y, f"label {names[j]!r}, {X.shape[1]} features", note


class Clipping(NamedTuple):
    """What clipping rows to the declared bounds changed, for reports and warnings.

    ``rows`` rows; ``x_over`` had ``||x|| > x_bound``, ``y_over`` had ``|y| > y_bound``,
    ``clipped`` either. ``x_suggested`` / ``y_suggested``: the smallest two-digit bounds
    that at most 2.5% of the raw row norms / absolute labels exceed
    (:func:`dpol._clip_warning.suggested_bound`), so following both leaves at most 5% of
    these rows clipped. They are computed from the raw data, so they are for the data
    holder to judge and are **not** a private release.
    """

    rows: int
    x_over: int
    y_over: int
    clipped: int
    x_bound: float
    y_bound: float
    x_suggested: float
    y_suggested: float

    def summary(self) -> str:
        """The counts as a report phrase.

        Examples
        --------
        >>> _, _, c = clip_to_bounds(np.array([[3.0, 4.0], [0.3, 0.4]]), np.array([2.0, .5]))
        >>> c.summary()
        'rows clipped to ||x|| <= 1 (1 of 2), labels to |y| <= 1 (1 of 2)'
        """
        return (f"rows clipped to ||x|| <= {self.x_bound:g} ({self.x_over} of {self.rows}), "
                f"labels to |y| <= {self.y_bound:g} ({self.y_over} of {self.rows})")


def clip_to_bounds(X: np.ndarray, y: np.ndarray, x_bound: float = 1.0, y_bound: float = 1.0
                   ) -> tuple[np.ndarray, np.ndarray, Clipping]:
    """Rows scaled down to ``||x|| <= x_bound``, labels clipped to ``|y| <= y_bound``
    (label rows (n, K) scaled down to norm ``y_bound``, as PQFTL with K outputs does).

    Returns copies and the :class:`Clipping` counts; rows within the bounds are untouched.

    Examples
    --------
    >>> X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.1]])
    >>> Xc, yc, c = clip_to_bounds(X, np.array([0.5, -3.0, 0.2]), 1.0, 1.0)
    >>> Xc.round(3).tolist(), yc.tolist(), c.clipped
    ([[0.6, 0.8], [0.3, 0.4], [0.0, 0.1]], [0.5, -1.0, 0.2], 2)
    """
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    norms = clip_norms(X)  # a huge finite row: inf, as every clip decides it, unwarned
    sizes = np.abs(y) if np.ndim(y) == 1 else clip_norms(y)  # a label row (K,): its norm
    over_x = norms > x_bound * (1.0 + 1e-12)
    over_y = sizes > y_bound
    Xc, _ = clip_rows_l2(np.array(X, dtype=np.float64), x_bound)
    for _ in range(8):  # a scaled row's norm can round one ulp above the bound, where a
        above = clip_norms(Xc) > x_bound  # learner would clip (and count) it again
        if not above.any():
            break
        Xc[above] *= 1.0 - 4.0 * np.finfo(np.float64).eps
    yc = np.clip(y, -y_bound, y_bound) if np.ndim(y) == 1 else y * np.where(  # to norm
        over_y, y_bound / np.where(over_y, sizes, 1.0), 1.0)[:, None]         # y_bound
    n = len(y)
    suggest = [suggested_bound(v) for v in (norms, sizes)]
    return Xc, yc, Clipping(n, int(over_x.sum()), int(over_y.sum()),
                            int(np.count_nonzero(over_x | over_y)), x_bound, y_bound,
                            *suggest)


def table_stream(table: np.ndarray, names: list[str] | None = None, *,
                 target_col: int | str | None = None, task: str = "regression",
                 normalize: str = "clip", x_bound: float = 1.0, y_bound: float = 1.0,
                 limit: int | None = None, name: str = "table", multi_class: bool = False
                 ) -> Stream:
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
    multi_class : bool
        K > 2 classification labels become one-hot rows (:func:`split_label`).

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
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    table = np.asarray(table, dtype=np.float64)
    if limit is not None and table.ndim == 2:
        table = table[:limit]
    X, raw, what, label_note = split_label(table, names, target_col=target_col, task=task,
                                        multi_class=multi_class)
    if normalize == "standardize":
        if task == "regression":
            X, y, how = normalize_regression(X, raw)
            y = y * y_bound
        else:
            (X, how), y = normalize_rows(X), raw
        X = X * x_bound
        how += "; uses statistics of the data (not covered by the privacy guarantee)"
        clipped = 0
    else:
        X, y, clip = clip_to_bounds(X, raw, x_bound, y_bound)
        clipped, how = clip.clipped, clip.summary()
    if label_note:
        how = f"{label_note}; {how}"
    return Stream(X, y, f"{name} ({what})", how, n_clipped=clipped)
