"""Synthetic generators, local loaders for large public sets, package-shipped sets (L4).

* :mod:`dpol.datasets.synthetic` — seeded streams (:class:`Stream`) with known truth;
* :mod:`dpol.datasets.real` — local copies of YearPredictionMSD and Covertype (documented
  download), scikit-learn's diabetes and breast cancer;
* :mod:`dpol.datasets.shipped` — river's Shuttle, statsmodels' RAND health data, and
  :func:`load_dataset`, every named stream of :data:`DATASETS`;
* :mod:`dpol.datasets.files` — CSV / NPY / Parquet tables (or standard input) as streams
  within declared bounds;
* :mod:`dpol.datasets.normalize` — the reproductions' normalisation;
* :mod:`dpol.datasets.private_bounds`, :mod:`dpol.datasets.private_scaling` — bounds and
  per-feature scaling released privately (OpenDP, ``opendp`` extra);
* :mod:`dpol.datasets.private_label_mean` — the labels' private mean (the trivial model).
"""

from dpol.datasets.files import NORMALIZATIONS, TASKS, read_table, table_stream
from dpol.datasets.normalize import normalize_regression, normalize_rows
from dpol.datasets.private_bounds import PrivateBounds, private_bounds
from dpol.datasets.private_label_mean import PrivateLabelMean, private_label_mean
from dpol.datasets.private_scaling import PrivateScaling, private_scaling
from dpol.datasets.real import (
    load_covertype,
    load_fallback_classification,
    load_fallback_regression,
    load_year_prediction,
)
from dpol.datasets.shipped import DATASETS, load_dataset, load_randhie, load_shuttle
from dpol.datasets.synthetic import Stream, linear_regression_stream, logistic_stream

__all__ = [
    "DATASETS",
    "NORMALIZATIONS",
    "TASKS",
    "PrivateBounds",
    "PrivateLabelMean",
    "PrivateScaling",
    "Stream",
    "linear_regression_stream",
    "load_covertype",
    "load_dataset",
    "load_fallback_classification",
    "load_fallback_regression",
    "load_randhie",
    "load_shuttle",
    "load_year_prediction",
    "logistic_stream",
    "normalize_regression",
    "normalize_rows",
    "private_bounds",
    "private_label_mean",
    "private_scaling",
    "read_table",
    "table_stream",
]
