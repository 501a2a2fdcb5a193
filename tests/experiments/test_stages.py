"""The stages of `dpol run`, each run alone: read, bounds and scaling, learner, scores,
outputs; chained by hand they are the run, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs import stages
from dpol.experiments.runs.pipeline import run_learner, run_request
from dpol.experiments.runs.stages import (
    bound_rows,
    fit_learners,
    publish,
    read_rows,
    score_run,
)


def _csv(path, n=300, classes=None, seed=0):
    """Rows of norm about 0.5 to 2 (some beyond ||x|| <= 1), a label column last."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 0.6
    y = X @ [0.5, -0.3, 0.2]
    if classes is not None:
        y = np.arange(n) % classes
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    return str(path)


def test_read_codes_k_classes_and_holds_out_a_fixed_split_in_stream_order(tmp_path):
    data = _csv(tmp_path / "k.csv", classes=3)
    rows = read_rows(run_request("ridge-classifier", data, tmp_path / "o", test_fraction=0.2,
                                 horizon=100))
    assert rows.options == {"outputs": 3} and rows.y.shape == (300, 3)  # one-hot rows
    assert len(rows.test) == 60 and rows.available == 240 and rows.horizon == 100
    assert len(rows.train) == 100 and np.all(np.diff(rows.train) > 0)  # the first, in order
    assert not set(rows.train) & set(rows.test)
    again = read_rows(run_request("ridge-classifier", data, tmp_path / "p",
                                  test_fraction=0.2, seed=9))  # the split ignores the seed
    np.testing.assert_array_equal(again.test, rows.test)
    assert not (tmp_path / "o").exists()  # reading writes nothing


def test_bounds_clip_the_training_rows_and_keep_the_held_out_ones_raw(tmp_path):
    data = _csv(tmp_path / "r.csv")
    request = run_request("ridge", data, tmp_path / "o", test_fraction=0.2)
    rows = read_rows(request)
    bounded = bound_rows(request, rows)
    norms = np.linalg.norm(bounded.stream.X, axis=1)
    raw = np.linalg.norm(rows.X[rows.train], axis=1)
    assert bounded.clip.clipped == np.count_nonzero((raw > 1.0) | (
        np.abs(rows.y[rows.train]) > 1.0)) > 0
    assert norms.max() <= 1.0 + 1e-12  # clipped to the bound, up to a few ulps of rounding
    np.testing.assert_array_equal(bounded.X, rows.X)  # nothing scaled, held-out rows raw
    assert (bounded.epsilon, bounded.estimate) == (1.0, None)  # no share spent


def test_a_resumed_estimate_is_read_back_never_released_again(tmp_path, monkeypatch):
    data = _csv(tmp_path / "r.csv")
    request = run_request("ridge", data, tmp_path / "o", x_bound="auto", epsilon=2.0)
    rows = read_rows(request)
    first = bound_rows(request, rows)  # releases the bound on 0.1 x 2.0
    assert first.epsilon == pytest.approx(1.8) and first.x_bound == first.estimate.x_bound

    def released(*args, **kwargs):
        raise AssertionError("a second release of the bound")

    monkeypatch.setattr(stages, "private_bounds", released)
    again = bound_rows(request, rows, first.estimate)
    assert again.estimate is first.estimate and again.x_bound == first.x_bound
    np.testing.assert_array_equal(again.stream.X, first.stream.X)


def test_the_learner_stage_alone_reports_progress_and_refuses_other_rows(tmp_path):
    data = _csv(tmp_path / "r.csv")
    request = run_request("ridge", data, tmp_path / "o", seed=1, baseline=False)
    rows = read_rows(request)
    bounded = bound_rows(request, rows)
    ticks = []
    fits = fit_learners(request, rows, bounded, progress=lambda *a: ticks.append(a))
    assert [label for label, _, _ in fits.learners] == ["ridge"]  # no twin asked
    assert ticks[-1] == (300, 300, "ridge") and fits.trace.weights.shape == (300, 4)
    assert fits.state["done"] == {"private": 300}
    other = {**fits.state, "fingerprint": "another table"}
    with pytest.raises(InvalidInputError, match=r"^resume must find the rows"):
        fit_learners(request, rows, bounded, resumed=other)


def test_scores_put_the_learners_before_the_trivial_baselines(tmp_path):
    data = _csv(tmp_path / "b.csv", classes=2)
    request = run_request("ridge-classifier", data, tmp_path / "o", seed=2, test_fraction=0.25)
    rows = read_rows(request)
    bounded = bound_rows(request, rows)
    scored = score_run(request, rows, bounded, fit_learners(request, rows, bounded))
    assert [r["model"] for r in scored.rows] == [
        "ridge_classifier", "ridge_classifier, non-private twin", "predict 0 (trivial)",
        "majority class (trivial)"]
    assert all(set(r) == set(scored.rows[0]) for r in scored.rows)  # one set of columns
    y = bounded.stream.y  # labels +-1 of the 225 training rows
    assert scored.rows[-1]["accuracy"] == max(np.mean(y == 1.0), np.mean(y == -1.0))
    assert scored.notes[-1].startswith("the noise is seeded") and scored.guarantee.seeded
    assert not (tmp_path / "o").exists()  # scoring writes nothing


def test_the_stages_chained_by_hand_are_the_run(tmp_path):
    data = _csv(tmp_path / "r.csv")
    whole = run_learner("ridge", data, tmp_path / "whole", seed=3, test_fraction=0.2)
    request = run_request("ridge", data, tmp_path / "staged", seed=3, test_fraction=0.2)
    rows = read_rows(request)
    bounded = bound_rows(request, rows)
    fits = fit_learners(request, rows, bounded)
    staged = publish(request, rows, bounded, fits, score_run(request, rows, bounded, fits))
    np.testing.assert_array_equal(np.load(tmp_path / "staged" / "iterates.npy"),
                                  np.load(tmp_path / "whole" / "iterates.npy"))
    assert (tmp_path / "staged" / "losses.csv").read_text() == (
        tmp_path / "whole" / "losses.csv").read_text()
    assert staged.rows == whole.rows and staged.notes == whole.notes
