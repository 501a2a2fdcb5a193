"""dpol/datasets/table.py: a named table in memory reads as a file does."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.datasets import read_table
from dpol.datasets.table import Table
from dpol.errors import InvalidInputError


def test_a_table_reads_back_its_rows_and_names():
    t = Table(np.arange(6).reshape(3, 2), ("a", "y"), "d.csv [k=1]")
    values, names = read_table(t)
    assert values.dtype == np.float64 and values.tolist() == [[0, 1], [2, 3], [4, 5]]
    assert names == ["a", "y"] and str(t) == "d.csv [k=1]"


@pytest.mark.parametrize(("values", "names", "word"), [
    (np.ones(3), ("a",), "values"), (np.array([[1.0, np.nan]]), ("a", "b"), "values"),
    (np.ones((2, 2)), ("a", "b", "c"), "names")])
def test_bad_tables_are_refused(values, names, word):
    with pytest.raises(InvalidInputError, match=word):
        Table(values, names, "t")
