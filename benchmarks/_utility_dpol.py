"""dpol's learners in ``benchmarks/utility.py``: built as the adapters build them, run
over a stream with prequential predictions, and the adapters' agreement checked."""

from __future__ import annotations

import dataclasses
import inspect
import time
import warnings

import numpy as np
from _utility_baselines import score

from dpol.adapters.registry import (
    GIGA_LOGISTIC_ALPHA,
    LEARNERS,
    logistic_options,
    make_learner,
)
from dpol.errors import NonPrivateWarning
from dpol.learners.random_features import N_RANDOM_FEATURES
from dpol.losses import HingeLoss, Regularized

CHECK_ROWS = 200


def _adapter(task: str):
    from dpol.adapters.sklearn import OnlineClassifier, OnlineRegressor

    return OnlineRegressor() if task == "regression" else OnlineClassifier()


#: the tasks of the benchmark's data sets (multiclass: labels 0..K-1)
TASKS = ("classification", "multiclass", "regression")


def default_learners() -> dict[str, str]:
    """The default learner of each task: what ``OnlineClassifier()`` / ``OnlineRegressor()``
    use (the classifier's for multiclass)."""
    return {task: _adapter(task).learner for task in TASKS}


def adapter_defaults(task: str) -> dict:
    """The adapters' defaults for the ``make_learner`` keywords they pass on (intercept,
    post-processing, ...), so every learner is built as a user of the adapters gets it."""
    params = _adapter(task).get_params()
    takes = inspect.signature(make_learner).parameters
    return {k: params[k] for k in ("fit_intercept", "intercept_scaling", "postprocess",
                                   "calibration", "counter", "bandwidth")
            if k in params and k in takes}


def _logistic_options(dim: int) -> dict:
    """The registry's logistic loss and domain (those of a classification learner that
    takes a loss and a domain), for the learners registered with a ridge loss."""
    for spec in LEARNERS.values():
        kw = spec.defaults(dim, 1.0, 1.0)
        if spec.task == "classification" and {"loss", "domain"} <= set(kw):
            return {"loss": kw["loss"], "domain": kw["domain"]}
    raise RuntimeError("no classification learner of the registry takes a loss and domain")


def _giga_logistic_options(dim: int) -> dict:
    """The registry's logistic loss and domain for GIGA (its own alpha: a short warm-up)."""
    return logistic_options(dim, 1.0, GIGA_LOGISTIC_ALPHA)


def _hinge_options(dim: int) -> dict:
    """The hinge loss with the logistic entries' regularisation and domain."""
    logistic = _logistic_options(dim)
    return {"loss": Regularized(HingeLoss(x_bound=1.0), logistic["loss"].alpha),
            "domain": logistic["domain"]}


#: learners registered for regression that also fit a classification loss
CLASSIFICATION_VARIANTS = {"giga+logistic": ("giga", _giga_logistic_options),
                           "ftal+logistic": ("ftal", _logistic_options),
                           "ftal+hinge": ("ftal", _hinge_options)}


#: suffix of the methods that run a linear learner on random Fourier features alone
RFF = "+rff"
#: the linear model of each task whose ``+rff`` row the report shows (the default
#: classifier runs it on x beside the features)
LINEAR_LEARNERS = {"classification": "ridge-classifier", "regression": "ridge"}


def learner_methods(task: str) -> dict[str, tuple[str, object]]:
    """method name -> (registry name, options(dim) or None) of the dpol learners for a task:
    the registry's, the classification variants, and the linear model of ``LINEAR_LEARNERS`` on
    ``N_RANDOM_FEATURES`` random Fourier features (``random_features=``, the adapters'
    bandwidth), the features alone. Multiclass: the default classifier alone, run through
    ``OnlineClassifier`` (``_utility_estimators``)."""
    if task == "multiclass":
        default = _adapter(task).learner
        return {default: (default, None)}
    methods = {name: (name, None) for name, spec in LEARNERS.items() if spec.task == task}
    if task == "classification":
        methods.update({k: v for k, v in CLASSIFICATION_VARIANTS.items() if v[0] in LEARNERS})
    linear = LINEAR_LEARNERS[task]
    methods[linear + RFF] = (linear, None)
    return methods


def delta_for(n: int) -> float:
    """delta = min(1e-5, 1/n) for a stream of n rows."""
    return min(1e-5, 1.0 / n)


class _Centred:
    """A regression learner centred as ``OnlineRegressor`` centres it: the labels' mean b
    released by the adapters' ``prepare`` (a share of the budget), the learner on y - b,
    predictions b + its own within [-1, 1]; ``privacy`` composes both."""

    def __init__(self, ds, name: str, epsilon: float, seed: int, n: int, build) -> None:
        from dpol._seeding import spawn_seeds
        from dpol.adapters._private_prep import prepare

        learner_seed, centre_seed = spawn_seeds(seed, 2)  # as the estimator splits it
        est = _adapter("regression").set_params(learner=name, epsilon=epsilon,
                                                delta=delta_for(n))
        self.prep = prepare(est, ds.X_train, ds.y_train, regression=True, centred=True,
                            horizon=n, seed=centre_seed)
        self.learner = build(self.prep.epsilon, learner_seed, self.prep.y_bound)
        self.epsilon = epsilon

    def _out(self, p):
        return self.prep.uncentre(np.asarray(p, dtype=float))  # the estimator's read-out

    def run(self, X, y):
        trace = self.learner.run(X, self.prep.transform_y(y))
        return dataclasses.replace(
            trace, weights=np.full_like(trace.weights, np.nan),  # not x . w: "model" path
            model_predictions=None if trace.model_predictions is None
            else self._out(trace.model_predictions), predictions=self._out(trace.predictions))

    def learn_one(self, x, y):
        self.learner.learn_one(x, float(self.prep.transform_y(np.array([y]))[0]))

    def predict_one(self, x, raw: bool = False):
        return float(self._out(self.learner.predict_one(x, raw=raw)))

    @property
    def weights(self):
        return self.learner.weights

    @property
    def n_clipped_(self):
        return self.learner.n_clipped_

    @property
    def privacy(self):
        return self.prep.guarantee(self.learner, self.epsilon)


def with_default_fallback(ds, method: str, epsilon: float, seed: int, n: int,
                          fallback: object = "auto", shares: tuple | None = None,
                          significance: float | None = None,
                          random_features: int | None = None, gate_from: int | None = None,
                          learner_from: int | None = None, threshold: float | None = None):
    """The classifier's learner inside the trivial fallback as ``OnlineClassifier`` builds
    it by default (its seeds, its budget split; ``shares``: the prior's and the gate's
    budget, ``significance``: the coin-flip rule's, default the library's;
    ``random_features``: the learner's, default its entry's plan; ``gate_from``: the
    gate's first row, ``learner_from`` the learner's, ``threshold`` the gate's, default
    the library's);
    ``fallback=False``: the learner alone, seeded as the estimator seeds it."""
    from dpol._seeding import spawn_seeds
    from dpol.adapters._fallback import with_fallback

    learner_seed, _, fallback_seed = spawn_seeds(seed, 3)  # as the estimator splits it
    learner = with_fallback(lambda e, s: _make(ds, method, e, s, n, 1.0, random_features),
                            fallback=fallback, epsilon=epsilon, delta=delta_for(n),
                            horizon=n, seed=fallback_seed, learner_seed=learner_seed,
                            shares=shares, significance=significance, threshold=threshold,
                            gate_from=gate_from, learner_from=learner_from)
    return learner


def _build(ds, method: str, epsilon: float, seed: int, n: int):
    name = learner_methods(ds.task)[method][0]
    if ds.task == "regression" and method == default_learners()["regression"]:
        return _Centred(ds, name, epsilon, seed, n,
                        lambda eps, s, yb: _make(ds, method, eps, s, n, yb))
    if ds.task == "classification" and method == default_learners()["classification"]:
        return with_default_fallback(ds, method, epsilon, seed, n)  # as OnlineClassifier
    return _make(ds, method, epsilon, seed, n, 1.0)


def _make(ds, method: str, epsilon: float, seed: object, n: int, y_bound: float,
          random_features: int | None = None):
    name, options = learner_methods(ds.task)[method]
    extra = adapter_defaults(ds.task)
    if method.endswith(RFF) or random_features is not None:
        extra["random_features"] = random_features or N_RANDOM_FEATURES
    if not getattr(LEARNERS[name], "linear", True):  # as the adapters: no intercept
        extra.pop("fit_intercept", None)
    # with an intercept the learner inside has one more coordinate (make_learner's doc)
    inner = extra.get("random_features", ds.dim) + int(bool(extra.get("fit_intercept", False)))
    options = {} if options is None else options(inner)
    if ds.task == "multiclass":  # one-hot rows on one Gram matrix, as OnlineClassifier
        options["outputs"] = ds.n_classes
    return make_learner(name, ds.dim, horizon=n, epsilon=epsilon, delta=delta_for(n),
                        x_bound=1.0, y_bound=y_bound, seed=seed, options=options or None,
                        **extra)


def _loop(learner, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(len(y))
    for i in range(len(y)):
        out[i] = learner.predict_one(X[i])
        learner.learn_one(X[i], y[i])
    return out


#: how each (data set, method) gets its prequential predictions from ``run``
_PATHS: dict[tuple[str, str], str] = {}


def _from_trace(path: str, trace, X: np.ndarray) -> np.ndarray | None:
    """Prequential predictions read off a ``Trace``: the released iterates applied to the
    rows as given ("weights": ``predict_one`` of a linear model that predicts with its
    last release), or the trace's ``model_predictions`` / ``predictions`` fields."""
    if path == "weights":
        return np.einsum("ij,ij->i", X, trace.weights) if trace.weights.shape == X.shape \
            else None
    return getattr(trace, {"model": "model_predictions", "trace": "predictions"}[path], None)


def _agree(a: np.ndarray | None, b: np.ndarray) -> bool:
    return a is not None and bool(np.allclose(a, b, rtol=1e-9, atol=1e-9))


def prequential_path(ds, method: str) -> str:
    """The first of "weights", "model", "trace" whose predictions equal the
    ``predict_one`` / ``learn_one`` loop on a 200-row prefix (same seed), else "loop".
    A prefix whose predictions are all 0 (a warm-up) proves nothing: then only "weights",
    which ``run_dpol`` checks again on the final model."""
    key = (ds.name, method)
    if key not in _PATHS:
        n = min(CHECK_ROWS, len(ds.y_train))
        X, y = ds.X_train[:n], ds.y_train[:n]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            looped = _loop(_build(ds, method, 1.0, 0, n), X, y)
            trace = _build(ds, method, 1.0, 0, n).run(X, y)
        paths = ("weights", "model", "trace") if np.any(looped != 0) else ("weights",)
        _PATHS[key] = next((p for p in paths if _agree(_from_trace(p, trace, X), looped)),
                           "loop")
    return _PATHS[key]


def _raw_predictions(learner, X: np.ndarray) -> np.ndarray | None:
    """The last release's predictions (``predict_one(x, raw=True)``), where the learner
    tells them apart from its post-processed model; else None."""
    try:
        return np.array([learner.predict_one(x, raw=True) for x in X])
    except TypeError:  # no ``raw`` keyword: predict_one is the last release
        return None


def run_dpol(ds, method: str, epsilon: float, seed: int) -> dict:
    """One dpol learner on the stream: prequential and held-out predictions and scores."""
    first = prequential_path(ds, method)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for path in dict.fromkeys((first, "loop")):
            learner = _build(ds, method, epsilon, seed, len(ds.y_train))
            if path == "loop":
                preq = _loop(learner, ds.X_train, ds.y_train)
            else:
                preq = _from_trace(path, learner.run(ds.X_train, ds.y_train), ds.X_train)
            held = np.array([learner.predict_one(x) for x in ds.X_test])
            raw = _raw_predictions(learner, ds.X_test)
            # a prefix can miss what predict_one adds later (e.g. after GIGA's warm-up)
            if path != "weights" or _agree(ds.X_test @ learner.weights, held):
                break
    return {"prequential": score(ds, preq, "stream"), "held_out": score(ds, held, "test"),
            "held_out_raw": None if raw is None else score(ds, raw, "test"),
            "n_clipped": int(learner.n_clipped_), "privacy": str(learner.privacy),
            "path": path, "seconds": round(time.perf_counter() - start, 3),
            "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught
                                # the twins' expected notice
                                if not issubclass(w.category, NonPrivateWarning)})}


def adapter_check(ds, method: str) -> dict:
    """The default learner through its scikit-learn adapter (epsilon 1, seed 0): does the
    adapter's final model predict what ``predict_one`` of the same learner predicts?"""
    from dpol.adapters.sklearn import OnlineClassifier, OnlineRegressor

    n = len(ds.y_train)
    cls = OnlineClassifier if ds.task == "classification" else OnlineRegressor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(method, epsilon=1.0, delta=delta_for(n), x_bound=1.0, y_bound=1.0,
                  random_state=0).fit(ds.X_train, ds.y_train)
        learner = _build(ds, method, 1.0, 0, n)
        learner.run(ds.X_train, ds.y_train)
        ours = np.array([learner.predict_one(x) for x in ds.X_test])
        theirs = est.decision_function(ds.X_test) if ds.task == "classification" \
            else est.predict(ds.X_test)
    diff = float(np.max(np.abs(ours - theirs))) if len(ours) else 0.0
    return {"method": method, "max_abs_difference": diff, "agrees": diff <= 1e-9}
