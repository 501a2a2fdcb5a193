"""`dpol run --chunk-rows`: streams read and learned in chunks give the releases of the
whole-file run, refuse what needs the whole file, and leave nothing half-written."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from dpol.datasets.chunks import iter_table
from dpol.errors import InvalidInputError
from dpol.experiments.runs import chunked
from dpol.experiments.runs.chunked import count_rows
from dpol.experiments.runs.pipeline import run_learner


def _table(n=5000, seed=0, classification=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3
    y = X @ [0.5, -0.3, 0.2] + 0.05 * rng.normal(size=n)
    return np.column_stack([X, (y > 0).astype(float) if classification else y])


@pytest.mark.parametrize("learner", ["pqftl", "igd"])
def test_chunked_run_releases_what_the_whole_file_run_releases(tmp_path, learner):
    classification = learner == "igd"
    path = tmp_path / "d.npy"
    np.save(path, _table(classification=classification))
    whole = run_learner(learner, str(path), tmp_path / "whole", seed=4)
    part = run_learner(learner, str(path), tmp_path / "part", seed=4, chunk_rows=777)
    np.testing.assert_array_equal(np.load(tmp_path / "part" / "iterates.npy"),
                                  np.load(tmp_path / "whole" / "iterates.npy"))
    a = np.loadtxt(tmp_path / "whole" / "losses.csv", delimiter=",", skiprows=1)
    b = np.loadtxt(tmp_path / "part" / "losses.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(b[:, :2], a[:, :2])  # t and the loss, to 10 digits
    assert part.rows[0]["mean_loss"] == pytest.approx(whole.rows[0]["mean_loss"], rel=1e-12)
    assert part.rows[1]["mean_loss"] == pytest.approx(whole.rows[1]["mean_loss"], rel=1e-12)
    if classification:
        assert part.rows[0]["accuracy"] == whole.rows[0]["accuracy"]
    assert "regret is not computed" in part.notes[0]
    assert sorted(p.name for p in (tmp_path / "part").iterdir()) == [
        "iterates.npy", "loss.png", "losses.csv", "report.md", "run.json"]


def test_a_bad_cell_in_a_later_chunk_is_named_and_nothing_is_written(tmp_path):
    path = tmp_path / "d.csv"
    rows = [",".join(f"{v:.4f}" for v in r) for r in _table(n=300)]
    rows[250] = rows[250].replace(rows[250].split(",")[1], "oops", 1)
    path.write_text("a,b,c,label\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    with pytest.raises(InvalidInputError, match=r"'oops' in row 251, column 'b' \(line 252\)"):
        run_learner("pqftl", str(path), out, chunk_rows=100)
    assert not out.exists()  # the folder the run made is gone with its files


@pytest.mark.parametrize("kwargs, name", [
    (dict(test_fraction=0.2), "test_fraction"),
    (dict(normalize="private"), "normalize"),
    (dict(x_bound="auto"), "x_bound"),
    (dict(checkpoint_every=100), "checkpoint_every"),
    (dict(chunk_rows=0), "chunk_rows"),
])
def test_what_needs_the_whole_file_is_refused(tmp_path, kwargs, name):
    path = tmp_path / "d.npy"
    np.save(path, _table(n=50))
    with pytest.raises(InvalidInputError, match=f"^{name} must"):
        run_learner("pqftl", str(path), tmp_path / "out", **{"chunk_rows": 10, **kwargs})
    assert not (tmp_path / "out").exists()


def test_standard_input_and_named_sets_are_refused(tmp_path):
    for data in ("-", "synthetic-regression"):
        with pytest.raises(InvalidInputError, match=r"^data must be a file for a chunked run"):
            run_learner("pqftl", data, tmp_path / "out", chunk_rows=10)


def test_classification_labels_must_be_coded(tmp_path):
    table = _table(n=200, classification=True)
    table[150, -1] = 2.0
    path = tmp_path / "d.npy"
    np.save(path, table)
    with pytest.raises(InvalidInputError, match=r"-1 / \+1 or 0 / 1.*got '2 in row 151'"):
        run_learner("igd", str(path), tmp_path / "out", chunk_rows=64)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_count_rows_reads_no_cell(tmp_path):
    body = "1,2\n3,4\n\n5,6\n"
    (tmp_path / "a.csv").write_text("x,y\n" + body)
    (tmp_path / "b.csv").write_text(body)
    with gzip.open(tmp_path / "c.csv.gz", "wt") as fh:
        fh.write("x,y\n" + body)
    np.save(tmp_path / "d.npy", np.zeros((7, 2)))
    assert [count_rows(tmp_path / f) for f in ("a.csv", "b.csv", "c.csv.gz", "d.npy")] == [
        3, 3, 3, 7]


def test_count_rows_counts_lines_as_a_loop_over_them_would(tmp_path, monkeypatch):
    # blank lines of every kind bytes.strip() empties, CRLF, no final newline; blocks of
    # 5 bytes put block ends inside lines and blank runs (the count carries the rest over)
    pieces = [b"1,2\n", b"\n", b" \t\n", b"\r\n", b"3,4\r\n", b"\x0c\n", b"  5,6\n", b"7,8"]
    rng = np.random.default_rng(0)
    path = tmp_path / "d.csv"
    for size in (1 << 24, 5):
        for _ in range(60):
            data = b"x,y\n" + b"".join(pieces[i] for i in rng.integers(0, 7, 40)) + (
                pieces[7] if rng.random() < 0.5 else b"")
            path.write_bytes(data)
            want = sum(1 for line in data.split(b"\n") if line.strip()) - 1
            with open(path, "rb") as fh:
                fh.readline()
                assert chunked._count_lines(_Blocks(fh, size)) == want, data


class _Blocks:
    """A binary file read ``size`` bytes at a time, whatever the caller asks."""

    def __init__(self, fh, size):
        self.fh, self.size = fh, size

    def read(self, n):
        return self.fh.read(min(n, self.size))


def test_a_bad_cell_after_blank_lines_past_the_header_sample_names_its_line(tmp_path):
    # the reader numbers lines itself past the header rule's 100-line sample: blank lines
    # there must still count in the line the refusal names
    rows = [",".join(f"{v:.4f}" for v in r) for r in _table(n=200)]
    rows[150] = rows[150].replace(rows[150].split(",")[2], "1.0.0", 1)
    text = "a,b,c,label\n" + "\n".join(rows[:120]) + "\n\n \n" + "\n".join(rows[120:]) + "\n"
    (tmp_path / "d.csv").write_text(text)
    with pytest.raises(InvalidInputError, match=r"'1.0.0' in row 151, column 'c' \(line 154\)"):
        list(iter_table(tmp_path / "d.csv", 64))


def test_parquet_is_read_by_record_batches(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = _table(n=2500)
    frame = pa.table({name: table[:, i] for i, name in enumerate(["a", "b", "c", "label"])})
    pq.write_table(frame, tmp_path / "d.parquet", row_group_size=1000)
    np.save(tmp_path / "d.npy", table)
    run_learner("pqftl", str(tmp_path / "d.parquet"), tmp_path / "pq", seed=1, chunk_rows=300)
    run_learner("pqftl", str(tmp_path / "d.npy"), tmp_path / "np", seed=1)
    np.testing.assert_array_equal(np.load(tmp_path / "pq" / "iterates.npy"),
                                  np.load(tmp_path / "np" / "iterates.npy"))
    assert count_rows(tmp_path / "d.parquet") == 2500


def test_online_accuracy_scores_the_model_a_user_gets(tmp_path):
    # The accuracy dpol run reports is that of predict_one (by default the weighted mean
    # of the releases, with an intercept), not of the raw last release whose regret the
    # report plots: the same figure as a predict_one / learn_one loop, whether the file is
    # learnt whole (in slices of 1,024 rows) or in chunks of 777 rows.
    from dpol.adapters import make_learner
    from dpol.experiments.runs.scores import online_accuracy

    table = _table(n=2500, classification=True)
    table[:, :3] /= 1.01 * np.max(np.linalg.norm(table[:, :3], axis=1))  # none clipped
    path = tmp_path / "c.npy"
    np.save(path, table)
    X, y = table[:, :3], np.where(table[:, 3] > 0, 1.0, -1.0)
    model = make_learner("ridge-classifier", 3, horizon=2500, epsilon=1.0, seed=4,
                         fit_intercept=True)
    served, raw = np.empty(len(y)), np.empty(len(y))
    for i in range(len(y)):
        served[i], raw[i] = model.predict_one(X[i]), model.predict_one(X[i], raw=True)
        model.learn_one(X[i], y[i])
    expected = online_accuracy(served, y)
    assert expected != online_accuracy(raw, y)  # the two scores differ on this stream
    for out, chunks in (("whole", None), ("part", 777)):
        result = run_learner("ridge-classifier", str(path), tmp_path / out, seed=4,
                             chunk_rows=chunks, baseline=False)
        assert result.rows[0]["accuracy"] == pytest.approx(expected, abs=1e-12), out


def test_a_chunked_run_over_a_whole_file_run_keeps_no_stale_file_and_says_its_columns(
        tmp_path):
    # the whole-file run's regret.png stayed beside the chunked run's outputs, and the
    # report said losses.csv held regret columns (its header: t,loss,prediction)
    path = tmp_path / "d.npy"
    np.save(path, _table(n=600, classification=True))
    run_learner("igd", str(path), tmp_path / "o", seed=1)
    assert (tmp_path / "o" / "regret.png").exists()
    run_learner("igd", str(path), tmp_path / "o", seed=1, chunk_rows=250, replace=True)
    assert not (tmp_path / "o" / "regret.png").exists()
    report = (tmp_path / "o" / "report.md").read_text()
    assert "`losses.csv` (per-step loss and prediction)" in report
    assert (tmp_path / "o" / "losses.csv").read_text().startswith("t,loss,prediction\n")


def test_a_chunked_classification_note_counts_rows_not_labels(tmp_path):
    path = tmp_path / "d.npy"
    table = _table(n=400, classification=True)
    table[:, :3] *= 20.0  # every row beyond ||x|| <= 1
    np.save(path, table)
    result = run_learner("igd", str(path), tmp_path / "o", chunk_rows=100)
    (note,) = [n for n in result.notes if "were clipped" in n]
    assert note.endswith("declared bounds ||x|| <= 1") and "|y|" not in note
    assert result.labels == ""  # labels +-1: nothing to say of their coding


def test_a_clipped_chunked_run_says_how_its_classes_are_coded_not_its_bounds(tmp_path):
    # the clipping note's text overwrote the classes' coding: dpol run printed
    # "labels: , |y| <= 1" for a regression, and no labels line for K classes
    path = tmp_path / "d.npy"
    table = _table(n=400)
    table[:, :3] *= 20.0  # every row beyond ||x|| <= 1
    np.save(path, table)
    result = run_learner("pqftl", str(path), tmp_path / "r", chunk_rows=100)
    assert any("were clipped" in n for n in result.notes) and result.labels == ""
    table[:, 3] = np.arange(400) % 3  # classes 0, 1, 2
    np.save(path, table)
    result = run_learner("ridge-classifier", str(path), tmp_path / "k", chunk_rows=100,
                         options={"outputs": 3})
    assert any("were clipped" in n for n in result.notes)
    assert result.labels == "label 0 -> e1, 1 -> e2, 2 -> e3 (one-hot rows of 3 classes)"
