"""dpol/datasets/files.py: tables from files and stdin (read_table), their rows clipped to
declared bounds (clip_to_bounds) and made streams (table_stream), and their refusals."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from dpol._clip_warning import suggested_bound
from dpol.datasets import read_table, table_stream
from dpol.datasets.files import clip_to_bounds
from dpol.errors import InvalidInputError


def _table(n=40, k=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, k))


def test_read_table_formats_agree(tmp_path, monkeypatch):
    table = _table()
    np.savetxt(tmp_path / "h.csv", table, delimiter=",", header="a,b,c,y", comments="")
    np.savetxt(tmp_path / "plain.data", table, delimiter=",")
    with gzip.open(tmp_path / "z.csv.gz", "wt") as fh:
        np.savetxt(fh, table, delimiter=",")
    np.save(tmp_path / "t.npy", table)
    got, names = read_table(tmp_path / "h.csv")
    assert names == ["a", "b", "c", "y"]
    for name in ("plain.data", "z.csv.gz", "t.npy"):
        other, other_names = read_table(tmp_path / name)
        np.testing.assert_allclose(other, got, rtol=1e-15)
        assert other_names == ["x0", "x1", "x2", "x3"]
    monkeypatch.setattr("sys.stdin", io.StringIO((tmp_path / "h.csv").read_text()))
    np.testing.assert_array_equal(read_table("-")[0], got)


def test_read_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = _table()
    pq.write_table(pa.table({f"c{i}": table[:, i] for i in range(4)}), tmp_path / "t.parquet")
    got, names = read_table(tmp_path / "t.parquet")
    np.testing.assert_array_equal(got, table)
    assert names == ["c0", "c1", "c2", "c3"]


@pytest.mark.parametrize(("text", "rule"), [
    ("a,b\n1,x\n", "hold numbers only"),
    ("1,2\n3\n", "hold numbers only"),
    ("", "hold at least one row"),
    ("a,b\n", "below its header"),
])
def test_read_table_refuses_non_numeric_and_empty(text, rule):
    with pytest.raises(InvalidInputError, match=rule):
        read_table(io.StringIO(text))


@pytest.mark.parametrize("cell", ["x", "", "nan", "inf"])
def test_a_bad_cell_is_named_by_the_same_data_row_whatever_it_holds(tmp_path, cell):
    # rows count data rows from 1 (the header is no row) for a NaN and a word alike; the
    # line adds the header and the blank line; numpy's own message (0-based rows, a
    # ``usecols`` hint) must not leak through
    rows = ["1,2,3"] * 12
    rows[9] = f"1,{cell},3"
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n\n" + "\n".join(rows) + "\n")
    with pytest.raises(InvalidInputError) as info:
        read_table(path)
    message = str(info.value)
    assert f"in row 10, column 'b' (line 12) of {path}" in message, message
    assert "usecols" not in message and "numpy" not in message
    rule = "finite numbers" if cell in ("nan", "inf") else "numbers only, 3 per row"
    assert rule in message
    # the same cell in a table (no file lines) is named by the same row
    if cell in ("nan", "inf"):
        table = np.ones((12, 3))
        table[9, 1] = float(cell)
        with pytest.raises(InvalidInputError, match=r"in row 10, column 'x1'$"):
            table_stream(table)


def test_a_row_with_a_missing_field_is_named():
    with pytest.raises(InvalidInputError, match=r"per row; got 2 fields in row 2 \(line 3\)"):
        read_table(io.StringIO("a,b,c\n1,2,3\n4,5\n"))


def test_clip_to_bounds_counts_x_and_y_apart_and_suggests_bounds_that_end_the_note():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = 100.0 + 10.0 * rng.normal(size=400)  # every label above 1
    X0 = X.copy()
    Xc, yc, clip = clip_to_bounds(X, y, x_bound=2.0, y_bound=1.0)
    norms = np.linalg.norm(X, axis=1)
    assert clip.x_over == int(np.sum(norms > 2.0)) and clip.y_over == 400 == clip.clipped
    assert np.all(np.linalg.norm(Xc, axis=1) <= 2.0 * (1 + 1e-12)) and np.all(yc == 1.0)
    # two significant digits, rounded up: at most 2.5% of the rows stay above each
    # suggestion (so at most 5% above both), and it is the smallest such two-digit value
    for suggested, raw in ((clip.x_suggested, norms), (clip.y_suggested, np.abs(y))):
        assert np.sum(raw > suggested) <= 0.025 * 400
        assert suggested == float(f"{suggested:.2g}")
        smaller = suggested - 10.0 ** (np.floor(np.log10(suggested)) - 1)  # one step down
        assert np.sum(raw > smaller) > 0.025 * 400
    np.testing.assert_array_equal(X, X0)  # the caller's arrays are not modified
    # following both suggestions, the rows clipped are at most 5%: no note again
    again = clip_to_bounds(X, y, clip.x_suggested, clip.y_suggested)[2]
    assert again.clipped <= 0.05 * 400


def test_a_suggested_bound_is_not_an_interpolated_percentile():
    # 569 norms: the interpolated 95th percentile rounded up to two digits left 29 rows
    # (5.1%) above it, and `dpol run --bound <it>` warned again; the suggestion may leave
    # floor(2.5% of 569) = 14 above it
    norms = np.random.default_rng(1).lognormal(7.0, 0.6, size=569)
    suggested = suggested_bound(norms)
    assert np.sum(norms > suggested) <= 14
    assert np.sum(norms > np.quantile(norms, 0.95)) == 29  # what the percentile leaves


def test_read_table_refuses_missing_files_and_unknown_suffixes(tmp_path):
    with pytest.raises(InvalidInputError, match="name an existing file"):
        read_table(tmp_path / "none.csv")
    (tmp_path / "t.xlsx").write_text("1,2")
    with pytest.raises(InvalidInputError, match="end in one of"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(InvalidInputError, match="path, '-' or a text stream"):
        read_table(42)


def test_table_stream_clip_counts_and_bounds():
    table = _table(200, 4) * 2.0
    s = table_stream(table, x_bound=0.5, y_bound=1.0)
    norms = np.linalg.norm(table[:, :3], axis=1)
    assert np.all(np.linalg.norm(s.X, axis=1) <= 0.5 * (1 + 1e-12))
    assert np.all(np.abs(s.y) <= 1.0)
    over = (norms > 0.5) | (np.abs(table[:, 3]) > 1.0)
    assert s.n_clipped == int(over.sum()) > 0
    inside = ~over
    np.testing.assert_array_equal(s.X[inside], table[inside, :3])  # untouched within bounds
    assert f"({int((norms > 0.5).sum())} of 200)" in s.normalization


def test_table_stream_standardize_label_column_and_classification():
    table = _table(100, 4) * 10.0 + 3.0
    s = table_stream(table, ["a", "b", "target", "c"], target_col="target",
                     normalize="standardize", x_bound=2.0, y_bound=0.5)
    assert np.max(np.linalg.norm(s.X, axis=1)) == pytest.approx(2.0)
    # the label centred at its mean, the 95th percentile of its distance from it scaled
    # to y_bound, the 5 labels beyond clipped there (which moves the mean off 0 by at
    # most 5 of 100 labels' excess)
    assert abs(np.mean(s.y)) < 0.05 * 0.5
    assert np.max(np.abs(s.y)) == pytest.approx(0.5)
    assert np.sum(np.abs(s.y) == 0.5) == 5 and "the 5 labels beyond +-1 clipped" in (
        s.normalization)
    assert "not covered by the privacy guarantee" in s.normalization and s.n_clipped == 0
    assert "label 'target', 3 features" in s.name
    np.testing.assert_array_equal(table_stream(table, target_col=2).y,
                                  table_stream(table, target_col=-2).y)
    labels = np.c_[table[:, :3], np.where(table[:, 3] > 3.0, 7.0, 2.0)]
    c = table_stream(labels, task="classification")
    np.testing.assert_array_equal(c.y, np.where(table[:, 3] > 3.0, 1.0, -1.0))
    assert "label 2 -> -1, 7 -> +1" in c.normalization
    with pytest.raises(InvalidInputError, match="two distinct labels"):
        table_stream(table, task="classification")


def test_multi_class_labels_become_one_hot_rows_of_the_sorted_classes():
    table = np.c_[_table(6, 2), [5.0, 1.0, 2.0, 5.0, 1.0, 1.0]]
    s = table_stream(table, task="classification", multi_class=True)
    np.testing.assert_array_equal(s.y, np.eye(3)[[2, 0, 1, 2, 0, 0]])
    assert "label 1 -> e1, 2 -> e2, 5 -> e3 (one-hot rows of 3 classes)" in s.normalization
    with pytest.raises(InvalidInputError, match="two distinct labels for classification"):
        table_stream(table, task="classification")  # not asked for: two labels or none
    real = np.c_[_table(6, 2), [0.5, 1.0, 2.0, 5.0, 1.0, 1.0]]  # a real label: refused
    with pytest.raises(InvalidInputError, match="or whole numbers coding K > 2 classes"):
        table_stream(real, task="classification", multi_class=True)
    # label rows are scaled to norm y_bound, as PQFTL with K outputs would, and counted
    _, yc, clip = clip_to_bounds(np.zeros((2, 2)), np.array([[0.0, 3.0, 4.0], [0, 0.6, 0]]),
                                 1.0, 1.0)
    np.testing.assert_allclose(yc, [[0.0, 0.6, 0.8], [0.0, 0.6, 0.0]])
    assert (clip.y_over, clip.clipped, clip.y_suggested) == (1, 1, 5.0)


def test_table_stream_refusals():
    table = _table(10, 3)
    bad = table.copy()
    bad[4, 1] = np.nan
    with pytest.raises(InvalidInputError, match=r"finite numbers; got nan in row 5, column 'x1'$"):
        table_stream(bad)
    with pytest.raises(InvalidInputError, match="target_col must name a column"):
        table_stream(table, ["a", "b", "c"], target_col="y")
    with pytest.raises(InvalidInputError, match="two columns"):
        table_stream(table[:, :1])
    with pytest.raises(InvalidInputError, match="normalize must be one of"):
        table_stream(table, normalize="minmax")
    assert len(table_stream(table, limit=4).y) == 4
