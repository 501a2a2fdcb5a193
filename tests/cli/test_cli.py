"""The dpol command: --help everywhere, and every subcommand on a small input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

typer_testing = pytest.importorskip("typer.testing")

from dpol.cli import _app  # noqa: E402
from dpol.counters import BinaryTreeCounter  # noqa: E402
from dpol.experiments.counter_errors import COUNTER_VARIANTS  # noqa: E402
from dpol.experiments.reproductions.reproduce import EXPERIMENTS  # noqa: E402
from dpol.learners.intercept import INTERCEPT_SCALING  # noqa: E402

COMMANDS = ("demo", "run", "reproduce", "account", "audit", "counters")


@pytest.fixture(scope="module")
def app():
    return _app()


def invoke(app, args, **kw):
    return typer_testing.CliRunner().invoke(app, [str(a) for a in args], **kw)


def assert_real_png(path):
    """A PNG that is an actual picture: the signature, a sane size, many colours."""
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 300
    assert len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20


def assert_refused(result, *phrases):
    """A clean refusal: non-zero exit, one error line naming the problem, no traceback."""
    assert result.exit_code == 1, result.output
    text = result.stderr if hasattr(result, "stderr") else result.output
    lines = [line for line in text.splitlines() if line.startswith("dpol ")]
    assert len(lines) == 1 and "error:" in lines[0], text
    assert all(p in lines[0] for p in phrases), lines[0]
    assert "Traceback" not in result.output and result.exception is not None


def small_table(tmp_path, n=200, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.5
    y = X @ [0.5, -0.3, 0.2] + 0.05 * rng.normal(size=n)
    if classification:
        y = (y > 0).astype(float)
    return X, y


def test_help_of_the_command_and_every_subcommand(app):
    top = invoke(app, ["--help"])
    assert top.exit_code == 0
    for command in COMMANDS:
        assert command in top.output
        result = invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output, command
    assert "incremental_regression" in invoke(app, ["run", "--help"]).output


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


def test_account_counter_and_learner(app):
    result = invoke(app, ["account", "--counter", "tree", "-T", "1024", "--dim", "2",
                          "--json"])
    assert result.exit_code == 0, result.output
    tight, paper = json.loads(result.output)
    built = BinaryTreeCounter(1024, 2, epsilon=1.0, delta=1e-5)
    assert tight["noise_scale"] == pytest.approx(built.noise_scale)
    assert tight["real_epsilon"] == pytest.approx(1.0)
    assert paper["calibration"] == "paper" and paper["real_epsilon"] < 1.0  # JKT over-noises
    honaker = json.loads(invoke(app, ["account", "--counter", "honaker", "-T", "64",
                                      "--json"]).output)
    assert honaker[1]["real_epsilon"] is None and "no published" in honaker[1]["note"]
    laplace = invoke(app, ["account", "--mechanism", "laplace", "--delta", "0", "-T", "64"])
    assert laplace.exit_code == 0 and "ENV Theorem 2.3" in " ".join(laplace.output.split())
    pol = json.loads(invoke(app, ["account", "--learner", "pol", "-T", "1000", "--dim", "5",
                                  "--json"]).output)
    assert pol[1]["real_epsilon"] > 1.0 and "misses 1/alpha" in pol[1]["note"]
    table = invoke(app, ["account", "--counter", "window", "--window", "8", "-T", "256"])
    assert table.exit_code == 0 and "real epsilon" in table.output
    assert_refused(invoke(app, ["account", "--counter", "nope"]), "counter must be one of")
    assert_refused(invoke(app, ["account", "--epsilon", "0"]), "epsilon must be > 0")


def test_audit_passes_the_real_counter_and_flags_a_half_noise_twin(app):
    # tree at T = 8, (1, 1e-5): with 1e5 runs per stream the audit of the real counter
    # gives ~0.4-0.6 and the half-noise twin (true epsilon ~2.2) ~1.2 (dpol.evaluation.audit
    # tests derive both); exit code 3 marks the violation
    real = invoke(app, ["audit", "--counter", "tree", "--runs", "100000"])
    assert real.exit_code == 0 and "PASSED" in real.output, real.output
    twin = invoke(app, ["audit", "--counter", "tree", "--runs", "100000",
                        "--noise-factor", "0.5"])
    assert twin.exit_code == 3 and "VIOLATION" in twin.output, twin.output
    learner = invoke(app, ["audit", "--learner", "pqftl", "--runs", "200", "--dim", "2"])
    assert learner.exit_code == 0 and "PrivateQuadraticFTL" in learner.output
    assert_refused(invoke(app, ["audit"]), "counter / learner must be given exactly one")
    assert_refused(invoke(app, ["audit", "--learner", "pqftl", "--noise-factor", "0.5"]),
                   "noise_factor must be 1 for a learner")


def test_counters_table_and_error_plot(app, tmp_path):
    result = invoke(app, ["counters", "-T", "128", "--plot", tmp_path / "err.png"])
    assert result.exit_code == 0, result.output
    for label in COUNTER_VARIANTS:
        assert label in result.output
    assert_real_png(tmp_path / "err.png")
    assert invoke(app, ["counters", "-T", "0"]).exit_code != 0


def test_counters_beyond_the_dense_horizon_and_over_epochs(app):
    # the dense counter stops at T = 2048: the table says so instead of failing (it did)
    result = invoke(app, ["counters", "-T", "4096"])
    assert result.exit_code == 0, result.output
    assert "dense_mean: skipped: horizon must be at most 2048" in " ".join(result.output.split())
    epochs = invoke(app, ["counters", "-T", "256", "--epochs", "4"])
    text = " ".join(epochs.output.split())
    assert epochs.exit_code == 0, epochs.output
    assert "a record in 4 epochs of 64" in text and "window_tree-64: skipped" in text
    assert_refused(invoke(app, ["counters", "-T", "8", "--epochs", "9"]),
                   "--epochs must be at most --horizon (8); got 9")


def test_reproduce_small_and_refused(app, tmp_path):
    result = invoke(app, ["reproduce", "jkt-logistic", "--quick", "--seeds", "1", "--out",
                          tmp_path])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "jkt_logistic.md").exists()
    assert_real_png(tmp_path / "jkt_logistic_accuracy.png")
    bad = invoke(app, ["reproduce", "nope"])
    assert bad.exit_code != 0 and "must be one of" in bad.output
    assert set(EXPERIMENTS) >= {"jkt-synthetic", "wdp-regret"}


def test_reproduce_function_refuses_an_unknown_name_before_any_work(tmp_path):
    # the Python function, not only the command, checks the name: an unknown one used to
    # fall through to the last branch and run wdp-regret for minutes
    from dpol.errors import InvalidInputError
    from dpol.experiments.reproductions.reproduce import reproduce

    with pytest.raises(InvalidInputError, match=r"^experiment must be one of .*; got "
                                                r"'no-such-experiment'"):
        reproduce("no-such-experiment", tmp_path, quick=True, seeds=1, data=None, workers=1)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("seeds", [0, -1, 1.5])
def test_reproduce_function_refuses_a_bad_seed_count_before_any_work(tmp_path, seeds):
    # seeds=0 used to run wdp-regret on no seed and fail in the plot's log scale, and the
    # KNJ branch read it as "default" (seeds or 3)
    from dpol.errors import InvalidInputError
    from dpol.experiments.reproductions.reproduce import reproduce

    for name in ("wdp-regret", "knj-incremental"):
        with pytest.raises(InvalidInputError, match=r"^seeds must "):
            reproduce(name, tmp_path, quick=True, seeds=seeds, data=None, workers=1)
    assert not any(tmp_path.iterdir())


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
    assert "the labels' mean (147)" in offset and "subtract 150 from the label column" in offset
    over_x = int(np.sum(np.linalg.norm(X, axis=1) > 0.7))
    suggested = float(lines[0].split("--y-bound ")[1].split()[0])
    assert "300 of 300 rows (100%) were clipped" in lines[0]
    assert f"||x|| > 0.7 in {over_x} rows, |y| > 1 in 300" in lines[0]
    assert "--bound " not in lines[0]  # x is clipped in under 5% of the rows: no suggestion
    assert np.mean(np.abs(y) > suggested) <= 0.05 < np.mean(np.abs(y) > 0.9 * suggested)
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


def test_tables_fit_an_80_column_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    narrow = _app()  # rich reads COLUMNS when the console is made
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) * 0.3
    data = _write(tmp_path / "c.csv", X, (X[:, 0] > 0).astype(float))
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


def test_warnings_of_other_libraries_say_where_they_came_from():
    import warnings

    from dpol.cli.text import origin
    from dpol.errors import NonPrivateWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.float64(0.0) / np.float64(0.0)
        warnings.warn("no noise", NonPrivateWarning, stacklevel=1)
    numpy_warning, ours = caught
    assert origin(numpy_warning) == f" (from {__file__}:{numpy_warning.lineno})"
    assert origin(ours) == ""  # dpol's own warnings name their cause in their text
    matplotlib = warnings.WarningMessage(
        "invalid value encountered in scalar subtract", RuntimeWarning,
        "/venv/lib/python3.11/site-packages/matplotlib/transforms.py", 355)
    assert origin(matplotlib) == " (from matplotlib/transforms.py:355)"


def test_run_on_diabetes_as_a_file_warns_of_the_label_offset_and_the_clipping(app,
                                                                              tmp_path):
    # the defaults clip every label (25..346) to 1; predict 0's average regret is then 0,
    # which a log axis could not draw ("invalid value encountered in scalar subtract").
    # The labels' mean (152) is beyond their spread (77): the centring advice comes first
    datasets = pytest.importorskip("sklearn.datasets")
    bunch = datasets.load_diabetes()
    data = _write(tmp_path / "diabetes.csv", bunch.data, bunch.target)
    result = invoke(app, ["run", "pqftl", data, "--out", tmp_path / "o"])
    assert result.exit_code == 0, result.output
    offset, line = [x for x in result.stderr.splitlines() if x.startswith("dpol ")]
    assert "the labels' mean (152)" in offset and "subtract 150" in offset
    assert "442 of 442 rows (100%) were clipped" in line and "--y-bound " in line


def test_readme_lists_every_experiment_of_reproduce():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    listed = re.search(r"`dpol reproduce (jkt-[^`\[]+)", readme).group(1)
    assert [e.strip() for e in listed.split("|")] == list(EXPERIMENTS)


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
