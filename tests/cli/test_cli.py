"""The dpol command: --help everywhere, the committed example reports, and tables that
fit an 80-column terminal in every subcommand that prints one. Each subcommand's own
tests are in the file named for its module (test_run.py, test_cli_privacy.py, ...)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("typer.testing")

from cli_cases import assert_real_png, invoke

from dpol.cli import _app

COMMANDS = ("demo", "run", "reproduce", "account", "audit", "counters")

@pytest.fixture(scope="module")
def app():
    return _app()


def test_help_of_the_command_and_every_subcommand(app):
    top = invoke(app, ["--help"])
    assert top.exit_code == 0
    for command in COMMANDS:
        assert command in top.output
        result = invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output, command
    assert "incremental_regression" in invoke(app, ["run", "--help"]).output


def test_committed_example_reports_show_real_plots():
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs" / "examples"
    report = (docs / "run_pqftl_synthetic" / "report.md").read_text()
    for phrase in ("## Privacy guarantee", "Calibration:** tight", "Noise:**", "## Parameters",
                   "## Results", "non-private twin"):
        assert phrase in report, phrase
    shown = 0
    for page in docs.rglob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text()):
            assert_real_png(page.parent / target)
            shown += 1
    assert shown >= 3  # regret, loss, counter error against T


def test_tables_fit_an_80_column_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    narrow = _app()  # rich reads COLUMNS when the console is made
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * 0.3
    data = tmp_path / "c.csv"
    np.savetxt(data, np.c_[X, (X[:, 0] > 0).astype(float)], delimiter=",")
    runs = [invoke(narrow, ["run", "igd", data, "--test-fraction", "0.2", "--out",
                            tmp_path / "o"]),
            invoke(narrow, ["demo", "--out", tmp_path / "demo"]),
            invoke(narrow, ["account", "--counter", "tree", "-T", "1024"]),
            invoke(narrow, ["counters", "-T", "64"])]
    for result in runs:
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, result.stdout
        tables = [line for line in lines if line[:1] in "┃│"]
        assert tables and not any("…" in line for line in tables), result.stdout
