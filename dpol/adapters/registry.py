"""Learners by name, with default arguments for a generic stream (layer L5).

``dpol run`` and the scikit-learn and river adapters build their learners here. Each entry
fixes what a generic regression or classification stream with ``||x|| <= x_bound`` and ``|y| <=
y_bound`` needs (loss, constraint set, regularisation), the counter it uses (or none: output
perturbation), and the loss and set its regret refers to. Any constructor keyword can be
overridden through ``options``; ``fit_intercept`` wraps a linear learner in
:class:`~dpol.learners.intercept.WithIntercept` (the adapters do, by default). The bandit
learners (ask/tell, one scalar loss per round) take no (x, y) stream and are not listed.

The adapters' default learners, :data:`DEFAULT_LEARNERS`, are ``ridge_classifier`` and
``ridge``: PQFTL (JKT Alg. 4) with alpha = 0.01 (0.001 for ``ridge``) and its noise
ridge, BLT-released sums, an intercept and the averaged releases; they beat the majority
class or the training mean on every tuning set measured, and the former defaults, IGD
and POL by far on the small sets (figures: docs/benchmarks/defaults.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpol._validation import check_choice, check_int, check_name, check_real, fail
from dpol.accounting.mechanism import Mechanism, merge_mechanism
from dpol.adapters._comparator import comparator, zero_point
from dpol.learners import (
    OnlineLearner,
    PrivateFTAL,
    PrivateFTRL,
    PrivateGIGA,
    PrivateIGD,
    PrivateIncrementalERM,
    PrivateIncrementalRegression,
    PrivateKernelRegression,
    PrivateOfflineLearner,
    PrivateOnlineFrankWolfe,
    PrivateQuadraticFTL,
)
from dpol.learners.intercept import INTERCEPT_SCALING, WithIntercept
from dpol.learners.postprocess import POSTPROCESSINGS
from dpol.learners.random_features import BANDWIDTH, N_RANDOM_FEATURES, WithRandomFeatures
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

__all__ = ["DEFAULT_LEARNERS", "FEATURES_FROM_HORIZON", "FEATURE_NEIGHBOURS",
           "GIGA_LOGISTIC_ALPHA", "LEARNERS", "LEARNER_ALIASES", "LearnerSpec",
           "check_features", "check_regression_learner", "comparator", "learner_name",
           "logistic_options", "make_learner", "uses_features", "zero_point"]

#: regularisation of the logistic learners and the ball that holds their optimum
LOGISTIC_ALPHA = 0.01
#: regularisation of GIGA with the logistic loss (:func:`logistic_options`). JKT Alg. 3's warm-up,
#: t_q = ceil(2 beta^2 / alpha^2) + 1 data-independent steps (beta = 1/4 + alpha, the smoothness),
#: is what its sensitivity proof needs (the gradient step contracts by (t - 1)/t only from there),
#: and its noise scales as 1/alpha: at LOGISTIC_ALPHA, 1,353 steps, longer than Phishing's and
#: breast cancer's streams (held-out at the majority class, 0.572 / 0.649). Measured held-out at
#: epsilon = 1 (5 seeds, with an intercept, ``benchmarks/utility.py``'s preprocessing), alpha =
#: 0.01 / 0.1 / 0.3 / 1 / 3 (t_q 1353 / 26 / 8 / 5 / 4): Phishing 0.43 / 0.79 / 0.83 / 0.85 / 0.86,
#: breast cancer 0.65 / 0.76 / 0.84 / 0.87 / 0.90, Shuttle 0.997 / 0.978 / 0.978 / 0.978 / 0.978
#: (majority 0.933), the synthetic logistic stream 0.890 / 0.892 / 0.892 / 0.893 / 0.893. alpha =
#: 1, as GIGA's ridge entry, gains 0.04-0.22 on the small sets over 0.1 and costs Shuttle 0.019
#: against 0.01, which larger alphas do not recover
GIGA_LOGISTIC_ALPHA = 1.0
#: ridge of the ``ridge`` entries. With an intercept, alpha = 1 over-shrinks the features against
#: the constant feature: held-out at epsilon = 1, alpha = 1 / 0.01, Shuttle 0.978 / 0.997, breast
#: cancer 0.905 / 0.911, Phishing 0.840 / 0.838; diabetes at epsilon = 10 R^2 0.082 / 0.252 (0.1
#: lay between them on each)
RIDGE_ALPHA = 0.01
#: ridge of the ``ridge`` regressor. Held-out MSE (5 seeds, utility.py's tuning sets) at
#: alpha = 0.01 / 0.001 / 0.0001, epsilon = 1: synthetic regression 0.00199 / 0.00041 /
#: 0.00032 (twin 0.00112 / 0.00011 / 0.00010; least squares 0.0001), TrumpApproval 1.409 /
#: 1.389 / 1.387, diabetes 4875 / 4871 / 4870, RAND HIE 0.638 / 0.634 / 0.633; at 0.1 as
#: good or better. The classifiers keep 0.01 (synthetic logistic 0.890 / 0.888 / 0.888);
#: not 0.0001: its gains are within the seeds' spread, its twin loses on diabetes
REGRESSION_RIDGE_ALPHA = 0.001
#: PQFTL's solves_per_doubling for ``ridge*``: its figures in docs/benchmarks/performance.md
RIDGE_SOLVES_PER_DOUBLING = 32
#: an entry's random ``features`` are its default from this horizon on; on a shorter stream it
#: learns on x alone. Their D more coordinates of noise cost more than the kernel gains there:
#: on the tuning sets below 1,000 rows x alone scores as well or better on average (within
#: 0.5 points at epsilon 0.1), wine (142 rows, 3 classes) 60.2 against 48.9 held out at
#: epsilon 1, and only Bananas (4,240 rows) needs the kernel
FEATURES_FROM_HORIZON = 2000
#: and only where a row expects this many others within the kernel's bandwidth b (horizon
#: x b^d, b in units of x_bound): in more dimensions the kernel sees every row as far. On
#: the tuning sets of 2,000 rows or more x alone scores as well or better from d = 9
#: (Shuttle 0.02 neighbours, the synthetic logistic stream 0.01), the kernel wins at d = 2
#: (Bananas, 170) (30 seeds: docs/benchmarks/defaults.md, ``benchmarks/feature_plan.py``)
FEATURE_NEIGHBOURS = 1.0


@dataclass(frozen=True)
class LearnerSpec:
    """One named learner: its class, task, defaults and the counter it uses.

    Attributes
    ----------
    name, summary : str
    cls : type
        The :class:`~dpol.learners.OnlineLearner` subclass.
    task : {"regression", "classification"}
        Classification learners take labels +-1 and predict sign(x . w).
    counter : str or None
        The default counter (a name of ``dpol.counters.COUNTER_NAMES``), or None when
        the learner adds its noise without a counter.
    defaults : callable (dim, x_bound, y_bound) -> dict
        Constructor keywords for a generic stream.
    linear : bool
        Whether it fits a linear model x . w (then ``fit_intercept`` can wrap it).
    features : (D, c) or None
        Random Fourier features it runs on by default, beside x weighted c
        (:class:`~dpol.learners.random_features.WithRandomFeatures`), where
        :func:`uses_features` (x alone elsewhere).

    Examples
    --------
    >>> spec = LEARNERS["ftal"]
    >>> spec.cls.__name__, spec.task, spec.counter
    ('PrivateFTAL', 'regression', 'window_tree')
    >>> sorted(name for name, s in LEARNERS.items() if s.counter is None)  # no counter
    ['giga', 'igd', 'incremental_erm', 'kernel', 'pol']
    """

    name: str
    summary: str
    cls: type
    task: str
    counter: str | None
    defaults: Callable[[int, float, float], dict]
    linear: bool = True
    #: the counter under ``calibration="paper"`` where ``counter`` has no published formula
    paper_counter: str | None = None
    features: tuple[int, float] | None = None

    def counter_for(self, calibration: str) -> str | None:
        """The counter this learner sums with by default under ``calibration``.

        >>> LEARNERS["ridge"].counter_for("tight"), LEARNERS["ridge"].counter_for("paper")
        ('blt', 'binary_tree')
        """
        if calibration == "paper" and self.paper_counter is not None:
            return self.paper_counter
        return self.counter


def logistic_options(dim: int, x_bound: float = 1.0, alpha: float = LOGISTIC_ALPHA) -> dict:
    """The regularised logistic loss and the ball of radius sqrt(2 ln 2 / alpha), which
    holds its optimum (docs/errata.md, JKT-7): ``options`` for a learner registered with
    another loss (GIGA: ``alpha=GIGA_LOGISTIC_ALPHA``).

    >>> logistic_options(2, alpha=GIGA_LOGISTIC_ALPHA)["loss"].alpha
    1.0
    """
    radius = math.sqrt(2.0 * math.log(2.0) / alpha)
    return {"loss": Regularized(LogisticLoss(x_bound=x_bound), alpha),
            "domain": L2Ball(dim, radius)}


def _ridge(alpha: float) -> Callable[[int, float, float], dict]:
    def defaults(dim: int, xb: float, yb: float) -> dict:
        return {"loss": Regularized(SquaredLoss(x_bound=xb, y_bound=yb), alpha),
                "domain": L2Ball(dim, 1.0)}
    return defaults


def _tuned_ridge(alpha: float) -> Callable[[int, float, float], dict]:
    def defaults(dim: int, xb: float, yb: float) -> dict:
        return {"alpha": alpha, "noise_ridge": True, "bound": xb, "y_bound": yb,
                "counter": "blt", "solves_per_doubling": RIDGE_SOLVES_PER_DOUBLING}
    return defaults


#: every learner by its name on the command line and in the adapters, with its defaults
LEARNERS: dict[str, LearnerSpec] = {spec.name: spec for spec in (
    LearnerSpec("pqftl", "JKT Alg. 4: private follow-the-leader, ridge alpha=1 (tree sums)",
                PrivateQuadraticFTL, "regression", "binary_tree",
                lambda d, xb, yb: {"alpha": 1.0, "bound": xb, "y_bound": yb}),
    LearnerSpec("igd", "JKT Alg. 2: private implicit gradient descent, logistic, alpha=0.01",
                PrivateIGD, "classification", None,
                lambda d, xb, _yb: logistic_options(d, xb)),
    LearnerSpec("giga", "JKT Alg. 3: private GIGA, ridge alpha=1 on the unit ball",
                PrivateGIGA, "regression", None, _ridge(1.0)),
    LearnerSpec("ftal", "WDP-COCOP: private FTAL, ridge alpha=0.5, window W = T",
                PrivateFTAL, "regression", "window_tree", _ridge(0.5)),
    LearnerSpec("ftrl", "DP-FTRL (Kairouz et al. 2021): private FTRL with lazy projection, "
                "least squares on the unit ball (BLT sums; epochs= for several passes)",
                PrivateFTRL, "regression", "blt",
                lambda d, xb, yb: {"loss": SquaredLoss(x_bound=xb, y_bound=yb),
                                   "domain": L2Ball(d, 1.0)}),
    LearnerSpec("online_frank_wolfe", "WDP-COCOL: private online Frank-Wolfe, ridge alpha=1, "
                "W = T", PrivateOnlineFrankWolfe, "regression", "window_tree", _ridge(1.0)),
    LearnerSpec("incremental_regression", "KNJ PrivIncReg1: tree sums + noisy projected "
                "gradient, least squares on the unit ball", PrivateIncrementalRegression,
                "regression", "binary_tree", lambda d, xb, yb: {"domain": L2Ball(d, 1.0),
                                                          "x_bound": xb, "y_bound": yb}),
    LearnerSpec("incremental_erm", "KNJ Mechanism 1: private batch ERM every tau steps, "
                "least squares on the unit ball", PrivateIncrementalERM, "regression", None,
                lambda d, xb, yb: {"loss": SquaredLoss(x_bound=xb, y_bound=yb),
                                   "domain": L2Ball(d, 1.0)}),
    LearnerSpec("kernel", "NW: private kernel regression, 64 Gaussian random features",
                PrivateKernelRegression, "regression", None,
                lambda d, xb, yb: {"n_features": 64, "x_bound": xb, "y_bound": yb},
                linear=False),
    LearnerSpec("pol", "JKT Alg. 6: private offline learner (one release at the horizon), "
                "logistic", PrivateOfflineLearner, "classification", None,
                lambda d, xb, yb: {"loss": LogisticLoss(x_bound=xb), "x_star_norm": 2.0,
                                   "excess": 0.5}),
    LearnerSpec("ridge", "JKT Alg. 4 (PQFTL) as private ridge regression: alpha=0.001, noise "
                "ridge (BLT sums; tree under paper calibration); the adapters' default "
                "regressor", PrivateQuadraticFTL, "regression", "blt",
                _tuned_ridge(REGRESSION_RIDGE_ALPHA),
                paper_counter="binary_tree"),
    LearnerSpec("ridge_classifier", "JKT Alg. 4 (PQFTL), least squares on labels +-1 "
                "(alpha=0.01, noise ridge, BLT sums; tree under paper calibration)",
                PrivateQuadraticFTL, "classification", "blt", _tuned_ridge(RIDGE_ALPHA),
                paper_counter="binary_tree"),
    LearnerSpec("ridge_classifier_rff", "ridge_classifier on [0.8 x, 0.6 phi(x)], phi 32 "
                "random Fourier features (bandwidth 0.2 x_bound): a linear model beside a "
                "kernel one, on long streams in few dimensions (x alone elsewhere); the adapters' "
                "default classifier", PrivateQuadraticFTL,
                "classification", "blt", _tuned_ridge(RIDGE_ALPHA),
                paper_counter="binary_tree",
                features=(N_RANDOM_FEATURES, 0.8)),
)}
#: old learner names, still accepted as the names they map to (docs/architecture.md, Names)
LEARNER_ALIASES = {"frank-wolfe": "online_frank_wolfe", **{
    old: old.replace("-", "_") for old in ("incremental-regression", "incremental-erm",
                                           "ridge-classifier", "ridge-classifier-rff")}}

#: the adapters' default learner per task (figures: docs/benchmarks/defaults.md)
DEFAULT_LEARNERS = {"classification": "ridge_classifier_rff", "regression": "ridge"}


def learner_name(name: object) -> str:
    """The canonical name of a name of :data:`LEARNERS` or :data:`LEARNER_ALIASES`.

    >>> learner_name("frank-wolfe"), learner_name("ridge")
    ('online_frank_wolfe', 'ridge')
    """
    return check_name("learner", name, tuple(LEARNERS), LEARNER_ALIASES)


def _spec(name: object) -> LearnerSpec:
    return LEARNERS[learner_name(name)]


def check_features(name: str, fit_intercept: object, random_features: object) -> int | None:
    """Check ``make_learner``'s ``fit_intercept`` and ``random_features`` for the learner
    ``name`` (both need a linear model x . w); the number of random features, or None.

    >>> check_features("ridge", True, 64), check_features("kernel", False, None)
    (64, None)
    """
    linear = _spec(name).linear
    if not isinstance(fit_intercept, bool):
        raise fail("fit_intercept", "be True or False", fit_intercept)
    if fit_intercept and not linear:
        raise fail("fit_intercept", f"be False for {name} (not a linear model x . w)", True)
    if random_features is None:
        return None
    if not linear:
        raise fail("random_features", f"be None for {name} (not a linear model x . w)",
                   random_features)
    features = check_int("random_features", random_features, low=2)
    if features % 2:
        raise fail("random_features", "be even (cos/sin pairs)", random_features)
    return features


def check_regression_learner(name: object, who: str) -> None:
    """Refuse a classification learner (its loss reads labels as +-1) in a regressor.

    >>> check_regression_learner("igd", "OnlineRegressor")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: learner must be a regression learner for
    OnlineRegressor (one of ftal, ftrl, giga, incremental_erm, incremental_regression,
    kernel, online_frank_wolfe, pqftl, ridge); got 'igd'
    """
    name = LEARNER_ALIASES.get(name, name) if isinstance(name, str) else name
    if isinstance(name, str) and name in LEARNERS and LEARNERS[name].task != "regression":
        regression = sorted(k for k, v in LEARNERS.items() if v.task == "regression")
        raise fail("learner", f"be a regression learner for {who} (one of "
                   f"{', '.join(regression)})", name)


def make_learner(name: str, dim: int, *, horizon: int, x_bound: float = 1.0,
                 y_bound: float = 1.0, options: dict | None = None,
                 fit_intercept: bool = False, intercept_scaling: float = INTERCEPT_SCALING,
                 postprocess: str = "average", random_features: int | None = None,
                 bandwidth: float = BANDWIDTH, feature_seed: int = 0,
                 linear_weight: float | None = None, mechanism: Mechanism | None = None,
                 **privacy) -> OnlineLearner:
    """Build the learner ``name`` of :data:`LEARNERS` for a stream of dimension ``dim``.

    ``mechanism``, ``**privacy``: the learner's (:class:`~dpol.accounting.Mechanism`), a
    ``counter`` replacing the entry's (which learners take one: their ``accepts``); ``options``
    overrides any constructor keyword. ``fit_intercept``: the learner of dimension ``dim +
    1`` in :class:`~dpol.learners.intercept.WithIntercept` (linear learners).
    ``postprocess``: how ``predict_one`` builds the model (:mod:`dpol.learners.postprocess`;
    "shrink" needs a learner stating its release noise: ``igd``, ``giga``, ``pol``).
    ``random_features``: D random Fourier features of the rows, beside x weighted
    ``linear_weight`` (:class:`~dpol.learners.random_features.WithRandomFeatures`;
    ``bandwidth``, ``feature_seed``); both default to the entry's ``features`` where
    :func:`uses_features` (a long enough stream in few enough dimensions), to none (x
    alone) elsewhere.

    Examples
    --------
    >>> m = make_learner("pqftl", 3, horizon=100, epsilon=1.0, seed=0)
    >>> type(m).__name__, m.privacy.epsilon, m.privacy.seeded  # seed=0: a seeded guarantee
    ('PrivateQuadraticFTL', 1.0, True)
    >>> m = make_learner("ridge", 3, horizon=100, epsilon=1.0, seed=0, fit_intercept=True)
    >>> type(m).__name__, m.dim, m.learner.dim, m.learner.alpha
    ('WithIntercept', 3, 4, 0.001)
    >>> [type(make_learner("ridge_classifier_rff", d, horizon=h, epsilon=1.0)).__name__
    ...  for d, h in ((3, 100), (3, 2000), (9, 40_000))]  # x alone: short, or d = 9
    ['PrivateQuadraticFTL', 'WithRandomFeatures', 'PrivateQuadraticFTL']
    """
    spec = _spec(name)
    postprocess = check_choice("postprocess", postprocess, POSTPROCESSINGS)
    if options is not None and not isinstance(options, dict):
        raise fail("options", "be a dict of constructor keywords", options)
    features, linear_weight = _feature_plan(spec, fit_intercept, random_features,
                                            linear_weight, horizon, dim, bandwidth)
    inner_dim = dim if features is None else features + (dim if linear_weight > 0.0 else 0)
    inner_dim += 1 if fit_intercept else 0
    kwargs = spec.defaults(inner_dim, x_bound if features is None else 1.0, y_bound)
    kwargs.update(horizon=horizon)
    kwargs.update(_privacy(spec, mechanism, privacy))
    kwargs.update(options or {})
    learner = _construct(spec, inner_dim, kwargs, options)
    if postprocess == "shrink" and np.isnan(learner._release_noise_variance(
            np.array([learner.horizon]))[0]):
        raise fail("postprocess", f"not be 'shrink' for {name}: it states no public noise "
                   "level of its releases", postprocess)
    learner.postprocess = postprocess
    if fit_intercept:
        learner = WithIntercept(learner, intercept_scaling=intercept_scaling)
    if features is not None:
        learner = WithRandomFeatures(learner, dim, bandwidth=bandwidth, x_bound=x_bound,
                                     feature_seed=feature_seed, linear_weight=linear_weight)
    return learner


def uses_features(dim: int, horizon: int, bandwidth: float = BANDWIDTH) -> bool:
    """Whether an entry with random ``features`` runs on them by default: on a horizon of
    :data:`FEATURES_FROM_HORIZON` rows or more, where a row expects at least
    :data:`FEATURE_NEIGHBOURS` others within the bandwidth (horizon x bandwidth^dim).
    Public quantities only: the choice costs no budget.

    >>> uses_features(2, 4240), uses_features(8, 5093), uses_features(3, 1000)
    (True, False, False)
    """
    horizon = check_int("horizon", horizon, low=1)
    return (horizon >= FEATURES_FROM_HORIZON
            and horizon * float(bandwidth) ** int(dim) >= FEATURE_NEIGHBOURS)


def _feature_plan(spec: LearnerSpec, fit_intercept: object, random_features: object,
                  linear_weight: object, horizon: object, dim: int,
                  bandwidth: float) -> tuple[int | None, float]:
    """(D random features or None, the weight of x beside them), checked: the entry's
    where :func:`uses_features` unless the caller gives either."""
    features, weight = spec.features or (None, 0.0)
    if (features is not None and random_features is None and linear_weight is None
            and not uses_features(dim, horizon, bandwidth)):
        features, weight = None, 0.0  # a short stream or many dimensions: x alone
    random_features = features if random_features is None else random_features
    linear_weight = check_real("linear_weight", weight if linear_weight is None else
                               linear_weight, low=0.0, high=1.0, high_open=True)
    if linear_weight and random_features is None:
        raise fail("linear_weight", "be 0 without random_features (it weighs x beside "
                   "them)", linear_weight)
    return check_features(spec.name, fit_intercept, random_features), linear_weight


def _privacy(spec: LearnerSpec, mechanism: Mechanism | None, privacy: dict) -> dict:
    """``mechanism``'s fields and the short keywords, with the entry's counter for the
    calibration (its published one under "paper") unless given (None: it takes none)."""
    out = {"calibration": "tight", **{k: v for k, v in privacy.items() if v is not None}}
    if mechanism is not None:
        out = merge_mechanism(mechanism, out, None, "make_learner")
    out.setdefault("counter", spec.counter_for(out["calibration"]))
    return out


def _construct(spec: LearnerSpec, dim: int, kwargs: dict, options: dict | None
               ) -> OnlineLearner:
    """``spec.cls(dim, **kwargs)``, an unknown option named as one."""
    try:
        return spec.cls(dim, **kwargs)
    except TypeError as exc:  # an option the constructor does not take
        if "keyword argument" not in str(exc):
            raise
        raise fail("options", f"hold keywords that {spec.cls.__name__} accepts ({exc})",
                   sorted(options or {})) from None
