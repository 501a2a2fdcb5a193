"""`dpol reproduce` (and its listing in the README): a small experiment's outputs, clean
refusals of an unknown experiment or backend."""

from __future__ import annotations

import pytest

typer_testing = pytest.importorskip("typer.testing")

from cli_cases import assert_real_png, invoke  # noqa: E402

from dpol.cli import _app  # noqa: E402
from dpol.experiments.reproductions.reproduce import EXPERIMENTS  # noqa: E402


@pytest.fixture(scope="module")
def app():
    return _app()


def test_reproduce_small_and_refused(app, tmp_path):
    result = invoke(app, ["reproduce", "jkt-logistic", "--quick", "--seeds", "1", "--out",
                          tmp_path])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "jkt_logistic.md").exists()
    assert_real_png(tmp_path / "jkt_logistic_accuracy.png")
    bad = invoke(app, ["reproduce", "nope"])
    assert bad.exit_code != 0 and "must be one of" in bad.output
    assert set(EXPERIMENTS) >= {"jkt-synthetic", "wdp-regret"}


def test_readme_lists_every_experiment_of_reproduce():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    listed = re.search(r"`dpol reproduce (jkt-[^`\[]+)", readme).group(1)
    assert [e.strip() for e in listed.split("|")] == list(EXPERIMENTS)


def test_help_and_reproduce_refuse_an_unknown_backend_in_one_line(tmp_path):
    from dpol.cli import _app

    runner = typer_testing.CliRunner()
    top = runner.invoke(_app(), ["--help"])
    assert top.exit_code == 0 and "sweep" in top.output
    helped = runner.invoke(_app(), ["sweep", "--help"], env={"COLUMNS": "200"})
    assert helped.exit_code == 0 and "--backend" in helped.output and "report" in helped.output
    result = runner.invoke(_app(), ["reproduce", "jkt-logistic", "--quick", "--backend",
                                    "spark", "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr == ("dpol reproduce: error: backend must be one of 'local', 'ray', "
                             "'dask'; got 'spark'\n")
    assert not any(tmp_path.iterdir())  # refused before any run
