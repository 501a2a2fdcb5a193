"""What a configuration implies: the noise and the real guarantee, tight and paper (L5).

:func:`account_counter` calibrates one counter both ways; :func:`account_learner` builds
a learner of :data:`dpol.adapters.LEARNERS` both ways; :func:`describe_noise` states the
noise a built learner adds. The ``paper`` rows use the published formula verbatim and
report the epsilon that noise really gives (``real_epsilon``); where no paper publishes a
calibration for the configuration, the row says so.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpol._validation import check_int
from dpol.accounting.closed_forms import CALIBRATIONS, check_epsilon
from dpol.adapters.registry import make_learner
from dpol.counters import Counter, counter_name, make_counter
from dpol.errors import InvalidInputError, NonPrivateWarning, PaperCalibrationWarning

__all__ = ["CALIBRATIONS", "account_counter", "account_learner", "describe_noise"]

def _max_rms(counter: Counter, horizon: int) -> float:
    """Worst-case RMS noise of a release over the first ``horizon`` steps (a counter of
    an endless stream has no horizon of its own: the caller's)."""
    return math.sqrt(counter._max_variance_upto(horizon))


def _counter_noise(counter: Counter, steps: int) -> str:
    """``steps``: the releases the learner asks of an endless counter (its own horizon
    otherwise)."""
    horizon = steps if counter.horizon is None else counter.horizon
    return (f"{type(counter).__name__} ({counter.noise}): noise multiplier "
            f"{counter.noise_multiplier:.4g}, per-node scale {counter.noise_scale:.4g}, "
            f"worst-case RMS error of a release {_max_rms(counter, horizon):.4g}")


def describe_noise(learner: object) -> str:
    """One line per noise source of a built learner (counters, output noise, ...).

    Examples
    --------
    >>> m = make_learner("igd", 3, horizon=100, epsilon=1.0, seed=0)
    >>> describe_noise(m)
    'Gaussian output perturbation: std 3731 at t = 1 down to 73.87 at t = 100'
    """
    counters = getattr(learner, "_counters", None) or (
        [learner._counter] if getattr(learner, "_counter", None) is not None else [])
    if counters:
        # the bandit's counters release once per batch
        steps = getattr(learner, "n_releases", None) or learner.horizon
        return "; ".join(_counter_noise(c, steps) for c in counters)
    stds = getattr(learner, "_stds", None)
    if stds is not None:
        steps = np.flatnonzero(stds) + 1
        if steps.size == 0:
            return "none (not private)"
        return (f"Gaussian output perturbation: std {stds[steps[0] - 1]:.4g} at t = "
                f"{steps[0]} down to {stds[steps[-1] - 1]:.4g} at t = {steps[-1]}")
    beta = getattr(learner, "beta", None)
    if beta is not None:
        return f"one Gaussian release at the horizon, std {beta:.4g}"
    scales = getattr(learner, "_scales", None)
    if scales is not None and np.size(scales):
        scales = np.asarray(scales, dtype=float)
        return (f"Gaussian noise on each release, std {scales.min():.4g} to "
                f"{scales.max():.4g}")
    return "see the learner's Privacy section"


def _calibrated(build, calibration: str) -> tuple[object | None, str]:
    """Build with ``calibration``; (object, warning text) or (None, why it is refused)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PaperCalibrationWarning)
        warnings.simplefilter("ignore", NonPrivateWarning)
        try:
            obj = build(calibration)
        except InvalidInputError as exc:
            if calibration == "paper":
                return None, f"no published calibration: {exc}"
            raise
    notes = "; ".join(str(w.message) for w in caught
                      if issubclass(w.category, PaperCalibrationWarning))
    return obj, notes


def account_counter(counter: str, *, epsilon: float, delta: float, horizon: int,
                    dim: int = 1, bound: float = 1.0, noise: str = "gaussian",
                    neighbouring: str = "replace_one", window: int | None = None
                    ) -> list[dict]:
    """The noise and the guarantee of one counter under both calibrations.

    ``noise_scale`` is the per-node Gaussian std, Laplace scale or Gamma theta;
    ``max_rms_error`` the worst-case RMS noise of one release (per coordinate).

    Examples
    --------
    >>> rows = account_counter("binary_tree", epsilon=1.0, delta=1e-5, horizon=1024)
    >>> [(r["calibration"], round(r["noise_scale"], 3), round(r["real_epsilon"], 3))
    ...  for r in rows]
    [('tight', 24.746, 1.0), ('paper', 37.169, 0.641)]
    """
    counter = counter_name(counter)
    horizon = check_int("horizon", horizon, low=1)
    epsilon = check_epsilon(epsilon, allow_inf=False)
    options = {}
    if counter == "window_tree":
        options["window"] = check_int("window", window if window is not None else horizon,
                                      low=1)

    def build(calibration):
        return make_counter(counter, horizon, dim, bound=bound, epsilon=epsilon, delta=delta,
                            noise=noise, neighbouring=neighbouring, calibration=calibration,
                            **options)

    rows = []
    for calibration in CALIBRATIONS:
        obj, note = _calibrated(build, calibration)
        if obj is None:
            rows.append({"calibration": calibration, "counter": counter, "noise": noise,
                         "noise_multiplier": math.nan, "noise_scale": math.nan,
                         "max_rms_error": math.nan, "epsilon": epsilon,
                         "real_epsilon": math.nan, "delta": delta, "guarantee": "",
                         "note": note})
            continue
        rows.append({"calibration": calibration, "counter": counter, "noise": noise,
                     "noise_multiplier": obj.noise_multiplier, "noise_scale": obj.noise_scale,
                     "max_rms_error": _max_rms(obj, horizon), "epsilon": epsilon,
                     "real_epsilon": obj.privacy.epsilon, "delta": obj.privacy.delta,
                     "guarantee": str(obj.privacy), "note": note})
    return rows


def account_learner(learner: str, *, epsilon: float, delta: float, horizon: int, dim: int,
                    x_bound: float = 1.0, y_bound: float = 1.0, counter: str | None = None
                    ) -> list[dict]:
    """The noise and the guarantee of a learner of :data:`dpol.adapters.LEARNERS`, both ways.

    Examples
    --------
    >>> rows = account_learner("igd", epsilon=1.0, delta=1e-5, horizon=1000, dim=5)
    >>> [(r["calibration"], round(r["real_epsilon"], 3)) for r in rows]
    [('tight', 1.0), ('paper', 0.218)]
    """
    def build(calibration):
        return make_learner(learner, dim, horizon=horizon, epsilon=epsilon, delta=delta,
                            counter=counter, x_bound=x_bound, y_bound=y_bound,
                            calibration=calibration, seed=0)

    rows = []
    for calibration in CALIBRATIONS:
        obj, note = _calibrated(build, calibration)
        rows.append({"calibration": calibration, "learner": learner,
                     "noise": "" if obj is None else describe_noise(obj), "epsilon": epsilon,
                     "real_epsilon": math.nan if obj is None else obj.privacy.epsilon,
                     "delta": delta if obj is None else obj.privacy.delta,
                     "guarantee": "" if obj is None else str(obj.privacy), "note": note})
    return rows
