"""`dpol run --bound auto / --y-bound auto`: the split of epsilon, the composed guarantee
on the console and in the report, and clean refusals."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("typer.testing")
pytest.importorskip("opendp")

from cli_cases import invoke

from dpol.cli import _app


@pytest.fixture(scope="module")
def app():
    return _app()


def table(tmp_path, n=8000):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = X @ [0.5, -0.3, 0.2] + 0.1 * rng.normal(size=n)
    path = tmp_path / "data.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    return path


def test_auto_bounds_split_epsilon_and_compose_into_the_guarantee(app, tmp_path):
    out = tmp_path / "o"
    result = invoke(app, ["run", "pqftl", table(tmp_path), "--bound", "auto", "--y-bound",
                          "auto", "--bounds-budget", "0.2", "--epsilon", "2", "--out", out,
                          "--no-baseline"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "estimated privately" in text and "epsilon = 0.4, pure DP" in text
    assert "learner epsilon = 1.6" in text
    # 8,000 rows >= 2 ln(181 / 0.05) / (0.2 * 0.05) = 1640: no unreliability warning
    assert "unreliable" not in result.stderr
    assert "guarantee: (2, 1e-05)-DP, replace_one" in text
    report = (out / "report.md").read_text()
    assert "* **Bounds and budget:** bounds ||x|| <= " in report
    assert "* **Guarantee:** (2, 1e-05)-DP" in report and "exactly the requested" in report
    x_bound = float(report.split("||x|| <= ")[1].split(",")[0])
    norms = np.linalg.norm(np.loadtxt(tmp_path / "data.csv", delimiter=",")[:, :3], axis=1)
    # a candidate of the grid near the 0.95 quantile of the norms (a wide, sure bracket:
    # the exponential mechanism's rank error at epsilon 0.2 is about 100 of 8000 rows)
    assert np.quantile(norms, 0.8) < x_bound < 1.5 * np.quantile(norms, 0.99)


def test_small_data_is_warned_on_the_console(app, tmp_path):
    result = invoke(app, ["run", "pqftl", table(tmp_path, n=300), "--y-bound", "auto",
                          "--out", tmp_path / "o", "--no-baseline"])
    assert result.exit_code == 0, result.output
    assert "warning: the private bounds are unreliable at this size: 300 rows" in result.stderr


@pytest.mark.parametrize(("args", "phrase"), [
    (["--bound", "auto", "--bounds-budget", "1"], "--bounds-budget must"),
    (["--bound", "auto", "--bounds-budget", "0"], "--bounds-budget must"),
    (["--bound", "auto", "--epsilon", "inf"], "--epsilon must be finite for a bound 'auto'"),
    (["--bound", "auto", "--normalize", "standardize"], "--normalize must be 'clip'"),
    (["--bound", "big"], "--bound must be a number > 0 or 'auto'"),
    (["--y-bound", "-2"], "--y-bound must"),
])
def test_bad_auto_options_are_refused_in_one_line(app, tmp_path, args, phrase):
    out = tmp_path / "o"
    result = invoke(app, ["run", "pqftl", table(tmp_path, n=50), "--out", out, *args])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("dpol ")]
    assert len(lines) == 1 and "error:" in lines[0] and phrase in lines[0], result.stderr
    assert "Traceback" not in result.output and not out.exists()


def test_classifier_refuses_auto_label_bound(app, tmp_path):
    result = invoke(app, ["run", "igd", "breast-cancer", "--y-bound", "auto", "--out",
                          tmp_path / "o"])
    assert result.exit_code == 1 and "--y-bound must be left unset" in result.stderr


def test_private_normalization_scales_inside_the_guarantee(app, tmp_path):
    rng = np.random.default_rng(1)
    n = 30_000
    X = rng.normal([1000.0, 0.0, -5.0], [300.0, 0.001, 2.0], size=(n, 3))
    z = (X - [1000.0, 0.0, -5.0]) / [300.0, 0.001, 2.0]
    y = 50.0 + 10.0 * (z @ [0.5, -0.3, 0.2]) + rng.normal(size=n)
    path = tmp_path / "raw.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "o"
    result = invoke(app, ["run", "ridge", path, "--normalize", "private", "--bounds-budget",
                          "0.3", "--epsilon", "3", "--out", out, "--no-baseline",
                          "--test-fraction", "0.2"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "features scaled privately" in text and "10 releases" in text
    assert "learner epsilon = 2.1" in text and "guarantee: (3, 1e-05)-DP" in text
    # 24,000 rows >= min_rows = 2 ln(363 / 0.05) * (6 * 10 + 20 + 2 * 10 + 20) / 0.9 = 2371
    assert "unreliable" not in result.stderr
    report = (out / "report.md").read_text()
    assert "* **Bounds and budget:** features scaled privately" in report
    # held-out R^2 in the scaled units: noise-free R^2 is 1 - 1 / (1 + 100 * 0.38) = 0.97;
    # the trivial mean scores about 0, so a model that learned scores well above it
    row = next(line for line in report.splitlines() if line.startswith("| ridge | ("))
    r2 = float(row.strip(" |").split(" | ")[-1])
    assert r2 > 0.5


@pytest.mark.parametrize("args, name", [
    (["--normalize", "private", "--bound", "2"], "--bound"),
    (["--normalize", "private", "--epsilon", "inf"], "epsilon"),
    (["--normalize", "standardize", "--bound", "auto"], "normalize"),
])
def test_private_normalization_refusals_write_nothing(app, tmp_path, args, name):
    out = tmp_path / "o"
    result = invoke(app, ["run", "ridge", table(tmp_path, n=50), *args, "--out", out])
    assert result.exit_code != 0 and name in result.output
    assert not out.exists()
