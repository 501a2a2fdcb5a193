"""`dpol run` works for every learner it offers (``LEARNERS``), on the whole file, in
chunks and with a held-out split: none may crash where another runs (issue 19: `dpol run
kernel` crashed on its predict-0 baseline, sized for its random features)."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.adapters.registry import LEARNERS, make_learner
from dpol.counters import COUNTER_NAMES
from dpol.experiments.runs.pipeline import run_learner
from dpol.experiments.runs.report import final_model_text


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("every")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3)) / 3
    target = X @ [0.5, -0.3, 0.2]
    out = {}
    for task, y in (("regression", target), ("classification", (target > 0) * 1.0)):
        out[task] = root / f"{task}.npy"
        np.save(out[task], np.column_stack([X, y]))
    return out


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("how", [{}, {"chunk_rows": 100}, {"test_fraction": 0.25}],
                         ids=["whole", "chunked", "held-out"])
def test_every_learner_runs(tmp_path, files, name, how):
    result = run_learner(name, str(files[LEARNERS[name].task]), tmp_path / "out", seed=1,
                         **how)
    names = [row["model"] for row in result.rows]
    assert names[:2] == [name, f"{name}, non-private twin"]
    assert "predict 0 (trivial)" in names
    assert all(np.isfinite(row["mean_loss"]) for row in result.rows[:3])
    report = " ".join((tmp_path / "out" / "report.md").read_text().split())
    # POL releases its model after the last row only: its online scores are predict 0's,
    # which the console says; every other learner predicts during the stream
    silent = [n for n in result.notes if "predicted 0 for every row" in n]
    assert len(silent) == (name == "pol")
    # it points to --test-fraction only where that helps: not with a split already, nor
    # in chunks (which refuse one)
    assert all(("--test-fraction" in n) == (how == {}) for n in silent)
    if "test_fraction" in how:  # the report names the final model the learner keeps
        model = make_learner(name, 3, horizon=8, epsilon=1.0,
                             fit_intercept=LEARNERS[name].linear)
        assert f"after the stream: {final_model_text(model)};" in report


@pytest.mark.parametrize("counter", COUNTER_NAMES)
@pytest.mark.parametrize("name", [n for n, spec in LEARNERS.items() if spec.counter])
def test_every_counter_runs_in_every_learner_that_takes_one(name, counter):
    # `--counter` offers every name of COUNTER_NAMES: "window" crashed (no default W)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 3)) / 3
    y = X @ [0.5, -0.3, 0.2]
    model = make_learner(name, 3, horizon=64, epsilon=1.0, seed=0, counter=counter)
    trace = model.run(X, np.sign(y) if LEARNERS[name].task == "classification" else y)
    assert np.all(np.isfinite(trace.weights)) and model.privacy.epsilon == pytest.approx(1.0)
