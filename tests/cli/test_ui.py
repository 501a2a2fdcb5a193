"""The console every command shares: a refusal is one line naming the flag the user
typed, exit code 1; each warning one line, once; a table names the columns it cannot
show at the terminal's width."""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest

typer = pytest.importorskip("typer")

from dpol.cli.ui import Ui  # noqa: E402
from dpol.errors import NonPrivateWarning, fail  # noqa: E402


def _ui(width: int) -> Ui:
    from rich.console import Console

    ui = Ui()
    ui.console = Console(file=io.StringIO(), width=width)
    return ui


def test_a_refusal_is_one_line_naming_the_flag_and_warnings_come_once():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(typer.Exit) as stop:
        with _ui(80).refusals("run", {"x_bound": ("--bound", "0")}):
            for _ in range(2):
                warnings.warn("no noise", NonPrivateWarning, stacklevel=1)
            raise fail("x_bound", "be > 0.0", 0.0)
    assert stop.value.exit_code == 1
    assert err.getvalue().splitlines() == ["dpol run: error: --bound must be > 0.0; got 0.0",
                                           "dpol run: warning: NonPrivateWarning: no noise"]


def test_a_table_names_the_columns_it_cannot_show():
    ui = _ui(40)
    row = {"model": "pqftl", "average_regret": 0.25, "mean_loss": 0.1, "accuracy": 0.5}
    ui.show_rows("results", [row], list(row))
    text = ui.console.file.getvalue()
    assert "avg regret" in text and "mean loss" in text
    assert text.rstrip().endswith("(not shown at this width: accuracy)")
    assert max(len(line) for line in text.splitlines()) <= 40
