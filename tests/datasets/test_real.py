"""dpol/datasets/real.py: the local copies of YearPredictionMSD and Covertype as
downloaded, read into streams within the unit bounds, and their refusals."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from dpol.datasets import load_covertype, load_year_prediction
from dpol.errors import InvalidInputError


def test_local_copies_as_downloaded(tmp_path):
    rng = np.random.default_rng(0)
    year = np.c_[rng.integers(1922, 2012, 50), rng.normal(size=(50, 90))]
    np.savetxt(tmp_path / "YearPredictionMSD.txt", year, delimiter=",", fmt="%.6f")
    s = load_year_prediction(tmp_path / "YearPredictionMSD.txt", limit=30)
    assert s.X.shape == (30, 90) and np.max(np.linalg.norm(s.X, axis=1)) == pytest.approx(1.0)
    assert abs(np.mean(s.y)) < 0.05 and np.max(np.abs(s.y)) == 1.0  # 5% beyond: clipped
    cov = np.c_[rng.integers(0, 300, size=(60, 54)), rng.integers(1, 8, 60)]
    with gzip.open(tmp_path / "covtype.data.gz", "wt") as fh:
        np.savetxt(fh, cov, delimiter=",", fmt="%d")
    c = load_covertype(tmp_path / "covtype.data.gz")
    np.testing.assert_array_equal(c.y, np.where(cov[:, 54] == 2, 1.0, -1.0))
    with pytest.raises(InvalidInputError, match="91 comma-separated"):
        load_year_prediction(tmp_path / "covtype.data.gz")
    with pytest.raises(InvalidInputError, match="path must name an existing file"):
        load_covertype(tmp_path / "covtype.data")
