"""`dpol run --y-bound lo,hi`: a declared label range is a public shift, y - (lo + hi) / 2
within (hi - lo) / 2, on every path (in memory, chunked); bad ranges are refused before
any row is read; labels far from 0 are told a range, not a bound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpol._clip_warning import suggested_range
from dpol.errors import InvalidInputError
from dpol.experiments.runs.pipeline import run_learner


def _table(n=2000, seed=0, centre=50.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3
    y = centre + 40.0 * X[:, 0] - 20.0 * X[:, 1] + 3.0 * rng.normal(size=n)
    return np.column_stack([X, y])


def test_a_range_releases_what_the_bound_releases_on_the_shifted_labels(tmp_path):
    # (20, 80) is y - 50 within 30: the learner, its noise and its guarantee are those of
    # y_bound=30 on the labels minus 50, bit for bit (a public shift); the report and
    # run.json say the shift, and the trivial row predicts the range's centre
    table = _table()
    shifted = table.copy()
    shifted[:, -1] -= 50.0
    np.save(tmp_path / "raw.npy", table)
    np.save(tmp_path / "shifted.npy", shifted)
    ranged = run_learner("ridge", str(tmp_path / "raw.npy"), tmp_path / "r", seed=3,
                         y_bound="20,80", test_fraction=0.2)
    bound = run_learner("ridge", str(tmp_path / "shifted.npy"), tmp_path / "b", seed=3,
                        y_bound=30.0, test_fraction=0.2)
    np.testing.assert_array_equal(np.load(tmp_path / "r" / "iterates.npy"),
                                  np.load(tmp_path / "b" / "iterates.npy"))
    for key in ("guarantee", "mean_loss", "heldout_mse", "heldout_r2"):
        assert ranged.rows[0][key] == bound.rows[0][key], key
    assert ranged.rows[2]["model"] == "predict 50 (trivial)"
    report = (tmp_path / "r" / "report.md").read_text()
    assert "y in [20, 80] (the learner fits y - 50 within |y - 50| <= 30" in report
    assert "labels y - 50 (the declared range [20, 80])" in report
    assert json.loads((tmp_path / "r" / "run.json").read_text())["label_shift"] == 50.0


def test_a_chunked_run_shifts_its_labels_as_the_whole_file_run(tmp_path):
    np.save(tmp_path / "d.npy", _table())
    run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "whole", seed=4, y_bound=(20, 80))
    part = run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "part", seed=4,
                       y_bound="20,80", chunk_rows=333)
    np.testing.assert_array_equal(np.load(tmp_path / "part" / "iterates.npy"),
                                  np.load(tmp_path / "whole" / "iterates.npy"))
    assert "labels y - 50 (the declared range [20, 80])" in (
        tmp_path / "part" / "report.md").read_text()
    assert part.rows[-1]["model"] == "predict 50 (trivial)"


def test_a_range_beats_the_bound_on_labels_far_from_0(tmp_path):
    # labels 50 +- 15 declared as |y| <= 80 leave the learner a window of 80 and a model
    # that predicts towards 0; their range (20, 80) a window of 30 around their centre
    # (seeded: the scores of one draw, far apart: R^2 below 0 against above 0.5)
    np.save(tmp_path / "d.npy", _table(n=3000))
    wide = run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "w", seed=0,
                       y_bound=80.0, test_fraction=0.2, baseline=False)
    ranged = run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "r", seed=0,
                         y_bound="20,80", test_fraction=0.2, baseline=False)
    assert wide.rows[0]["heldout_r2"] < 0.0 < 0.5 < ranged.rows[0]["heldout_r2"]


def test_labels_far_from_0_are_told_a_range_and_a_clipped_range_names_one(tmp_path):
    table = _table()
    np.save(tmp_path / "d.npy", table)
    lo, hi = suggested_range(table[:, -1])
    result = run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "a", seed=0,
                         baseline=False)  # |y| <= 1: every label clipped
    offset, clip = result.notes[:2]
    assert f"declare their range, --y-bound {lo:g},{hi:g}" in offset
    assert f"Suggested: --y-bound {lo:g},{hi:g} (at most 2.5% of the raw labels fall " \
           "outside it)" in clip
    narrow = run_learner("ridge", str(tmp_path / "d.npy"), tmp_path / "n", seed=0,
                         y_bound="45,55", baseline=False)
    (clip,) = [n for n in narrow.notes if "were clipped" in n]
    assert "y outside [45, 55] in " in clip and f"--y-bound {lo:g},{hi:g}" in clip
    # labels around 0 keep the bound's advice
    centred = table.copy()
    centred[:, -1] -= np.mean(centred[:, -1])
    np.save(tmp_path / "c.npy", centred)
    (clip,) = run_learner("ridge", str(tmp_path / "c.npy"), tmp_path / "c", seed=0,
                          baseline=False).notes[:1]
    assert "|y| > 1 in " in clip and "(at most 2.5% of the raw |y| exceed it)" in clip


@pytest.mark.parametrize(("learner", "kwargs", "rule"), [
    ("ridge", {"y_bound": "80,20"}, "a range (lo, hi) of finite numbers with lo < hi; "
                                    "got '80,20'"),
    ("ridge", {"y_bound": "20,x"}, "with lo < hi; got '20,x'"),
    ("ridge", {"y_bound": "1,2,3"}, "with lo < hi; got '1,2,3'"),
    ("ridge-classifier", {"y_bound": "20,80"}, "be a number for a classifier"),
    ("ridge", {"y_bound": "20,80", "normalize": "private"}, "be 'auto' or left unset with "
                                                            "normalize='private'"),
    ("ridge", {"y_bound": "20,80", "normalize": "standardize"}, "be a bound, not a range"),
])
def test_a_bad_range_is_refused_before_any_row_is_read(tmp_path, learner, kwargs, rule):
    with pytest.raises(InvalidInputError, match="y_bound") as err:
        run_learner(learner, str(tmp_path / "absent.npy"), tmp_path / "o", **kwargs)
    assert rule in str(err.value)
    assert not (tmp_path / "o").exists()
