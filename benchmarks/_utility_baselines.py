"""Scores and the non-dpol methods of ``benchmarks/utility.py``.

Each method returns predictions in the scale the methods see (margins for
classification, class indices for multiclass, scaled labels for regression):
``prequential`` (the prediction for each stream row made before learning it; None for
offline models) and ``held_out`` (the final model on the held-out rows). :func:`score`
turns them into accuracy, or MSE and R^2 in the label's own units.
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
    if ds.task != "regression":
        truth = ds.y_train if part == "stream" else ds.y_test
        guess = labels(predictions) if ds.task == "classification" else predictions
        return {"accuracy": float(np.mean(np.asarray(guess, dtype=float) == truth))}
    truth = ds.raw_train if part == "stream" else ds.raw_test
    mse = float(np.mean((ds.to_units(predictions) - truth) ** 2))
    var = float(np.var(truth))
    return {"mse": mse, "r2": 1.0 - mse / var if var > 0 else float("nan")}


def majority(ds: DataSet) -> float:
    """The stream's majority class (+-1, or the lowest class index among the most
    frequent)."""
    if ds.task == "classification":
        return 1.0 if np.mean(ds.y_train > 0) >= 0.5 else -1.0
    return float(np.argmax(np.bincount(ds.y_train.astype(int), minlength=ds.n_classes)))


def trivial(ds: DataSet) -> dict[str, np.ndarray]:
    """The majority class of the stream, or its mean (0 after centring; predict 0 on the
    synthetic stream), as a constant prediction."""
    value = 0.0 if ds.task == "regression" else majority(ds)
    return {"prequential": np.full(len(ds.y_train), value),
            "held_out": np.full(len(ds.y_test), value)}


def trivial_standard_error(ds: DataSet, held: dict[str, float]) -> dict[str, float]:
    """Standard error of the trivial model's held-out score, T1's tolerance.

    A held-out score is a mean over the n held-out rows of a per-row term, treated as n
    independent draws; the standard error of such a mean is the terms' standard
    deviation over sqrt(n). Accuracy: the terms are 0/1 with mean p, so
    sqrt(p (1 - p) / n). Regression: the trivial model predicts a constant c (the
    training mean), its MSE is the mean of e_i = (y_i - c)^2, so SE(MSE) = sd(e) /
    sqrt(n); R^2 = 1 - MSE / v with v the held-out labels' variance, the same
    denominator for every method scored on these rows (so that R^2 orders methods as
    the MSE does), hence SE(R^2) = SE(MSE) / v. (For Gaussian labels and c near their
    mean, sd(e) = sqrt(2) sigma^2 and SE(R^2) = sqrt(2 / n).)
    """
    n = len(ds.y_test)
    if ds.task != "regression":
        p = held["accuracy"]
        return {"accuracy_se": float(np.sqrt(p * (1.0 - p) / n))}
    errors = (ds.raw_test - ds.to_units(np.zeros(n))) ** 2
    se = float(np.std(errors, ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    var = float(np.var(ds.raw_test))
    return {"mse_se": se, "r2_se": se / var if var > 0 else float("nan")}


def river_online(ds: DataSet) -> dict[str, np.ndarray]:
    """river's LogisticRegression / LinearRegression (defaults) with progressive
    validation; multiclass: ``OneVsRestClassifier(LogisticRegression())``."""
    from river import linear_model, multiclass

    classify = ds.task == "classification"
    if ds.task == "multiclass":
        model = multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    else:
        model = linear_model.LogisticRegression() if classify else \
            linear_model.LinearRegression()

    def predict(x: dict) -> float:
        if classify:
            return model.predict_proba_one(x).get(True, 0.5) - 0.5
        if ds.task == "multiclass":  # None before the first row: class 0
            return float(model.predict_one(x) or 0)
        return model.predict_one(x)

    def target(y: float) -> object:
        return bool(y > 0) if classify else (int(y) if ds.task == "multiclass" else float(y))

    preq = np.empty(len(ds.y_train))
    for i, (row, y) in enumerate(zip(ds.X_train, ds.y_train, strict=True)):
        x = dict(enumerate(row.tolist()))
        preq[i] = predict(x)
        model.learn_one(x, target(y))
    held = np.array([predict(dict(enumerate(row.tolist()))) for row in ds.X_test])
    return {"prequential": preq, "held_out": held}


def sklearn_online(ds: DataSet) -> dict[str, np.ndarray]:
    """scikit-learn's SGDClassifier (log loss; one-vs-rest on multiclass) / SGDRegressor
    (defaults), ``partial_fit`` one row at a time, each row predicted before it is
    learned (0 before the first)."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    classify = ds.task != "regression"
    classes = [-1.0, 1.0] if ds.task == "classification" else \
        [float(k) for k in range(ds.n_classes)]
    model = SGDClassifier(loss="log_loss", random_state=0) if classify else \
        SGDRegressor(random_state=0)

    def decide(X: np.ndarray) -> np.ndarray:
        """The decision function, without predict's validation per row; multiclass: the
        class of the largest one-vs-rest margin."""
        if ds.task != "multiclass":
            return X @ model.coef_.ravel() + model.intercept_[0]
        return np.asarray(classes)[np.argmax(X @ model.coef_.T + model.intercept_, axis=1)]

    preq = np.zeros(len(ds.y_train))
    fitted = False
    for i, (row, y) in enumerate(zip(ds.X_train, ds.y_train, strict=True)):
        if fitted:
            preq[i] = float(decide(row[None, :])[0])
        if classify:
            model.partial_fit(row[None, :], [y], classes=classes)
        else:
            model.partial_fit(row[None, :], [y])
        fitted = True
    return {"prequential": preq, "held_out": decide(ds.X_test)}


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

    LogisticRegression(data_norm=1): ||x|| <= 1, rows beyond clipped by diffprivlib
    (multiclass: one-vs-rest, its only scheme, each of the K models at epsilon / K);
    LinearRegression(bounds_X=(-1, 1), bounds_y=(-1, 1)): the box that the ball
    ||x|| <= 1 lies in, and |y| <= 1. Both keep diffprivlib's defaults otherwise (an
    intercept, whose privacy diffprivlib accounts for). Pure epsilon-DP (delta = 0).
    """
    from diffprivlib.models import LinearRegression, LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. its compatibility notes on sklearn options
        if ds.task != "regression":
            model = LogisticRegression(epsilon=epsilon, data_norm=1.0, random_state=seed)
            model.fit(ds.X_train, ds.y_train)
            held = model.decision_function(ds.X_test) if ds.task == "classification" \
                else model.predict(ds.X_test)
        else:
            model = LinearRegression(epsilon=epsilon, bounds_X=(-1.0, 1.0),
                                     bounds_y=(-1.0, 1.0), random_state=seed)
            model.fit(ds.X_train, ds.y_train)
            held = model.predict(ds.X_test)
    return {"prequential": None, "held_out": np.asarray(held, dtype=float).ravel()}
