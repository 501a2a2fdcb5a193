"""`dpol run` on K > 2 classes: one-hot rows for a ridge classifier (the mapping said on
the console and in the report, accuracy by argmax beside the majority class, every output
of a binary run), one clear refusal for a learner that fits two classes only."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

pytest.importorskip("typer.testing")

from cli_cases import invoke

from dpol.cli import _app
from dpol.experiments.runs.scores import holdout_split

CLASSES = np.array([1.0, 2.0, 5.0])  # not 0 .. K-1: the mapping must sort and say them


@pytest.fixture(scope="module")
def app():
    return _app()


def three_classes(path, n=400, seed=0, classes=CLASSES):
    """A CSV of 2 features and a label of 3 classes, the class of the largest of three
    linear scores (separable: a good model beats the majority class by far); unequal
    shares, so the majority class is one class."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * 0.4
    scores = np.column_stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1] + 0.15])
    y = classes[np.argmax(scores, axis=1)]
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,label", comments="")
    return path, y


def _table(report: str) -> dict[str, dict[str, str]]:
    """The report's results table: model -> column -> cell (the |---| line is skipped)."""
    lines = [line for line in report.split("## Results")[1].split("## Plots")[0].splitlines()
             if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return {cells[0]: dict(zip(head, cells, strict=True)) for cells in (
        [c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}


def test_run_ridge_classifier_on_three_classes(app, tmp_path):
    data, y = three_classes(tmp_path / "c.csv")
    out = tmp_path / "out"
    result = invoke(app, ["run", "ridge-classifier", data, "--epsilon", "10",
                          "--test-fraction", "0.25", "--out", out])
    assert result.exit_code == 0, result.output
    mapping = "label 1 -> e1, 2 -> e2, 5 -> e3 (one-hot rows of 3 classes)"
    assert f"labels: {mapping}" in " ".join(result.stdout.split())
    report = (out / "report.md").read_text()
    assert mapping in report and "outputs=3" in report
    assert "the class of the largest of the K margins" in report
    rows = _table(report)
    # the majority class of the training rows, recomputed: its share of the stream and of
    # the held-out rows
    train, test = holdout_split(len(y), 0.25)
    top = CLASSES[np.argmax([np.sum(y[train] == c) for c in CLASSES])]
    majority = rows["majority class (trivial)"]
    assert float(majority["accuracy"]) == pytest.approx(np.mean(y[train] == top), abs=5e-4)
    assert float(majority["heldout_accuracy"]) == pytest.approx(np.mean(y[test] == top),
                                                                abs=5e-4)
    # typed by its old name, the learner is reported by its canonical one
    for model in ("ridge_classifier", "ridge_classifier, non-private twin"):
        for score in ("accuracy", "heldout_accuracy"):
            assert float(rows[model][score]) > float(majority[score]) + 0.2, (model, score)
    # every output of a binary run, shaped for K outputs
    assert sorted(p.name for p in out.iterdir()) == [
        "iterates.npy", "loss.png", "losses.csv", "regret.png", "report.md", "run.json"]
    assert np.load(out / "iterates.npy").shape == (len(train) + 1, 3, 3)  # d + 1, K
    with (out / "losses.csv").open() as fh:
        lines = list(csv.reader(fh))
    assert lines[0] == ["t", "loss", "prediction_e1", "prediction_e2", "prediction_e3",
                        "cumulative_regret", "average_regret"]
    assert len(lines) == len(train) + 1 and lines[1][2:5] == ["0", "0", "0"]  # w_1 = 0
    assert json.loads((out / "run.json").read_text())["learner"] == "ridge_classifier"


@pytest.mark.parametrize("flags", [[], ["--chunk-rows", "100"]])
def test_run_refuses_three_classes_for_a_binary_learner(app, tmp_path, flags):
    data, _ = three_classes(tmp_path / "c.csv", n=200, classes=np.array([0.0, 1.0, 2.0]))
    out = tmp_path / "never"
    result = invoke(app, ["run", "igd", data, "--out", out, *flags])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("dpol ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.stderr
    assert "ridge_classifier, ridge_classifier_rff" in errors[0] and "igd" in errors[0]
    assert not out.exists()


@pytest.mark.parametrize(("classes", "flags", "phrase"), [
    ((0.5, 1.0, 2.0), [], "or whole numbers coding K > 2 classes"),  # a real label
    ((0.0, 1.0, 2.0), ["--calibration", "paper"],  # outputs=K was never typed: say why
     "--calibration must be 'tight' for labels of 3 classes")])
def test_run_refuses_what_k_classes_cannot_be(app, tmp_path, classes, flags, phrase):
    data, _ = three_classes(tmp_path / "c.csv", n=200, classes=np.array(classes))
    result = invoke(app, ["run", "ridge-classifier", data, "--out", tmp_path / "never",
                          *flags])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert phrase in result.stderr
