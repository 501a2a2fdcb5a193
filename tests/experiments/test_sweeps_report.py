"""`dpol sweep report`: a store's summary table (the scores first, what the width drops
after them) and one regret plot per data set."""

from __future__ import annotations

import pytest
from sweep_cases import TINY, config

from dpol.experiments.sweeps.sweep import sweep

typer_testing = pytest.importorskip("typer.testing")


def test_report_prints_a_table_and_writes_plots(tmp_path, monkeypatch):
    from dpol.cli import _app

    store = tmp_path / "s.sqlite"
    sweep(config(TINY), workers=1, store=store)
    monkeypatch.setenv("COLUMNS", "250")  # read when the app builds its console
    result = typer_testing.CliRunner().invoke(
        _app(), ["sweep", "report", str(store), "--out", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    assert "configurations" in result.stdout and "honaker" in result.stdout
    # a simulation seeded on purpose, and the report says what that means
    assert ("its guarantees hold only against whoever does not know the seeds"
            in " ".join(result.stdout.split()))
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["sweep_synthetic-classification_regret.png",
                    "sweep_synthetic-regression_regret.png"]
    # at 80 columns the scores stay; what the width drops comes after them
    monkeypatch.setenv("COLUMNS", "80")
    narrow = typer_testing.CliRunner().invoke(
        _app(), ["sweep", "report", str(store), "--out", str(tmp_path / "p80")])
    dropped = " ".join(narrow.stdout.split()).split("not shown at this width: ")[1]
    assert "avg regret" not in dropped and "accuracy" not in dropped
