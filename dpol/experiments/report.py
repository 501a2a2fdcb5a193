"""CSV tables and markdown reports of experiments."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ExperimentResult", "markdown_table", "write_csv"]


@dataclass
class ExperimentResult:
    """Where an experiment wrote its outputs, and its summary rows.

    Examples
    --------
    >>> r = ExperimentResult("demo", [{"a": 1}], Path("demo.md"), Path("demo.csv"))
    >>> r.csv.name, r.figures
    ('demo.csv', [])
    """

    name: str
    rows: list[dict]
    report: Path
    csv: Path
    figures: list[Path] = field(default_factory=list)


def write_csv(rows: list[dict], path: str | Path) -> Path:
    """Write dict rows (same keys) as CSV.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = write_csv([{"a": 1, "b": 2.5}], os.path.join(tmp, "out", "t.csv"))
    ...     print(p.name, p.read_text().splitlines())
    t.csv ['a,b', '1,2.5']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def markdown_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """A markdown table of dict rows; floats in 4 significant digits.

    Examples
    --------
    >>> print(markdown_table([{"a": 1.23456, "b": "x"}]))
    | a | b |
    |---|---|
    | 1.235 | x |
    """
    columns = columns or list(rows[0])
    fmt = [lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt[0](r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)
