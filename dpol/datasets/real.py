"""Real data: local copies of large public data sets, and small sets shipped by packages.

YearPredictionMSD and Covertype are large downloads that dpol never fetches itself. From
the UCI Machine Learning Repository (https://archive.ics.uci.edu):

* YearPredictionMSD (dataset 203, ``YearPredictionMSD.txt.zip``, about 200 MB, unzipped):
  515,345 rows of 91 numbers, the year first; the first 463,715 are the training part.
* Covertype (dataset 31, ``covtype.data.gz``, about 11 MB, read gzipped): 581,012 rows,
  54 features then the class 1..7.

Then pass the path (``.csv``, ``.txt``, ``.data``, optionally ``.gz``, or ``.npy`` /
``.parquet``), e.g. ``dpol reproduce jkt-year --data YearPredictionMSD.txt``. Without a
copy, experiments fall back to data sets shipped inside scikit-learn (the ``real``
extra): diabetes (regression, 442 x 10) and breast cancer (classification, 569 x 30).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpol._validation import fail
from dpol.datasets.files import read_table
from dpol.datasets.normalize import normalize_regression, normalize_rows
from dpol.datasets.synthetic import Stream

__all__ = ["load_covertype", "load_fallback_classification", "load_fallback_regression",
           "load_year_prediction"]


def _read_table(path: str | Path) -> np.ndarray:
    if not Path(path).is_file():
        raise fail("path", "name an existing file", str(path))
    return read_table(path)[0]


def load_year_prediction(path: str | Path, limit: int | None = None) -> Stream:
    """YearPredictionMSD from a local CSV (year, then 90 features), in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "yp.csv")
    >>> rows = np.c_[np.arange(1990, 2000), np.random.default_rng(0).normal(size=(10, 90))]
    >>> np.savetxt(f, rows, delimiter=",")
    >>> load_year_prediction(f).X.shape
    (10, 90)
    """
    table = _read_table(path)
    if table.ndim != 2 or table.shape[1] != 91:
        raise fail("path", "hold 91 comma-separated columns (year, 90 features)", str(path))
    table = table[:limit]
    X, y, how = normalize_regression(table[:, 1:], table[:, 0])
    return Stream(X, y, "YearPredictionMSD", how)


def load_covertype(path: str | Path, positive_class: int = 2, limit: int | None = None
                   ) -> Stream:
    """Covertype from a local CSV (54 features, class 1..7 last) as class 2 vs the rest.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "cov.csv")
    >>> rng = np.random.default_rng(0)
    >>> np.savetxt(f, np.c_[rng.normal(size=(8, 54)), rng.integers(1, 8, 8)], delimiter=",")
    >>> sorted(set(load_covertype(f).y.tolist())) in ([-1.0, 1.0], [-1.0], [1.0])
    True
    """
    table = _read_table(path)
    if table.ndim != 2 or table.shape[1] != 55:
        raise fail("path", "hold 55 comma-separated columns (54 features, class)", str(path))
    table = table[:limit]
    X, how = normalize_rows(table[:, :54])
    y = np.where(table[:, 54] == positive_class, 1.0, -1.0)
    return Stream(X, y, "Covertype", f"{how}; class {positive_class} vs the rest as +-1")


def _sklearn():
    try:
        from sklearn import datasets
    except ImportError as exc:
        raise ImportError("this data set ships with scikit-learn: pip install 'dpol[real]'") \
            from exc
    return datasets


def load_fallback_regression(seed: object = 0) -> Stream:
    """scikit-learn's diabetes data (442 x 10, shipped with the package), shuffled by seed.

    Examples
    --------
    >>> s = load_fallback_regression(seed=0)
    >>> s.X.shape, round(float(s.y.mean()), 3), float(np.abs(s.y).max())  # 5% clipped
    ((442, 10), -0.01, 1.0)
    """
    bunch = _sklearn().load_diabetes()
    order = np.random.default_rng(seed).permutation(len(bunch.target))
    X, y, how = normalize_regression(bunch.data[order], bunch.target[order])
    return Stream(X, y, "diabetes (scikit-learn)", how)


def load_fallback_classification(seed: object = 0) -> Stream:
    """scikit-learn's breast cancer data (569 x 30, shipped with the package) as +-1.

    Examples
    --------
    >>> s = load_fallback_classification(seed=0)
    >>> s.X.shape, sorted(set(s.y.tolist()))
    ((569, 30), [-1.0, 1.0])
    """
    bunch = _sklearn().load_breast_cancer()
    order = np.random.default_rng(seed).permutation(len(bunch.target))
    X, how = normalize_rows(bunch.data[order])
    y = np.where(bunch.target[order] == 1, 1.0, -1.0)
    return Stream(X, y, "breast cancer (scikit-learn)", f"{how}; benign as +1")
