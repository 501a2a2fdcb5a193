"""`dpol run --fallback`: the trivial fallback inside the run's guarantee, said on the
console and in the report, held whole by checkpoints (a resumed run gives the same
outputs), refused for regression before any data is read."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from fallback_cases import inner, weak_signal_runs

from dpol.errors import InvalidInputError
from dpol.experiments.runs import stages
from dpol.experiments.runs.checkpoint import load_checkpoint
from dpol.experiments.runs.fallback import fallback_rows
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import resume_run, run_learner, run_request
from dpol.experiments.runs.stages import bound_rows, fit_learners, read_rows, score_run
from dpol.learners.trivial_fallback import WithTrivialFallback

#: epsilon 0.3, seed 2 and the tree counter (no BLT to optimise for T = 2,500: 1.7 s) on
#: ``_data``: the learner learns from row 512 (``learner_start``), the prior predicts
#: after the release at row 1,023 and the model after a later one (measured once): a
#: resume from the checkpoint at row 1,024 must carry the open block and reach that switch
ARGS = dict(epsilon=0.3, seed=2, baseline=False, fallback=True, counter="tree")


def _data(path: Path, n: int = 2500) -> str:
    """Two classes split by a plane, 26% of one class (so the prior is not a coin flip
    on the longer streams); 2,500 rows: slices of 1,024 rows
    (``runs.checkpoint.CHUNK_ROWS``), so checkpoint_every=500 saves after each."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)) / 3
    np.save(path, np.column_stack([X, (X[:, 0] + X[:, 1] > 0.3).astype(float)]))
    return str(path)


@pytest.fixture(autouse=True)
def _empty_plots(monkeypatch):
    """Empty plot files: the plots are not what these tests read (test_plots.py and
    tests/cli/test_run.py test them), and drawing them is most of a small run's time."""
    def empty(folder, *args, **kwargs):
        paths = [folder / "regret.png", folder / "loss.png"]
        for path in paths:
            path.write_bytes(b"")
        return paths

    monkeypatch.setattr(stages, "write_plots", empty)


class Stop(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback."""


def test_a_resumed_fallback_run_gives_the_outputs_of_an_uninterrupted_one(tmp_path):
    data = _data(tmp_path / "d.npy")
    request = run_request("ridge-classifier", data, tmp_path / "whole", **ARGS)
    rows = read_rows(request)  # uninterrupted, by the stages: no plots to draw
    bounded = bound_rows(request, rows)
    fits = fit_learners(request, rows, bounded)
    whole = score_run(request, rows, bounded, fits).rows
    assert fits.model.uses_model and whole[0]["predicts"].startswith("the model")

    def stop(done, total, which):
        if done >= 1024:
            raise Stop

    out = tmp_path / "out"
    with pytest.raises(Stop):
        run_learner("ridge-classifier", data, out, checkpoint_every=500, progress=stop,
                    **ARGS)
    saved = load_checkpoint(checkpoint_folder(out))["models"]["private"]
    assert isinstance(saved, WithTrivialFallback) and saved.t == 1024
    assert not saved.uses_model and saved._block_start == 1023  # mid-block, gate closed
    # blocks of 1, 2, ..., 512 rows; the gate's nan (its skipped blocks) equal as nan
    np.testing.assert_equal(saved.releases_, fits.model.releases_[:10])
    result = resume_run(out)
    np.testing.assert_array_equal(np.load(out / "iterates.npy"), np.concatenate(
        [fits.trace.weights, fits.trace.final_weights[None]]))
    assert result.rows == whole  # the gated online accuracy, the choice, the split


def test_the_guarantee_and_the_report_include_the_fallback(tmp_path):
    data = _data(tmp_path / "d.npy", n=300)
    result = run_learner("ridge-classifier", data, tmp_path / "out", epsilon=1.0, seed=0,
                         fallback=True, test_fraction=0.2, counter="tree")
    row = result.rows[0]
    assert row["guarantee"].startswith("(1, 1e-05)-DP")  # the target, all three inside
    # 240 training rows are short at epsilon 1 (fallback_plan): the prior takes 50%
    assert row["fallback_split"] == (
        "trivial fallback: class prior and gate, Gaussian, 50% + 10% of the budget (of "
        "mu^2; noise multipliers 5.276 and 11.8); learner epsilon = 0.6057; composed exactly; "
        "the learner learns from row 32, rows 1-31 feed the class prior alone on the whole "
        "budget")  # learner_start: a quarter of 240 rows, cut to a block end (31)
    # either choice is possible at this size (240 training rows): the row says which
    assert row["predicts"].split(" (")[0] in ("the model", "the class prior")
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"* **Trivial fallback:** {row['fallback_split']}" in report
    assert f"predicts with {row['predicts']}" in report


def test_the_predicts_line_names_the_rule_that_chose():
    # the same releases read by two thresholds (the gate's d lies half a std below 0):
    # 0 lets the model in, 1 keeps the prior; each line names its own rule
    assert [fallback_rows(m)["predicts"] for m in weak_signal_runs()] == [
        "the model (its prequential errors privately below the class prior's)",
        "the class prior (the model's prequential errors were not privately below the "
        "class prior's by 1 public std of the gate)"]
    # gates that never open, a prior noisy enough to be a coin flip on a balanced
    # stream: where the model predicts, the line says it is the coin-flip rule, not the
    # gate (the line before said "its prequential errors privately below" either way)
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(300, 3)) / 3, np.where(rng.random(300) < 0.5, -1.0, 1.0)
    coin = "the model (the class prior's margin lies within 1 public std of the class boundary; "
    seen = set()
    for seed, threshold in itertools.product(range(6), (1e300, np.inf)):
        m = WithTrivialFallback(inner(), prior_multiplier=5.0, gate_multiplier=1.0,
                                threshold=threshold, seed=seed)
        m.run(X, y)
        line = fallback_rows(m)["predicts"]
        seen.add(m.uses_model)
        if m.uses_model:
            assert line == coin + ("the gate never opens)" if threshold == np.inf else
                                   "its prequential errors were not privately below the "
                                   "class prior's by 1e+300 public std of the gate)")
        else:
            assert line.startswith("the class prior alone (" if threshold == np.inf else
                                   "the class prior (the model's"), line
    assert seen == {True, False}


@pytest.mark.parametrize(("learner", "extra", "rule"), [
    ("ridge", {}, "fallback must be off for a regression learner"),
    ("ridge-classifier", {"chunk_rows": 100}, "fallback must be off for a chunked run"),
    ("ridge-classifier", {"options": {"neighbouring": "add_remove"}},
     "fallback must be off for add/remove streams"),
])
def test_fallback_refusals_read_no_data(tmp_path, learner, extra, rule):
    with pytest.raises(InvalidInputError, match=rule):
        run_learner(learner, tmp_path / "absent.npy", tmp_path / "out", fallback=True,
                    **extra)
    assert not (tmp_path / "out").exists()


def test_the_console_says_the_budget_share_and_which_model_predicts(tmp_path):
    typer_testing = pytest.importorskip("typer.testing")
    from dpol.cli import _app

    data, app = _data(tmp_path / "d.npy", n=200), _app()
    result = typer_testing.CliRunner().invoke(app, [
        "run", "ridge-classifier", data, "--epsilon", "0.1", "--fallback", "--out",
        str(tmp_path / "out"), "--no-baseline", "--seed", "0"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    # 200 rows at epsilon 0.1 are too short for the gate (fallback_plan): the prior takes
    # 90% and predicts alone; the line says so, as the result row does
    assert "privacy: trivial fallback: class prior and gate, Gaussian, 90% + 5%" in text
    assert "predicts: the class prior alone (the stream is too short" in text
    assert "--fallback" in (tmp_path / "out" / "report.md").read_text()  # the command
    refused = typer_testing.CliRunner().invoke(app, [
        "run", "ridge", data, "--fallback", "--out", str(tmp_path / "reg")])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert "--fallback must be off for a regression learner (ridge)" in " ".join(
        refused.stderr.split())
