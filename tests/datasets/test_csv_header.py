"""A CSV whose first line is numbers: pandas' default column names are a header, said aloud.

``DataFrame.to_csv(index=False)`` of unnamed columns writes ``0,1,...,k-1`` first; it used
to be read silently as data row 1. Both readers (whole and chunked) share the rule.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.datasets import read_table
from dpol.datasets.chunks import iter_table
from dpol.datasets.files import HeaderWarning
from dpol.errors import InvalidInputError

AS_HEADER = ("the first line of {}, '0,1,...,10', was read as a header (column names "
             "0..10, as pandas names unnamed columns), not as a data row: the rows below "
             "are not all written as integers")
AS_DATA = ("the first line of {}, '0,1,2', was read as data row 1, though it reads as a "
           "header (column names 0..2, as pandas names unnamed columns): the rows below are "
           "written as integers too; delete the line if it is a header")


def _read(path, chunk_rows=None):
    """(table, names, warning texts) of read_table, or of iter_table in chunks."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if chunk_rows is None:
            table, names = read_table(path)
        else:
            chunks = list(iter_table(path, chunk_rows))
            table, names = np.vstack([t for t, _ in chunks]), chunks[0][1]
    assert all(w.category is HeaderWarning for w in caught)
    return table, names, [str(w.message) for w in caught]


@pytest.mark.parametrize("chunk_rows", [None, 1, 7])
def test_pandas_default_column_names_are_a_header_and_a_warning_says_so(tmp_path,
                                                                        chunk_rows):
    pd = pytest.importorskip("pandas")
    rows = np.random.default_rng(0).normal(size=(20, 11))
    path = tmp_path / "frame.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert path.read_text().startswith("0,1,2,3,4,5,6,7,8,9,10\n")
    table, names, said = _read(path, chunk_rows)
    assert table.shape == (20, 11) and np.allclose(table, rows)
    assert names == [str(i) for i in range(11)]
    assert said == [AS_HEADER.format(path)]


@pytest.mark.parametrize("chunk_rows", [None, 2])
def test_integer_rows_keep_the_line_as_data_and_a_warning_says_so(tmp_path, chunk_rows):
    path = tmp_path / "counts.csv"
    path.write_text("0,1,2\n3,4,5\n6,7,8\n")
    table, names, said = _read(path, chunk_rows)
    assert table.tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert names == ["x0", "x1", "x2"] and said == [AS_DATA.format(path)]


def test_one_based_names_are_a_header_too_and_target_col_still_counts_from_0(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("1,2,3\n0.5,0.25,1.0\n")
    table, names, said = _read(path)
    assert names == ["1", "2", "3"] and table.shape == (1, 3)
    assert said[0].endswith("not all written as integers; a numeric target_col still "
                            "counts columns from 0")


@pytest.mark.parametrize("text", ["3,4\n0.5,0.5\n",        # not the pattern
                                  "0\n0.5\n",              # one column: no pattern
                                  "1,0\n0.5,0.5\n",        # not in order
                                  "0.0,1.0\n0.5,0.5\n",    # not written as integers
                                  "a,b\n0,1\n"])           # a named header, as before
def test_other_first_lines_read_as_before_without_a_warning(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    for chunk_rows in (None, 1):
        table, _, said = _read(path, chunk_rows)
        assert said == []
        assert table.shape[0] == (1 if text.startswith("a") else 2)


def test_the_rule_reads_the_same_lines_in_both_readers(tmp_path):
    # the only non-integer field lies beyond the lines the rule reads: data, both ways
    path = tmp_path / "late.csv"
    path.write_text("0,1\n" + "2,3\n" * 100 + "0.5,1\n")
    whole, chunked = _read(path), _read(path, 3)
    assert whole[0].shape == chunked[0].shape == (102, 2)
    assert whole[2] == chunked[2] and len(whole[2]) == 1


def test_dpol_run_says_on_the_console_how_it_read_the_line(tmp_path):
    testing = pytest.importorskip("typer.testing")
    from dpol.cli import _app

    path = tmp_path / "frame.csv"
    rows = np.random.default_rng(1).normal(size=(30, 11)) * 0.1
    path.write_text("0,1,2,3,4,5,6,7,8,9,10\n"
                    + "".join(",".join(f"{v:.4f}" for v in r) + "\n" for r in rows))
    result = testing.CliRunner().invoke(_app(), ["run", "ridge", str(path), "--out",
                                                 str(tmp_path / "out"), "--no-baseline"])
    assert result.exit_code == 0, result.output
    assert f"dpol run: warning: HeaderWarning: {AS_HEADER.format(path)}" in result.output


def test_a_nan_below_is_no_evidence_of_a_header(tmp_path):
    # only finite decimals tell the columns' kind; the bad cell is refused in data row 2
    path = tmp_path / "nan.csv"
    path.write_text("1,2,3\n4,nan,6\n")
    for chunk_rows in (None, 1):
        with pytest.raises(InvalidInputError, match=r"got nan in row 2, column 'x1' \(line 2\)"):
            _read(path, chunk_rows)
