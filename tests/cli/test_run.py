"""`dpol run` on the command line: the files it writes and what they hold, every input
it reads, what it says on the console (clipping, a short horizon, scores beside the
trivial ones, progress), clean refusals, and the flags a resumption reads."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("typer.testing")

from cli_cases import assert_real_png, assert_refused, invoke

from dpol._clip_warning import suggested_range
from dpol.cli import _app
from dpol.learners.intercept import INTERCEPT_SCALING


@pytest.fixture(scope="module")
def app():
    return _app()


def small_table(tmp_path, n=200, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.5
    y = X @ [0.5, -0.3, 0.2] + 0.05 * rng.normal(size=n)
    if classification:
        y = (y > 0).astype(float)
    return X, y


def test_resume_reads_an_old_name_as_the_name_the_checkpoint_holds(monkeypatch):
    import typer

    from dpol.cli.run import _conflicts
    from dpol.experiments.runs import checkpoint, output

    monkeypatch.setattr(output, "find_checkpoint", lambda path: (path / "ckpt", path))
    monkeypatch.setattr(checkpoint, "load_checkpoint", lambda folder: {"args": {
        "learner": "online_frank_wolfe", "counter": "window_tree"}})
    given = ["resume", "learner", "counter"]
    _conflicts({"resume": Path("out"), "learner": "frank-wolfe", "counter": "window"}, given)
    with pytest.raises(typer.Exit):  # another learner still conflicts
        _conflicts({"resume": Path("out"), "learner": "ftal", "counter": "window"}, given)


def test_run_csv_file_writes_iterates_losses_regret_plots_report(app, tmp_path):
    X, y = small_table(tmp_path)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",", header="a,b,c,target", comments="")
    out = tmp_path / "out"
    result = invoke(app, ["run", "pqftl", data, "--epsilon", "2", "--out", out, "--seed", "3",
                          "--counter", "honaker"])
    assert result.exit_code == 0, result.output
    iterates = np.load(out / "iterates.npy")
    assert iterates.shape == (len(y) + 1, 4)  # d = 3 and the intercept's coordinate
    with (out / "losses.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(y) and rows[-1]["t"] == str(len(y))
    col = {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}
    t = np.arange(1, len(y) + 1)
    np.testing.assert_allclose(col["average_regret"], col["cumulative_regret"] / t, rtol=1e-8)
    # each row: PQFTL's loss 1/2 (y - z.w)^2 + alpha/2 ||w||^2 (alpha = 1) of the iterate
    # released before the element, on the element clipped to ||x|| <= 1, |y| <= 1 and
    # lifted with the intercept's constant: z = kappa [x, c], kappa = (1 - 1e-12) /
    # sqrt(1 + c^2) (WithIntercept)
    Xc = X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    yc = np.clip(y, -1.0, 1.0)
    c = INTERCEPT_SCALING
    Z = (1 - 1e-12) / np.sqrt(1 + c**2) * np.c_[Xc, np.full(len(y), c)]
    pred = np.einsum("ij,ij->i", Z, iterates[:-1])
    np.testing.assert_allclose(col["prediction"], pred, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(col["loss"], 0.5 * (yc - pred) ** 2
                               + 0.5 * np.sum(iterates[:-1] ** 2, axis=1), rtol=1e-7)
    report = (out / "report.md").read_text()
    for phrase in ("(2, 1e-05)-DP, replace_one", "Calibration:** tight", "HonakerTreeCounter",
                   "Counter:** honaker", "rows clipped to ||x|| <= 1", "What is private",
                   "non-private twin", "predict 0", "![regret](regret.png)",
                   "![loss](loss.png)", "| noise seed | given (not printed here"):
        assert phrase in report, phrase
    for png in ("regret.png", "loss.png"):
        assert_real_png(out / png)
    assert "average" in result.output or "avg regret" in result.output


def test_run_reads_stdin_npy_and_named_sets(app, tmp_path):
    X, y = small_table(tmp_path, classification=True)
    text = "x1,label,x2,x3\n" + "\n".join(
        f"{a},{int(t)},{b},{c}" for (a, b, c), t in zip(X, y, strict=True))
    out = tmp_path / "stdin"
    result = invoke(app, ["run", "igd", "-", "--target-col", "label", "--out", out,
                          "--no-baseline"], input=text)
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "standard input (label 'label', 3 features)" in report
    assert "label 0 -> -1, 1 -> +1" in report and "non-private twin" not in report
    np.save(tmp_path / "d.npy", np.c_[X, y])
    result = invoke(app, ["run", "pol", tmp_path / "d.npy", "--out", tmp_path / "npy",
                          "-T", "150"])
    assert result.exit_code == 0, result.output
    assert np.load(tmp_path / "npy" / "iterates.npy").shape == (151, 4)  # an intercept
    result = invoke(app, ["run", "pqftl", "synthetic-regression", "-T", "300", "--out",
                          tmp_path / "named", "--option", "alpha=0.5"])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "named" / "report.md").read_text()
    assert "| options | alpha=0.5 |" in report and "synthetic linear regression" in report
    assert_refused(invoke(app, ["run", "ftal", "synthetic-regression", "-T", "50",
                                "--option", "alpha=0.5"]), "options must hold keywords")


def test_run_standardize_says_it_is_outside_the_guarantee(app, tmp_path):
    X, y = small_table(tmp_path)
    data = tmp_path / "raw.csv"
    np.savetxt(data, np.c_[X * 40.0, y * 100.0], delimiter=",")
    clip = invoke(app, ["run", "giga", data, "--out", tmp_path / "clip"])
    assert clip.exit_code == 0, clip.output
    assert f"labels to |y| <= 1 ({int(np.sum(np.abs(y * 100) > 1))} of {len(y)})" in \
        (tmp_path / "clip" / "report.md").read_text()
    std = invoke(app, ["run", "giga", data, "--out", tmp_path / "std", "--normalize",
                       "standardize"])
    assert std.exit_code == 0, std.output
    assert "not covered by the privacy guarantee" in (tmp_path / "std" / "report.md").read_text()


def test_run_parquet(app, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    X, y = small_table(tmp_path)
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}),
                   tmp_path / "d.parquet")
    result = invoke(app, ["run", "incremental_regression", tmp_path / "d.parquet", "--out",
                          tmp_path / "pq"])
    assert result.exit_code == 0, result.output
    assert np.load(tmp_path / "pq" / "iterates.npy").shape == (len(y) + 1, 4)  # intercept


def test_run_paper_calibration_and_no_privacy_are_stated(app, tmp_path):
    X, y = small_table(tmp_path, classification=True)
    data = tmp_path / "c.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",")
    paper = invoke(app, ["run", "pol", data, "--calibration", "paper", "--out", tmp_path / "p"])
    assert paper.exit_code == 0, paper.output
    assert "warning: PaperCalibrationWarning: JKT eq. (37) misses 1/alpha" in paper.stderr
    report = (tmp_path / "p" / "report.md").read_text()
    real = float(report.split("The noise added gives epsilon = ")[1].split()[0])
    assert real > 1.0 and "Calibration:** paper" in report  # JKT-6 in docs/errata.md
    inf = invoke(app, ["run", "pqftl", data, "--epsilon", "inf", "--out", tmp_path / "inf"])
    assert inf.exit_code == 0 and "warning: NonPrivateWarning" in inf.stderr
    assert "Guarantee:** none" in (tmp_path / "inf" / "report.md").read_text()


def test_run_refuses_bad_input_cleanly(app, tmp_path):
    X, y = small_table(tmp_path, n=20)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",")
    assert_refused(invoke(app, ["run", "sgd", data]), "learner must be one of", "pqftl")
    assert_refused(invoke(app, ["run", "pqftl", data, "--epsilon", "-1", "--out", tmp_path]),
                   "epsilon must be > 0")
    assert_refused(invoke(app, ["run", "igd", data, "--counter", "tree"]),
                   "counter must be left unset")
    assert_refused(invoke(app, ["run", "igd", data]), "two distinct labels")
    assert_refused(invoke(app, ["run", "pqftl", tmp_path / "missing.csv"]),
                   "name an existing file")
    assert_refused(invoke(app, ["run", "pqftl", data, "--target-col", "9"]), "--target-col")
    assert_refused(invoke(app, ["run", "pqftl", data, "--option", "1x=2"]), "KEY=VALUE")
    assert_refused(invoke(app, ["run", "igd", "diabetes"]), "classification data set")
    bad = tmp_path / "nan.csv"
    bad.write_text("1,2,3\n4,nan,6\n")
    assert_refused(invoke(app, ["run", "pqftl", bad]), "finite", "row 2")
    assert not (tmp_path / "iterates.npy").exists()  # refused before anything was written


def test_run_fits_an_intercept_by_default_and_takes_random_features(app, tmp_path):
    X, y = small_table(tmp_path, classification=True)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, y], delimiter=",")
    shapes = {}
    for flags, dim in (([], 4), (["--no-intercept"], 3),
                       (["--random-features", "8", "--bandwidth", "0.5"], 9),
                       (["--random-features", "8", "--no-intercept"], 8)):
        out = tmp_path / f"out{len(shapes)}"
        result = invoke(app, ["run", "ridge_classifier", data, "--out", out, *flags])
        assert result.exit_code == 0, result.output
        shapes[" ".join(flags)] = np.load(out / "iterates.npy").shape
        assert shapes[" ".join(flags)] == (len(y) + 1, dim)
        report = (out / "report.md").read_text()
        assert ("with an intercept" in report) == ("--no-intercept" not in flags)
        # the report's command reproduces the run, features included
        assert all(f in report for f in flags)
    assert "on 8 random Fourier features (bandwidth 0.2 x the bound on ||x||)" in report
    # a learner that is not linear in x refuses both, in one line, before reading the data
    for flags, word in ((["--intercept"], "fit_intercept must be False"),
                        (["--random-features", "8"], "--random-features must be None")):
        result = invoke(app, ["run", "kernel", tmp_path / "missing.csv", "--out",
                              tmp_path / "no", *flags])
        assert result.exit_code == 1 and not (tmp_path / "no").exists()
        assert f"{word} for kernel" in result.output
    result = invoke(app, ["run", "ridge", data, "--random-features", "7", "--out",
                          tmp_path / "odd"])
    assert result.exit_code == 1 and "--random-features must be even" in result.output


def _write(path, X, y, header=None):
    np.savetxt(path, np.c_[X, y], delimiter=",", header=header or "", comments="")
    return path


def _warnings(result):
    return [line for line in result.stderr.splitlines() if line.startswith("dpol run: warning")]


def test_run_says_on_the_console_when_many_rows_are_clipped(app, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * 0.2  # ||x|| ~ 0.35: about 1% above a bound of 0.7
    y = 150.0 + 50.0 * rng.normal(size=300)  # every label above |y| <= 1
    data = _write(tmp_path / "big_y.csv", X, y)
    result = invoke(app, ["run", "pqftl", data, "--out", tmp_path / "o", "--bound", "0.7"])
    assert result.exit_code == 0, result.output
    offset, *lines = _warnings(result)  # labels at 150 +- 50: centre them, first
    assert len(lines) == 1, result.stderr
    lo, hi = suggested_range(y)  # labels far from 0: their range, not a bound on |y|
    assert "the labels' mean (147)" in offset
    assert f"declare their range, --y-bound {lo:g},{hi:g}" in offset
    over_x = int(np.sum(np.linalg.norm(X, axis=1) > 0.7))
    assert "300 of 300 rows (100%) were clipped" in lines[0]
    assert f"||x|| > 0.7 in {over_x} rows, |y| > 1 in 300" in lines[0]
    assert "--bound " not in lines[0]  # x is clipped in under 5% of the rows: no suggestion
    assert f"Suggested: --y-bound {lo:g},{hi:g} (at most 2.5% of the raw labels" in lines[0]
    assert np.mean((y < lo) | (y > hi)) <= 0.025
    assert "computed from the raw data" in lines[0] and "not a private release" in lines[0]
    assert "> **Note:** 300 of 300 rows" in (tmp_path / "o" / "report.md").read_text()
    # classification: +-1 labels are never clipped, only x is counted
    labels = (X[:, 0] > 0).astype(float)
    data = _write(tmp_path / "c.csv", X * 50.0, labels)
    result = invoke(app, ["run", "igd", data, "--out", tmp_path / "c"])
    (line,) = _warnings(result)
    assert "||x|| > 1 in " in line and "|y|" not in line and "--bound " in line


def test_run_keeps_a_few_clipped_rows_for_the_report(app, tmp_path):
    X = np.full((100, 2), 0.1)
    X[:5] = 3.0  # 5 of 100 rows: not more than 5%
    data = _write(tmp_path / "few.csv", X, np.zeros(100))
    result = invoke(app, ["run", "pqftl", data, "--out", tmp_path / "o", "--no-baseline"])
    assert result.exit_code == 0 and not _warnings(result), result.stderr
    assert "(5 of 100)" in (tmp_path / "o" / "report.md").read_text()


def test_run_says_when_the_horizon_is_shorter_than_the_data(app, tmp_path):
    X, y = small_table(tmp_path)
    data = _write(tmp_path / "d.csv", X / 4.0, y / 4.0)  # nothing clipped
    result = invoke(app, ["run", "pqftl", data, "-T", "150", "--out", tmp_path / "o"])
    assert result.exit_code == 0, result.output
    assert _warnings(result) == ["dpol run: warning: -T 150: the learner saw the first 150 "
                                 "of the 200 rows; the other 50 were not used."]


def test_run_reports_accuracy_and_the_held_out_score_beside_the_trivial_one(app, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3)) * 0.3
    labels = (X @ [1.0, -1.0, 0.5] > 0.1).astype(float)
    data = _write(tmp_path / "c.csv", X, labels, header="a,b,c,label")
    out = tmp_path / "held"
    result = invoke(app, ["run", "pol", data, "--test-fraction", "0.25", "--epsilon", "50",
                          "--out", out])
    assert result.exit_code == 0, result.output
    for header in ("accuracy", "test acc", "majority class"):
        assert header in result.output, header
    with (out / "report.md").open() as fh:
        report = fh.read()
    assert "100 of the 400 rows" in report and "--test-fraction 0.25" in report
    table = [line for line in report.splitlines() if line.startswith("| ")]
    columns = [c.strip() for c in table[-5].strip("|").split("|")]
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")]
            for r in table[-4:]}
    held = columns.index("heldout_accuracy")
    # the majority class of the training rows, scored on the held-out rows, recomputed here
    from dpol.experiments.runs.scores import holdout_split

    train, test = holdout_split(400, 0.25)
    y = np.where(labels == 1.0, 1.0, -1.0)
    majority = 1.0 if y[train].mean() >= 0 else -1.0
    assert float(rows["majority class (trivial)"][held]) == pytest.approx(
        np.mean(y[test] == majority), abs=5e-4)
    # the final model of pol at epsilon 50 on a separable stream beats the majority class
    assert float(rows["pol"][held]) > float(rows["majority class (trivial)"][held])
    assert rows["predict 0 (trivial)"][held] == "n/a"
    assert len(np.load(out / "iterates.npy")) == 301  # the learner saw the 300 others
    regression = invoke(app, ["run", "giga", _write(tmp_path / "r.csv", X, X @ [0.5, 0.2, 0]),
                              "--test-fraction", "0.2", "--out", tmp_path / "r"])
    assert regression.exit_code == 0, regression.output
    for header in ("test MSE", "test R^2", "mean label (trivial)"):
        assert header in regression.output, header


@pytest.mark.parametrize(("value", "phrase"), [
    ("0", "--test-fraction must be > 0.0"), ("1", "--test-fraction must be < 1.0"),
    ("1.5", "--test-fraction must be < 1.0"), ("nan", "--test-fraction must be finite"),
    ("0.001", "leave at least one of the 20 rows on each side")])
def test_run_refuses_a_bad_test_fraction_cleanly(app, tmp_path, value, phrase):
    X, y = small_table(tmp_path, n=20)
    data = _write(tmp_path / "d.csv", X, y)
    out = tmp_path / "never"
    assert_refused(invoke(app, ["run", "pqftl", data, "--test-fraction", value, "--out", out]),
                   phrase)
    assert not out.exists()


def test_run_progress_counts_rows_not_stages(app, tmp_path):
    X, y = small_table(tmp_path)
    data = _write(tmp_path / "d.csv", X, y)
    result = invoke(app, ["run", "giga", data, "--out", tmp_path / "o"])
    assert result.exit_code == 0, result.output
    assert "200/200 rows" in result.output and "eta" in result.output
    assert "None" not in result.output and "stages" not in result.output


def test_run_on_diabetes_as_a_file_warns_of_the_label_offset_and_the_clipping(app, tmp_path):
    # the defaults clip every label (25..346) to 1; predict 0's average regret is then 0,
    # which a log axis could not draw ("invalid value encountered in scalar subtract").
    # The labels' mean (152) is beyond their spread (77): the centring advice comes first
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = datasets.load_diabetes()
    data = _write(tmp_path / "diabetes.csv", bunch.data, bunch.target)
    result = invoke(app, ["run", "pqftl", data, "--out", tmp_path / "o"])
    assert result.exit_code == 0, result.output
    offset, line = [x for x in result.stderr.splitlines() if x.startswith("dpol ")]
    assert "the labels' mean (152)" in offset and "declare their range, --y-bound " in offset
    assert "442 of 442 rows (100%) were clipped" in line and "--y-bound " in line


def test_ctrl_c_before_any_checkpoint_names_the_option_only_where_it_was_not_given(tmp_path):
    # chunked runs take checkpoints too now: the hint is the same for every run
    from dpol.cli.run import _interrupted

    assert "--checkpoint-every N keeps the progress" in _interrupted(tmp_path)
    assert "--checkpoint-every" not in _interrupted(tmp_path, checkpoints=True)
