"""The console helpers every ``dpol`` command shares (layer L6; typer and rich, the
``cli`` extra): refusals as one line, progress bars, tables that fit the terminal."""

from __future__ import annotations

import sys
import warnings
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.table import Table

from dpol.cli.progress import progress_bar
from dpol.cli.text import as_flag, fit_columns, fmt, header, origin
from dpol.errors import DpolError

__all__ = ["Ui"]


class Ui:
    """One console and what the commands print on it."""

    def __init__(self) -> None:
        self.console = Console()

    @contextmanager
    def refusals(self, command: str, options: dict | None = None):
        """Refused input, a missing extra or an unreadable file: one line, exit code 1,
        naming the flag that set a refused argument (``options``: argument -> (flag,
        value given)). Warnings (non-private or paper calibration, ...): one line each."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield
            except (DpolError, ImportError, OSError) as exc:
                sys.stderr.write(f"dpol {command}: error: {as_flag(exc, options)}\n")
                raise typer.Exit(1) from None
            finally:
                for text in dict.fromkeys(f"{w.category.__name__}: {w.message}{origin(w)}"
                                          for w in caught):
                    sys.stderr.write(f"dpol {command}: warning: {text}\n")

    def progress_bar(self, label: str, unit: str = "runs"):
        """A progress bar on the console (:func:`dpol.cli.progress.progress_bar`)."""
        return progress_bar(self.console, label, unit)

    def show_rows(self, title: str, rows: list[dict], keys: list[str]) -> None:
        """A table of ``rows`` under ``title``: the columns ``keys`` that fit the terminal,
        and the names of those that do not."""
        shown = fit_columns(rows, keys, self.console.width)
        self.console.print(title, highlight=False)  # as wide as the terminal, not the table
        table = Table()
        for k in shown:
            table.add_column(header(k), justify="left" if k in ("model", "calibration")
                             else "right", no_wrap=True)
        for row in rows:
            table.add_row(*[fmt(row[k]) for k in shown])
        self.console.print(table)
        if len(shown) < len(keys):
            self.console.print(f"(not shown at this width: "
                               f"{', '.join(header(k) for k in keys[len(shown):])})",
                               highlight=False)

    def show_result(self, result) -> None:
        """An experiment's table and where its report, table and figures are."""
        self.show_rows(result.name, result.rows,
                       [k for k in result.rows[0] if k != "warnings"])
        self.console.print(f"report: {result.report}\ntable:  {result.csv}")
        for fig in result.figures:
            self.console.print(f"figure: {fig}")
