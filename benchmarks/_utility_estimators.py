"""dpol's scikit-learn estimators in ``benchmarks/utility.py``: the multiclass sets, and
the raw-label runs of a new user.

Binary and regression sets run the registry's learners directly (``_utility_dpol``);
two cases go through the estimators instead, because what is measured is what a user
of the estimators gets:

* **multiclass** sets (labels 0..K-1): ``OnlineClassifier(learner, epsilon=...)``, its
  own way of handling K classes (whatever the library does: the estimator, not the
  benchmark, decides how K > 2 classes are learned). Where it refuses more than two
  classes, the run records "not supported" and its message instead of a score;
* **raw labels** (``_utility_data.RAW_LABELS``): ``make_pipeline(StandardScaler(),
  OnlineRegressor(epsilon=e, random_state=s))`` on the raw features and labels, as the
  issue's new user ran it, scored on the raw held-out labels.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _utility_baselines import score
from _utility_data import DataSet


def _delta(n: int) -> float:
    return min(1e-5, 1.0 / n)


def _classifier(method: str, epsilon: float, seed: int, horizon: int, **params):
    from dpol.adapters.sklearn import OnlineClassifier

    return OnlineClassifier(method, epsilon=epsilon, delta=_delta(horizon), horizon=horizon,
                            x_bound=1.0, y_bound=1.0, random_state=seed, **params)


def run_multiclass(ds: DataSet, method: str, epsilon: float, seed: int, **params) -> dict:
    """``OnlineClassifier(method, **params)`` on a multiclass set: held out after ``fit``
    on the stream; prequential by ``partial_fit`` one row at a time on a fresh estimator
    of the same horizon and seed (each row predicted before it is learned; class 0 before
    the first row). ``unsupported`` holds the estimator's message where it refuses."""
    start = time.perf_counter()
    n = len(ds.y_train)
    y_train = ds.y_train.astype(int)
    classes = np.arange(ds.n_classes)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = _classifier(method, epsilon, seed, n, **params).fit(ds.X_train, y_train)
        except (ValueError, NotImplementedError) as err:  # "Only binary classification ..."
            return {"prequential": None, "held_out": None, "unsupported": str(err),
                    "seconds": round(time.perf_counter() - start, 3)}
        held = est.predict(ds.X_test).astype(float)
        stream = _classifier(method, epsilon, seed, n, **params)
        preq = np.zeros(n)
        try:
            for i in range(n):
                if i:
                    preq[i] = float(stream.predict(ds.X_train[i:i + 1])[0])
                stream.partial_fit(ds.X_train[i:i + 1], y_train[i:i + 1], classes=classes)
            prequential = score(ds, preq, "stream")
        except (ValueError, NotImplementedError):  # fit learns K classes, partial_fit not
            prequential = None
    return {"prequential": prequential, "held_out": score(ds, held, "test"),
            "held_out_raw": None, "n_clipped": int(getattr(est, "n_clipped_", 0)),
            "privacy": str(getattr(est, "privacy_", "")), "path": "estimator",
            "seconds": round(time.perf_counter() - start, 3),
            "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught
                                if w.category.__name__ != "NonPrivateWarning"})}


def run_raw_labels(ds: DataSet, epsilon: float, seed: int) -> dict:
    """The new user's pipeline on raw features and raw labels (module docstring): held-out
    score in the label's units (``prequential``: None, the pipeline fits once). Where the
    regressor refuses labels beyond its y_bound, the user declares the range its error
    names (``refused`` keeps the error) and fits again."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from dpol._clip_warning import suggested_range
    from dpol.adapters.sklearn import OnlineRegressor
    from dpol.errors import InvalidInputError

    start = time.perf_counter()
    refused = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = make_pipeline(StandardScaler(), OnlineRegressor(epsilon=epsilon,
                                                                    random_state=seed))
            model.fit(ds.X_raw_train, ds.raw_train)
        except InvalidInputError as err:  # labels beyond y_bound: do as the error says
            refused = str(err)[:200]
            bound = suggested_range(ds.raw_train)  # the range (lo, hi) the error names
            model = make_pipeline(StandardScaler(), OnlineRegressor(
                epsilon=epsilon, random_state=seed, y_bound=bound))
            model.fit(ds.X_raw_train, ds.raw_train)
        raw = model.predict(ds.X_raw_test)
    # score() takes predictions in the scale the methods see
    held = score(ds, (np.asarray(raw, dtype=float) - ds.offset) / ds.scale, "test")
    return {"prequential": None, "held_out": held, "refused": refused,
            "seconds": round(time.perf_counter() - start, 3),
            "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:200]}"
                                for w in caught})}
