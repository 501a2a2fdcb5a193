"""Scores and the non-dpol methods of ``benchmarks/utility.py``.

Each method returns predictions in the scale the methods see (margins for
classification, scaled labels for regression): ``prequential`` (the prediction for each
stream row made before learning it; None for offline models) and ``held_out`` (the final
model on the held-out rows). :func:`score` turns them into accuracy, or MSE and R^2 in
the label's own units.
"""

from __future__ import annotations

import warnings

import numpy as np
from _utility_data import DataSet


def labels(margins: np.ndarray) -> np.ndarray:
    """+1 where the margin is positive, else -1 (dpol's adapters' rule)."""
    return np.where(np.asarray(margins) > 0, 1.0, -1.0)


def score(ds: DataSet, predictions: np.ndarray, part: str) -> dict[str, float]:
    """Accuracy (classification) or MSE and R^2 (regression, in the label's units) of
    ``predictions`` on the stream (``part="stream"``) or the held-out rows (``"test"``)."""
    if ds.task == "classification":
        truth = ds.y_train if part == "stream" else ds.y_test
        return {"accuracy": float(np.mean(labels(predictions) == truth))}
    truth = ds.raw_train if part == "stream" else ds.raw_test
    mse = float(np.mean((ds.to_units(predictions) - truth) ** 2))
    var = float(np.var(truth))
    return {"mse": mse, "r2": 1.0 - mse / var if var > 0 else float("nan")}


def trivial(ds: DataSet) -> dict[str, np.ndarray]:
    """The majority class of the stream, or its mean (0 after centring; predict 0 on the
    synthetic stream), as a constant prediction."""
    if ds.task == "classification":
        value = 1.0 if np.mean(ds.y_train > 0) >= 0.5 else -1.0
    else:
        value = 0.0
    return {"prequential": np.full(len(ds.y_train), value),
            "held_out": np.full(len(ds.y_test), value)}


def river_online(ds: DataSet) -> dict[str, np.ndarray]:
    """river's LogisticRegression / LinearRegression (defaults) with progressive validation."""
    from river import linear_model

    classify = ds.task == "classification"
    model = linear_model.LogisticRegression() if classify else linear_model.LinearRegression()

    def predict(x: dict) -> float:
        if classify:
            return model.predict_proba_one(x).get(True, 0.5) - 0.5
        return model.predict_one(x)

    preq = np.empty(len(ds.y_train))
    for i, (row, y) in enumerate(zip(ds.X_train, ds.y_train, strict=True)):
        x = dict(enumerate(row.tolist()))
        preq[i] = predict(x)
        model.learn_one(x, bool(y > 0) if classify else float(y))
    held = np.array([predict(dict(enumerate(row.tolist()))) for row in ds.X_test])
    return {"prequential": preq, "held_out": held}


def sklearn_online(ds: DataSet) -> dict[str, np.ndarray]:
    """scikit-learn's SGDClassifier (log loss) / SGDRegressor (defaults), ``partial_fit``
    one row at a time, each row predicted before it is learned (0 before the first)."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    classify = ds.task == "classification"
    model = SGDClassifier(loss="log_loss", random_state=0) if classify else \
        SGDRegressor(random_state=0)
    preq = np.zeros(len(ds.y_train))
    fitted = False
    for i, (row, y) in enumerate(zip(ds.X_train, ds.y_train, strict=True)):
        if fitted:  # the decision function, without predict's validation per row
            preq[i] = float(row @ model.coef_.ravel() + model.intercept_[0])
        if classify:
            model.partial_fit(row[None, :], [y], classes=[-1.0, 1.0])
        else:
            model.partial_fit(row[None, :], [y])
        fitted = True
    held = ds.X_test @ model.coef_.ravel() + model.intercept_[0]
    return {"prequential": preq, "held_out": held}


def diffprivlib_version() -> str | None:
    """diffprivlib's version, or None when it cannot be imported here."""
    try:
        import diffprivlib
        from diffprivlib.models import LinearRegression, LogisticRegression  # noqa: F401
    except Exception:  # ImportError, or scikit-learn >= 1.7 (sklearn.tree._tree.DOUBLE)
        return None
    return diffprivlib.__version__


def diffprivlib_offline(ds: DataSet, epsilon: float, seed: int) -> dict[str, np.ndarray]:
    """diffprivlib's offline private model at ``epsilon`` with the declared bounds.

    LogisticRegression(data_norm=1): ||x|| <= 1, rows beyond clipped by diffprivlib;
    LinearRegression(bounds_X=(-1, 1), bounds_y=(-1, 1)): the box that the ball
    ||x|| <= 1 lies in, and |y| <= 1. Both keep diffprivlib's defaults otherwise (an
    intercept, whose privacy diffprivlib accounts for). Pure epsilon-DP (delta = 0).
    """
    from diffprivlib.models import LinearRegression, LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. its compatibility notes on sklearn options
        if ds.task == "classification":
            model = LogisticRegression(epsilon=epsilon, data_norm=1.0, random_state=seed)
            model.fit(ds.X_train, ds.y_train)
            held = model.decision_function(ds.X_test)
        else:
            model = LinearRegression(epsilon=epsilon, bounds_X=(-1.0, 1.0),
                                     bounds_y=(-1.0, 1.0), random_state=seed)
            model.fit(ds.X_train, ds.y_train)
            held = model.predict(ds.X_test)
    return {"prequential": None, "held_out": np.asarray(held, dtype=float).ravel()}
