"""`dpol run` on K = 3 classes read in chunks and resumed from a checkpoint: the releases
and scores of the one-shot run; a chunked run knows its classes before the first chunk."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import resume_run, run_learner


def _data(path, n=900, seed=0):
    """Labels 0, 1, 2 (the chunked coding), the class of the largest of three scores."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3
    labels = np.argmax(np.column_stack([X[:, 0], X[:, 1], -X[:, 0] - X[:, 1]]), axis=1)
    np.save(path, np.column_stack([X, labels.astype(float)]))
    return str(path)


def test_chunked_three_class_run_is_the_one_shot_run(tmp_path):
    data = _data(tmp_path / "d.npy")
    whole = run_learner("ridge_classifier", data, tmp_path / "whole", seed=2)
    part = run_learner("ridge_classifier", data, tmp_path / "part", seed=2, chunk_rows=250,
                       options={"outputs": 3})
    iterates = np.load(tmp_path / "whole" / "iterates.npy")
    assert iterates.shape == (901, 4, 3)  # d + 1 (the intercept), K
    np.testing.assert_array_equal(np.load(tmp_path / "part" / "iterates.npy"), iterates)
    a = np.loadtxt(tmp_path / "whole" / "losses.csv", delimiter=",", skiprows=1)
    b = np.loadtxt(tmp_path / "part" / "losses.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(b, a[:, :5])  # t, the loss, the 3 margins
    for w, p in zip(whole.rows, part.rows, strict=True):
        assert p["model"] == w["model"]
        assert p["accuracy"] == pytest.approx(w["accuracy"], nan_ok=True)
    assert part.labels == whole.labels == (
        "label 0 -> e1, 1 -> e2, 2 -> e3 (one-hot rows of 3 classes)")
    assert whole.rows[0]["accuracy"] > whole.rows[-1]["accuracy"] + 0.2  # beats the majority


def test_a_chunked_run_needs_its_classes_before_the_first_chunk(tmp_path):
    data = _data(tmp_path / "d.npy", n=300)
    with pytest.raises(InvalidInputError, match=r"--option outputs=K, for ridge_classifier"):
        run_learner("ridge_classifier", data, tmp_path / "a", chunk_rows=100)
    with pytest.raises(InvalidInputError, match=r"learner must be one of ridge_classifier, "
                       r"ridge_classifier_rff .* for labels of 3 classes; got 'igd'"):
        run_learner("igd", data, tmp_path / "b", chunk_rows=100, options={"outputs": 3})
    assert list(tmp_path.iterdir()) == [tmp_path / "d.npy"]  # nothing written


class Stop(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback."""


def test_a_three_class_run_resumes_to_the_same_releases(tmp_path):
    data = _data(tmp_path / "d.npy", n=2500)  # slices of 1,024 rows: three of them
    run_learner("ridge_classifier", data, tmp_path / "whole", seed=5)

    def stop(done, total, which):
        if which == "ridge_classifier" and done >= 2000:
            raise Stop

    out = tmp_path / "out"
    with pytest.raises(Stop):
        run_learner("ridge_classifier", data, out, seed=5, checkpoint_every=500,
                    progress=stop)
    assert checkpoint_folder(out).is_dir() and not out.exists()
    result = resume_run(out)
    np.testing.assert_array_equal(np.load(out / "iterates.npy"),
                                  np.load(tmp_path / "whole" / "iterates.npy"))
    assert (out / "losses.csv").read_text() == (tmp_path / "whole" / "losses.csv").read_text()
    assert result.labels.startswith("label 0 -> e1")
