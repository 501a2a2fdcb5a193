"""What the adapters estimate privately before streaming: bounds, scaling, the labels' mean.

``x_bound="auto"`` / ``y_bound="auto"`` release the 0.95 quantile of the row norms / of
``|y|`` (:func:`dpol.datasets.private_bounds.private_bounds`); ``scaling="private"``
releases per-feature 10% / 90% quantiles and the bounds after scaling
(:func:`dpol.datasets.private_scaling.private_scaling`). Either spends
``bounds_budget * epsilon``. Then, for a least-squares learner, ``centre_budget`` of the
rest (a share of its Gaussian budget, :func:`dpol.accounting.closed_forms.gaussian_share`)
releases the labels' mean b (:func:`dpol.datasets.private_label_mean.private_label_mean`;
kept only beyond 3 public noise stds, else 0), and the learner fits y - b within
``y_bound + |b|``; predictions are b + its own, clipped to ``[-y_bound, y_bound]``. A
regressor's ``y_bound=(lo, hi)`` declares the labels' range: every step above runs on
y - c within ``h``, for the public centre c = (lo + hi) / 2 and half-width h = (hi - lo) / 2,
and predictions are c + its own (clipped to ``[lo, hi]`` when centred).
``privacy_`` composes every release (:func:`dpol.accounting.events.compose_guarantee`).
Regressors centre by default, classifiers only when asked (``CLASSIFIER_CENTRE_BUDGET``).

Privacy: a declared range is public, and y -> y - c maps labels within ``[lo, hi]`` one
to one onto labels within ``h``: every mechanism's sensitivity is the one it states for
the bound h, and its guarantee holds unchanged (labels outside the range are clipped to it).

Regression on privately estimated bounds or scaling is refused below the rows the
estimate needs (:meth:`~dpol.datasets.private_bounds.PrivateBounds.min_rows`): on river's
ChickWeights (462 rows) such models scored held-out R^2 from -3 to -5e7. A classifier
only warns.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np

from dpol._clip_warning import FRACTION, MIN_ROWS, suggested_range
from dpol._validation import check_choice, check_real, fail
from dpol.accounting.closed_forms import check_epsilon, gaussian_share, resolve_delta
from dpol.accounting.events import MechanismEvent, compose_guarantee
from dpol.datasets.private_bounds import PrivateBounds, parse_bound, private_bounds
from dpol.datasets.private_label_mean import PrivateLabelMean, private_label_mean
from dpol.datasets.private_scaling import PrivateScaling, private_scaling
from dpol.errors import ClippingWarning, InvalidInputError, PrivateEstimateWarning

__all__ = ["CENTRE_BUDGET", "CLASSIFIER_CENTRE_BUDGET", "SCALINGS", "Preparation", "label_range",
           "prepare", "release_centre"]

#: default share of a regressor's Gaussian budget spent on the labels' mean. Measured
#: held-out (5 seeds, 80/20 split, standardised rows, the default learner): river's
#: ChickWeights (462 training rows, labels 35-373, y_bound 400) at epsilon 1, R^2 -1.95
#: without, -0.10 / -0.07 / -0.06 / -0.09 with shares 0.05 / 0.1 / 0.2 / 0.4; its
#: non-private twin 0.70 without, 0.74 with (ordinary least squares 0.76)
CENTRE_BUDGET = 0.1
#: the classifier's default: no centring. Measured (held-out, the default learner):
#: river's ImageSegments one-vs-rest (1,848 training rows, 14% positive) at epsilon 0.1
#: scores 0.75-0.86 without (majority 0.84-0.88) and the majority's in every seed with a
#: share of 0.1, the same either way at epsilon 1 and 10 (the majority's); but where the
#: features are learnt, the unshrunk prior displaces the shrunk boundary: the
#: OnlineClassifier doctest's stream (4,000 rows, 24% of one class) at epsilon 1, 0.98-0.99
#: without, 0.80-0.82 with (the ridge shrinks the features' weights by half, not the
#: released prior); least squares' own intercept is off there too (the twin 0.989 without,
#: 0.967 with: ordinary least squares 0.961)
CLASSIFIER_CENTRE_BUDGET = 0.0
#: a released centre within this many of its (public) noise stds of 0 is replaced by 0.
#: Measured (5 seeds, held-out R^2 at epsilon 0.1, benchmark preprocessing: labels
#: already centred): the raw centre took diabetes from -0.035 to -1.29 and TrumpApproval
#: from 0.019 to -0.48 (a centre std of 0.55 in labels of std 0.4); James-Stein's
#: (1 - std^2 / b^2)_+ still left seeds at -2.1 and -1.3; a 3-std test keeps a false
#: centre with probability 0.3%
CENTRE_SIGNIFICANCE = 3.0

#: ``scaling`` values besides None (features used as given)
SCALINGS = ("private",)


@dataclass(frozen=True)
class Preparation:
    """Bounds, scaling and centre the learner runs with, and the events that released them.

    ``y_bound`` is the learner's (``label_bound + |b|`` when centred on b); ``label_bound``
    the declared (or released) bound of the labels it predicts within.
    """

    x_bound: float
    y_bound: float
    epsilon: float
    estimate: PrivateBounds | PrivateScaling | None = None
    centre: PrivateLabelMean | None = None
    label_bound: float | None = None
    delta: float | None = None
    shift: float = 0.0  # c of a declared range (lo, hi): the labels' public centre

    def events(self) -> tuple[MechanismEvent, ...]:
        found = () if self.estimate is None else self.estimate.privacy_events()
        return found + (() if self.centre is None else self.centre.privacy_events())

    def transform(self, X: np.ndarray) -> np.ndarray:
        if isinstance(self.estimate, PrivateScaling):
            return self.estimate.transform(X)
        return X

    def _scaled_y(self) -> bool:
        return isinstance(self.estimate, PrivateScaling) and self.estimate.y_scale is not None

    def transform_y(self, y: np.ndarray) -> np.ndarray:
        """The labels the learner fits: scaled, then centred."""
        if self._scaled_y():
            y = self.estimate.transform_y(y)
        y = y - self.shift if self.shift else y
        return y if self.centre is None else y - self.centre.value

    def uncentre(self, margin: np.ndarray) -> np.ndarray:
        """The learner's prediction plus the centre, within the labels' bound, plus the
        declared range's centre."""
        if self.centre is not None:
            margin = np.clip(margin + self.centre.value, -self.label_bound, self.label_bound)
        return margin + self.shift if self.shift else margin

    def inverse_y(self, y: np.ndarray) -> np.ndarray:
        """An uncentred prediction back in the labels' units."""
        return self.estimate.inverse_y(y) if self._scaled_y() else y

    def guarantee(self, learner: object, target: float):
        """The one guarantee of the estimates and the learner (the learner's alone if
        nothing was estimated)."""
        events = self.events()
        if not events:
            return learner.privacy
        return compose_guarantee([*events, *learner.privacy_events()],
                                 learner.delta, target=target,
                                 seeded=learner.privacy.seeded)


def prepare(est: object, X: np.ndarray, y: np.ndarray, *, regression: bool, centred: bool,
            horizon: int, seed: object = None) -> Preparation:
    """Check ``est``'s bound, scaling and centre parameters; estimate what is asked from
    X, y (``centred``: the labels' mean, for a least-squares learner; ``seed``: its
    noise's)."""
    share = check_real("centre_budget", est.centre_budget, low=0.0, high=1.0,
                       high_open=True)
    prep = _bounds(est, X, y, regression=regression)
    y = y - prep.shift if prep.shift else y  # a declared range: labels around its centre
    if not (centred and share > 0.0):
        return prep
    epsilon = check_epsilon(prep.epsilon)
    neighbouring = (est.learner_options or {}).get("neighbouring", "replace_one")
    delta = resolve_delta(est.delta, horizon)
    bound = prep.y_bound if regression else 1.0  # a classifier's labels are -1 / +1
    scaled = prep.estimate.transform_y(y) if (
        isinstance(prep.estimate, PrivateScaling) and regression) else y
    centre, rest = release_centre(type(est).__name__ if regression else None, scaled,
                                  bound=bound, share=share, epsilon=epsilon, delta=delta,
                                  neighbouring=neighbouring, seed=seed, stacklevel=6,
                                  shift=prep.shift)
    # ||y - b|| <= ||y|| + ||b||: the learner's label bound (one-hot rows: norm 1)
    return Preparation(prep.x_bound, bound + float(np.linalg.norm(centre.value)), rest,
                       prep.estimate, centre, bound, delta, prep.shift)


def release_centre(who: str | None, y: np.ndarray, *, bound: float, share: float,
                   epsilon: float, delta: float, neighbouring: str = "replace_one",
                   seed: object = None, stacklevel: int = 5, shift: float = 0.0
                   ) -> tuple[PrivateLabelMean, float]:
    """The labels' mean on ``share`` of the Gaussian budget of (epsilon, delta) (one-hot
    rows for y of shape (n, K)), replaced by 0 within ``CENTRE_SIGNIFICANCE`` of its
    public noise std, and the epsilon left for the learner; ``who`` (regression) warns
    of labels clipped to ``bound`` in its name (y + ``shift``: the raw labels)."""
    if math.isinf(epsilon):
        z, rest = 0.0, epsilon  # the non-private twin: the exact mean
    else:
        z, rest = gaussian_share(epsilon, delta, share)
    centre = private_label_mean(y, bound=bound, noise_multiplier=z, one_hot=np.ndim(y) == 2,
                                neighbouring=neighbouring, seed=seed)
    if who is not None:  # the learner's window y_bound + |b| may not clip them: said here
        _note_centre_clipping(who, centre, y + shift, stacklevel)
    # kept only where it stands out of its public noise (free post-processing): a centre
    # within CENTRE_SIGNIFICANCE stds of 0 is mostly noise, and no better than 0
    value = np.where(np.abs(centre.value) > CENTRE_SIGNIFICANCE * centre.std,
                     centre.value, 0.0)
    return replace(centre, value=float(value) if np.ndim(centre.value) == 0 else value), rest


def label_range(value: object, *, regression: bool = True) -> tuple[float, float | str]:
    """(c, h) of ``y_bound``: a bound B > 0 or "auto" is (0, B) (|y| <= B); a regressor's
    range (lo, hi), lo < hi, or its text "lo,hi" (``dpol run --y-bound``), is its centre
    and half-width ((lo + hi) / 2, (hi - lo) / 2).

    >>> label_range(2.0), label_range((35, 373)), label_range("20,80")
    ((0.0, 2.0), (204.0, 169.0), (50.0, 30.0))
    >>> label_range((5, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    dpol.errors.InvalidInputError: y_bound must be ... a range (lo, hi) ... with lo < hi; got (5, 1)
    """
    rule = "be a bound > 0, 'auto' or a range (lo, hi) of finite numbers with lo < hi"
    text = isinstance(value, str) and "," in value  # "lo,hi": refused as typed
    if not text and (isinstance(value, str) or np.ndim(value) == 0):
        try:
            return 0.0, parse_bound("y_bound", value)
        except InvalidInputError:
            raise fail("y_bound", rule if regression else "be a number > 0", value) from None
    if not regression:
        raise fail("y_bound", "be a number for a classifier (labels are -1 / +1)", value)
    try:
        lo, hi = (float(v) for v in (value.split(",") if text else value))
    except (TypeError, ValueError):
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise fail("y_bound", rule, value)
    return (lo + hi) / 2.0, (hi - lo) / 2.0


def _note_centre_clipping(who: str, centre: PrivateLabelMean, labels: np.ndarray,
                          stacklevel: int) -> None:
    """Warn when more than ``FRACTION`` of the labels (of at least ``MIN_ROWS``) entered the
    centre's sum clipped to ``y_bound``, as every clipping object does (dpol._clip_warning)."""
    if centre.n < MIN_ROWS or centre.n_clipped <= FRACTION * centre.n:
        return
    lo, hi = suggested_range(labels)
    warnings.warn(f"{who}: {centre.n_clipped} of {centre.n} labels "
                  f"({centre.n_clipped / centre.n:.0%}) lie outside y_bound and enter "
                  "the labels' private mean clipped to it (the learner fits them around "
                  f"the mean); declare their range y_bound=({lo:g}, {hi:g}) to keep them "
                  "(read from the raw labels: advice for the data holder, not a private "
                  "release)", ClippingWarning, stacklevel=stacklevel)


def _bounds(est: object, X: np.ndarray, y: np.ndarray, *, regression: bool) -> Preparation:
    """The bounds and scaling of ``prepare``."""
    x_bound = parse_bound("x_bound", est.x_bound)
    shift, y_bound = label_range(est.y_bound, regression=regression)
    scaling = est.scaling
    if scaling is not None:
        check_choice("scaling", scaling, SCALINGS)
    auto = x_bound == "auto" or y_bound == "auto"
    if not (auto or scaling):
        return Preparation(x_bound, y_bound, est.epsilon, shift=shift)
    neighbouring = (est.learner_options or {}).get("neighbouring", "replace_one")
    if neighbouring != "replace_one":
        raise fail("learner_options", "not set neighbouring with private bounds or scaling "
                   "(their release is replace-one DP: it reads the public number of rows)",
                   {"neighbouring": neighbouring})
    budget = check_real("bounds_budget", est.bounds_budget, low=0.0, high=1.0,
                        low_open=True, high_open=True)
    epsilon = check_epsilon(est.epsilon)
    if math.isinf(epsilon):
        raise fail("epsilon", "be finite for private bounds or scaling (a share of it pays "
                   "for the estimate)", epsilon)
    if not regression and y_bound == "auto":
        raise fail("y_bound", "be a number for a classifier (labels are -1 / +1)", "auto")
    if scaling:
        if (x_bound, y_bound if regression else "auto") != ("auto", "auto"):
            raise fail("scaling", "come with x_bound='auto'" + (" and y_bound='auto'"
                       if regression else "") + " (the bounds are released after "
                       "scaling)", scaling)
        estimate = private_scaling(X, y if regression else None, epsilon=budget * epsilon)
        x_bound = estimate.x_bound
        y_bound = estimate.y_bound if regression else y_bound
    else:
        estimate = private_bounds(X if x_bound == "auto" else None,
                                  y if y_bound == "auto" else None, epsilon=budget * epsilon)
        x_bound = estimate.x_bound if x_bound == "auto" else x_bound
        y_bound = estimate.y_bound if y_bound == "auto" else y_bound
    note = estimate.note()
    if note and regression:  # module docstring: a regression model on it is unbounded
        name = "scaling" if scaling else "x_bound" if est.x_bound == "auto" else "y_bound"
        raise fail(name, f"be declared for {estimate.n} rows at epsilon {epsilon:g} "
                   f"({note})", "private" if scaling else "auto")
    if note:
        warnings.warn(note, PrivateEstimateWarning, stacklevel=5)
    return Preparation(x_bound, y_bound, (1.0 - budget) * epsilon, estimate, shift=shift)
