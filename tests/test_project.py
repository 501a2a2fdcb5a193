"""The project's own promises: README commands, CI script, lint, CLI."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [b.strip() for b in blocks]


def test_readme_has_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("dpol demo")
    assert "pytest" in commands[1]


def test_ci_runs_exactly_the_readme_test_command():
    ci_lines = [line for line in (ROOT / ".ci/run").read_text().splitlines()
                if line and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert ci_lines == [readme_commands()[1]]


def test_ruff_is_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is part of the test extra and must be installed")
    result = subprocess.run([ruff, "check", "dpol", "tests", "benchmarks"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_module_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "dpol").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 600}
    assert not long


def test_cli_help_demo_counters_and_reproduce(tmp_path):
    from typer.testing import CliRunner

    from dpol.cli import EXPERIMENTS, _app

    runner = CliRunner()
    app = _app()
    assert runner.invoke(app, ["--help"]).exit_code == 0
    for command in ("demo", "reproduce", "counters"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output
    result = runner.invoke(app, ["counters", "-T", "256", "--epsilon", "0.5"])
    assert result.exit_code == 0, result.output
    assert "binary" in result.output and "honaker" in result.output
    assert runner.invoke(app, ["counters", "-T", "0"]).exit_code != 0  # refused by typer
    demo = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert demo.exit_code == 0, demo.output
    assert (tmp_path / "demo" / "jkt_synthetic_regression.md").exists()
    for experiment in EXPERIMENTS:
        if experiment == "jkt-synthetic":
            continue  # the demo ran it
        result = runner.invoke(app, ["reproduce", experiment, "--quick", "--out",
                                     str(tmp_path / experiment)])
        assert result.exit_code == 0, result.output
        assert any(p.suffix == ".png" for p in (tmp_path / experiment).iterdir())
    bad = runner.invoke(app, ["reproduce", "nope"])
    assert bad.exit_code != 0 and "must be one of" in bad.output


def test_benchmark_script_writes_json(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import counters as bench
    finally:
        sys.path.pop(0)
    out = tmp_path / "c.json"
    bench.ADD_STEPS = 50
    rows = bench.main(["--quick", "--out", str(out)])
    assert out.exists() and len(rows) == 2 * 2 * len(bench.COUNTERS)


def test_scale_benchmark_repeats_each_job_and_summarises(tmp_path, capsys):
    # --repeat N runs every job N times (the machine's speed moves between runs) and
    # prints one summary line per job; a count below 1 is refused before any run
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import scale as bench
    finally:
        sys.path.pop(0)
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--jobs", "igd", "--repeat", "0"])
    assert "--repeat must be at least 1, got 0" in capsys.readouterr().err
    out = tmp_path / "s.json"
    rows = bench.main(["--quick", "--jobs", "igd", "--repeat", "2", "--out", str(out)])
    assert out.exists() and [r["job"] for r in rows] == ["igd", "igd"]
    assert "igd - pcg64 eps=1: 2 runs, median" in capsys.readouterr().out
