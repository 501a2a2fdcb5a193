"""What a `dpol run` is asked, checked before any data is read: old names read as their
canonical ones, the data path kept whole for a resume started elsewhere, refusals that
read nothing."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs.pipeline import run_learner, run_request


def test_checkpoints_refused_on_standard_input(tmp_path):
    with pytest.raises(InvalidInputError, match="checkpoint_every must be unset"):
        run_learner("ridge", "-", tmp_path / "out", checkpoint_every=10)


def test_old_names_are_read_as_their_canonical_ones(tmp_path):
    request = run_request("frank-wolfe", "synthetic-regression", tmp_path / "o",
                          counter="window")
    assert (request.learner, request.counter) == ("online_frank_wolfe", "window_tree")
    # a checkpoint keeps the canonical names, which a --resume compares its flags with
    assert (request.args["learner"], request.args["counter"]) == (request.learner,
                                                                  request.counter)


def test_the_data_path_is_kept_whole_for_a_resume_started_elsewhere(tmp_path, monkeypatch):
    np.save(tmp_path / "d.npy", np.zeros((4, 2)))
    monkeypatch.chdir(tmp_path)
    request = run_request("ridge", "d.npy", "o")
    assert request.data == "d.npy" and request.args["data"] == str(tmp_path / "d.npy")


def test_a_bad_argument_is_refused_before_the_data_is_looked_at(tmp_path):
    # the file does not exist: the refusal names the cheap argument, not the file
    with pytest.raises(InvalidInputError, match=r"^epsilon must be > 0"):
        run_request("ridge", str(tmp_path / "missing.csv"), tmp_path / "o", epsilon=-1.0)
    assert not (tmp_path / "o").exists()
