"""Real data sets shipped inside well-kept packages, and a catalogue of every named stream.

Nothing is downloaded: river ships Shuttle (``river`` extra), statsmodels ships the RAND
health insurance experiment (``statsmodels`` extra) and scikit-learn ships diabetes and
breast cancer (``real`` extra). Each loader normalises to ||x|| <= 1 and |y| <= 1 (labels
+-1) and says how in ``Stream.normalization``; the normalisations read statistics of these
public data sets.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpol._validation import check_int, fail
from dpol.datasets.normalize import normalize_regression, normalize_rows
from dpol.datasets.real import load_fallback_classification, load_fallback_regression
from dpol.datasets.synthetic import Stream, linear_regression_stream, logistic_stream

__all__ = ["DATASETS", "load_dataset", "load_randhie", "load_shuttle"]


def _need(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this data set ships with {module.split('.')[0]}: "
                          f"pip install 'dpol[{extra}]'") from exc


def load_shuttle(limit: int | None = None) -> Stream:
    """river's Statlog Shuttle (49,097 x 9, anomaly vs normal), in river's stream order.

    Examples
    --------
    >>> s = load_shuttle(limit=200)
    >>> s.X.shape, sorted(set(s.y.tolist()))
    ((200, 9), [-1.0, 1.0])
    """
    datasets = _need("river.datasets", "river")
    rows, labels = [], []
    for x, y in datasets.Shuttle():
        if limit is not None and len(rows) >= limit:
            break
        rows.append([float(x[k]) for k in sorted(x, key=lambda k: int(k[1:]))])
        labels.append(1.0 if y else -1.0)
    X, how = normalize_rows(np.array(rows))
    return Stream(X, np.array(labels), "Shuttle (river)", f"{how}; anomaly as +1")


def load_randhie(seed: object = 0) -> Stream:
    """statsmodels' RAND health insurance experiment (20,190 x 9), shuffled by seed.

    The label ``log1p(mdvis)`` (outpatient visits) is mapped onto [-1, 1]. Needs the
    ``statsmodels`` extra (without it, the error says what to install).

    Examples
    --------

    >>> try:
    ...     s = load_randhie(seed=0)
    ... except ImportError as exc:
    ...     ok = "pip install 'dpol[statsmodels]'" in str(exc)
    ... else:
    ...     ok = bool(s.X.shape == (20190, 9) and np.abs(s.y).max() <= 1
    ...               and np.linalg.norm(s.X, axis=1).max() <= 1 + 1e-12)
    >>> ok
    True
    """
    sm_data = _need("statsmodels.datasets.randhie", "statsmodels")
    frame = sm_data.load_pandas().data
    order = np.random.default_rng(seed).permutation(len(frame))
    target = np.log1p(frame["mdvis"].to_numpy(dtype=np.float64))[order]
    features = frame.drop(columns="mdvis").to_numpy(dtype=np.float64)[order]
    X, y, how = normalize_regression(features, target)
    return Stream(X, y, "RAND health insurance (statsmodels)", f"label log1p(mdvis); {how}")


def _synthetic(kind: str) -> Callable[..., Stream]:
    def build(seed: object = 0, horizon: int | None = None) -> Stream:
        n = check_int("horizon", horizon if horizon is not None else 10_000, low=1)
        if kind == "regression":
            return linear_regression_stream(n, 10, seed=seed)
        return logistic_stream(n, 10, seed=seed)
    return build


#: name -> (loader(seed, horizon), task, where it comes from)
DATASETS: dict[str, tuple[Callable[..., Stream], str, str]] = {
    "synthetic-regression": (_synthetic("regression"), "regression", "generated (seeded)"),
    "synthetic-classification": (_synthetic("classification"), "classification",
                                 "generated (seeded)"),
    "diabetes": (lambda seed=0, horizon=None: load_fallback_regression(seed), "regression",
                 "scikit-learn ('real' extra)"),
    "breast-cancer": (lambda seed=0, horizon=None: load_fallback_classification(seed),
                      "classification", "scikit-learn ('real' extra)"),
    "randhie": (lambda seed=0, horizon=None: load_randhie(seed), "regression",
                "statsmodels ('statsmodels' extra)"),
    "shuttle": (lambda seed=0, horizon=None: load_shuttle(horizon), "classification",
                "river ('river' extra)"),
}


def load_dataset(name: str, *, seed: object = 0, horizon: int | None = None) -> Stream:
    """A named stream of :data:`DATASETS`; ``horizon`` keeps its first rows.

    Examples
    --------
    >>> s = load_dataset("synthetic-classification", seed=0, horizon=50)
    >>> s.X.shape, s.name
    ((50, 10), 'synthetic logistic (d=10, 10% label noise)')
    """
    if not isinstance(name, str) or name not in DATASETS:
        raise fail("dataset", f"be one of {', '.join(DATASETS)}", name)
    stream = DATASETS[name][0](seed=seed, horizon=horizon)
    if horizon is not None and len(stream.y) > horizon:
        stream = Stream(stream.X[:horizon], stream.y[:horizon], stream.name,
                        stream.normalization, stream.truth, stream.n_clipped)
    return stream
