"""The header rule of CSV tables, one for every reader (layer L4).

:func:`~dpol.datasets.files.read_table` and :func:`~dpol.datasets.chunks.iter_table`
decide by :func:`csv_header` whether a CSV's first line names the columns, so a file
reads the same whole or in chunks:

a first line with a non-number is a header; a line of numbers is data, unless it reads
``0,1,...,k-1`` or ``1,2,...,k`` (pandas' names of unnamed columns) above rows not all
written as integers. That pattern always gets a :class:`HeaderWarning` saying how it was
read.
"""

from __future__ import annotations

import itertools
import math
import re
import warnings
from collections.abc import Iterable

__all__ = ["SAMPLE", "HeaderWarning", "csv_header", "warn_header"]

#: lines below the first that :func:`csv_header` reads: the same in both readers, and
#: few enough for the chunked one to hold before its first chunk
SAMPLE = 100

_INTEGER = re.compile(r"[+-]?[0-9]+")


class HeaderWarning(UserWarning):
    """A CSV's first line of numbers reads as default column names (``0..k-1`` or
    ``1..k``): the message says whether it was read as a header or kept as data row 1,
    and why."""


def is_number(text: str) -> bool:
    """Whether ``float`` reads the text (a CSV field)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _decimal(field: str) -> bool:
    """A finite number not written as an integer (``nan`` or a typo says nothing of the
    columns' kind: the reader refuses it)."""
    return not _INTEGER.fullmatch(field) and is_number(field) and math.isfinite(float(field))


def csv_header(first: str, below: Iterable[str], where: str
               ) -> tuple[list[str] | None, str]:
    """``(column names or None, note)``: whether the CSV line ``first`` is a header (the
    module's rule), ``below`` the lines after it (the first :data:`SAMPLE` are read).

    ``note`` is ``""`` or the text of the :class:`HeaderWarning` the reader gives once the
    table is read (:func:`warn_header`); a file refused for a bad cell has its error to say.

    Examples
    --------
    >>> csv_header("a, b", ["1,2"], "t.csv"), csv_header("3,4", ["1,2"], "t.csv")
    ((['a', 'b'], ''), (None, ''))
    >>> names, note = csv_header("0,1,2", ["0.5,1.5,1.0"], "t.csv")
    >>> names
    ['0', '1', '2']
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    the first line of t.csv, '0,1,2', was read as a header (column names 0..2, as
    pandas names unnamed columns), not as a data row: the rows below are not all
    written as integers
    """
    fields = [f.strip() for f in first.split(",")]
    if not all(is_number(f) for f in fields):
        return fields, ""
    k = len(fields)
    start = next((s for s in (0, 1) if fields == [str(i) for i in range(s, s + k)]), None)
    if k < 2 or start is None:
        return None, ""
    shown = ",".join(fields) if k <= 4 else f"{fields[0]},{fields[1]},...,{fields[-1]}"
    what = (f"the first line of {where}, {shown!r}, was read as {{}} (column names "
            f"{start}..{start + k - 1}, as pandas names unnamed columns)")
    sample = itertools.islice(below, SAMPLE)
    if not any(_decimal(f.strip()) for line in sample for f in line.split(",")):
        # integer data may well start 0,1,2,...: the reading before this rule, said aloud
        return None, (what.format("data row 1, though it reads as a header") + ": the "
                      "rows below are written as integers too; delete the line if it is "
                      "a header")
    return fields, (what.format("a header") + ", not as a data row: the rows below are not "
                    "all written as integers" + ("; a numeric target_col still counts "
                                                 "columns from 0" if start == 1 else ""))


def warn_header(note: str, stacklevel: int = 2) -> None:
    """Give ``note`` of :func:`csv_header` as a :class:`HeaderWarning` (none if empty)."""
    if note:
        warnings.warn(note, HeaderWarning, stacklevel=stacklevel + 1)
