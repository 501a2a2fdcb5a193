"""dpol/datasets/chunks.py: a file read chunk_rows rows at a time gives the rows, names and
refusals of reading it whole (read_table), whatever the chunk boundaries."""

from __future__ import annotations

import gzip
import sys

import numpy as np
import pytest

from dpol.datasets import read_table
from dpol.datasets.chunks import _arrow_parse, iter_table
from dpol.errors import InvalidInputError

TABLE = np.random.default_rng(0).normal(size=(23, 3))  # 23 rows: no size divides it


def _files(tmp_path):
    """The same table as CSV with a header and blank lines, gzipped CSV and NPY."""
    text = "a,b,y\n" + "".join(",".join(repr(float(v)) for v in row) + ("\n\n" if i == 5 else "\n")
                               for i, row in enumerate(TABLE))
    (tmp_path / "t.csv").write_text(text)
    with gzip.open(tmp_path / "t.csv.gz", "wt") as fh:
        fh.write(text)
    np.save(tmp_path / "t.npy", TABLE)
    return [tmp_path / name for name in ("t.csv", "t.csv.gz", "t.npy")]


@pytest.mark.parametrize("chunk_rows", [1, 5, 23, 100])
def test_the_chunks_stack_to_the_whole_table(tmp_path, chunk_rows):
    for path in _files(tmp_path):
        whole, names = read_table(path)
        chunks = list(iter_table(path, chunk_rows))
        assert [len(t) for t, _ in chunks[:-1]] == [chunk_rows] * (len(chunks) - 1)
        assert len(chunks) == -(-23 // chunk_rows)  # ceil: the last one holds the rest
        np.testing.assert_array_equal(np.vstack([t for t, _ in chunks]), whole)
        assert all(n == names for _, n in chunks)


@pytest.mark.parametrize("suffix", [".csv", ".npy"])
def test_a_bad_cell_in_a_later_chunk_is_named_by_its_row_in_the_whole_file(tmp_path, suffix):
    table = TABLE.copy()
    table[17, 1] = np.nan
    path = tmp_path / f"bad{suffix}"
    if suffix == ".npy":
        np.save(path, table)
    else:
        np.savetxt(path, table, delimiter=",")
    chunks = iter_table(path, 5)
    for _ in range(3):  # rows 1-15 are fine and come out before the refusal
        next(chunks)
    with pytest.raises(InvalidInputError, match=r"finite numbers; got nan in row 18, column "
                       r"'x1'" + (r" \(line 18\)" if suffix == ".csv" else "")):
        next(chunks)


def test_bad_sizes_and_empty_files_are_refused(tmp_path):
    path = _files(tmp_path)[0]
    with pytest.raises(InvalidInputError, match=r"^chunk_rows must"):
        list(iter_table(path, 0))
    (tmp_path / "empty.csv").write_text("\n\n")
    with pytest.raises(InvalidInputError, match="hold at least one row"):
        list(iter_table(tmp_path / "empty.csv", 4))
    (tmp_path / "header.csv").write_text("a,b\n")
    with pytest.raises(InvalidInputError, match="below its header"):
        list(iter_table(tmp_path / "header.csv", 4))
    with pytest.raises(InvalidInputError, match="name an existing file"):
        list(iter_table(tmp_path / "none.csv", 4))
    np.save(tmp_path / "flat.npy", np.ones(3))
    with pytest.raises(InvalidInputError, match="2-d numeric array"):
        list(iter_table(tmp_path / "flat.npy", 4))


def _without_pyarrow(monkeypatch):
    """Hide pyarrow: ``import pyarrow`` raises ImportError, as when it is not installed."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)


def test_pyarrow_and_loadtxt_read_a_csv_to_the_same_bits(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow.csv")
    rng = np.random.default_rng(1)
    values = rng.normal(size=(600, 3)) * 10.0 ** rng.integers(-320, 308, size=(600, 3))
    formats = [lambda v: repr(float(v)), lambda v: f"{v:.25e}", lambda v: f"{v:.3f}",
               lambda v: f"{v:.20g}", lambda v: f"{v:+.4E}"]  # 17 digits, 26, rounded, ...
    lines = [",".join(formats[i % 5](v) for v in row) for i, row in enumerate(values)]
    lines += ["1.,.5,-.5", "+1,1e5,1E-5", "00012,-0,-0.0", "4.9e-324,2.4703282292062328e-324,"
              "0.1000000000000000055511151231257827"]  # halfway and subnormal cases
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + "\n".join(lines) + "\n")
    assert _arrow_parse("\n".join(lines), 3) is not None  # plain: pyarrow parses it
    fast = np.vstack([t for t, _ in iter_table(path, 256)])
    _without_pyarrow(monkeypatch)
    slow = np.vstack([t for t, _ in iter_table(path, 256)])
    assert fast.shape == (len(lines), 3)
    np.testing.assert_array_equal(fast.view(np.int64), slow.view(np.int64))


@pytest.mark.parametrize("row", ["1,,2", "1,2", "1,2,3,4", "1.2.3,4,5", "1e,2,3", '"1",2,3'])
def test_a_chunk_pyarrow_refuses_gets_loadtxts_message(tmp_path, monkeypatch, row):
    pytest.importorskip("pyarrow.csv")
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n1,2,3\n" + row + "\n")
    with pytest.raises(InvalidInputError) as fast:
        list(iter_table(path, 8))
    _without_pyarrow(monkeypatch)
    with pytest.raises(InvalidInputError) as slow:
        list(iter_table(path, 8))
    assert str(fast.value) == str(slow.value)
