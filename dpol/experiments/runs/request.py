"""What a ``dpol run`` is asked, checked before any data is read (layer L5).

:func:`check_request` turns the arguments of
:func:`~dpol.experiments.runs.pipeline.run_learner` into a :class:`RunRequest`, or
refuses them with one line naming the argument, the rule and the value: a refused run
reads no data and writes nothing.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from pathlib import Path

from dpol._validation import check_choice, check_int, check_real, fail
from dpol.accounting.closed_forms import check_epsilon
from dpol.adapters._fallback import check_fallback
from dpol.adapters._private_prep import label_range
from dpol.adapters.registry import LEARNERS, LearnerSpec, check_features, learner_name
from dpol.counters import counter_name
from dpol.datasets.files import NORMALIZATIONS
from dpol.datasets.private_bounds import parse_bound
from dpol.datasets.table import Table
from dpol.experiments.runs.checkpoint import CHECKPOINT
from dpol.experiments.runs.output import check_out, checkpoint_folder
from dpol.learners.random_features import BANDWIDTH

__all__ = ["RUN_NORMALIZATIONS", "RunRequest", "check_request", "feature_arguments",
           "interval_text"]

#: ``normalize`` of a run: a table's own, or "private" (scaling released privately on
#: the ``bounds_budget`` share, inside the guarantee)
RUN_NORMALIZATIONS = (*NORMALIZATIONS, "private")


def interval_text(centre: float, half: float) -> str:
    """A declared label range, ``[centre - half, centre + half]``, as the run says it.

    >>> interval_text(50.0, 30.0)
    '[20, 80]'
    """
    return f"[{centre - half:g}, {centre + half:g}]"


@dataclass(frozen=True)
class RunRequest:
    """The checked arguments of one run (those of
    :func:`~dpol.experiments.runs.pipeline.run_learner`, ``out_dir`` as ``out``);
    ``args`` holds them as given, which its checkpoint keeps for ``--resume``."""

    learner: str
    spec: LearnerSpec
    data: object
    out: Path
    epsilon: float  # the whole budget: bounds or scaling released privately take a share
    delta: float | None
    horizon: int | None
    counter: str | None
    seed: int | None
    calibration: str
    target_col: int | str | None
    normalize: str
    x_bound: float | str  # the declared bound, or "auto"
    y_bound: float | str  # |y - y_centre| <= y_bound: a declared range's half-width
    y_centre: float  # a declared range's centre (lo + hi) / 2, else 0: a public shift
    bounds_budget: float
    options: dict | None
    baseline: bool
    test_fraction: float | None
    command: str | None
    checkpoint_every: int | None
    chunk_rows: int | None
    features: dict  # make_learner's fit_intercept, random_features and bandwidth
    fallback: bool  # the trivial fallback (runs.fallback): classification only
    replace: bool
    run_id: str  # tells a resumed run's own published outputs from another run's
    args: dict

    @property
    def classification(self) -> bool:
        return self.spec.task == "classification"

    @property
    def private(self) -> bool:
        """Whether the rows are scaled privately (the bounds are then released after)."""
        return self.normalize == "private"

    @property
    def range_text(self) -> str:
        """A declared label range, as the report says it ("": none)."""
        c = self.y_centre
        return f"labels y - {c:g} (the declared range {interval_text(c, self.y_bound)})" \
            if c else ""

    @property
    def auto(self) -> tuple[bool, bool]:
        """Whether the bound on ||x||, and on |y|, is released privately."""
        return (self.x_bound == "auto" or self.private,
                self.y_bound == "auto" or (self.private and not self.classification))


def check_request(args: dict, resumed: dict | None = None) -> RunRequest:
    """The :class:`RunRequest` of ``run_learner``'s arguments ``args`` (``resumed``: the
    checkpoint a resumed run continues), refusing a bad one before anything is read.

    Examples
    --------
    >>> import tempfile
    >>> from dpol.experiments.runs.pipeline import run_request  # run_learner's defaults
    >>> request = run_request("pqftl", "synthetic-regression", tempfile.mkdtemp(),
    ...                       x_bound="auto")
    >>> request.auto, request.epsilon, request.features["fit_intercept"]
    ((True, False), 1.0, True)
    >>> run_request("pqftl", "synthetic-regression", tempfile.mkdtemp(), calibration="exact")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: calibration must be one of 'tight', 'paper'; got 'exact'
    """
    learner, data = learner_name(args["learner"]), args["data"]  # an old name: its new one
    args = {**args, "learner": learner, "counter": args["counter"] if args["counter"] is None
            else counter_name(args["counter"])}
    saved = args
    if isinstance(data, (str, Path)) and str(data) != "-" and Path(data).is_file():
        saved = {**args, "data": str(Path(data).absolute())}  # a resume may start elsewhere
    elif isinstance(data, Table):  # a run by key's rows: its checkpoints hold no row
        saved = {**args, "data": str(data)}
    spec = LEARNERS[learner]
    check_epsilon(args["epsilon"])  # cheap arguments first: a refused run reads no data
    out, run_id = Path(args["out_dir"]), (resumed or {}).get("run_id") or secrets.token_hex(8)
    _check_out(out, args["replace"], resumed and run_id)
    if args["delta"] is not None:  # None: the learner's default, 1e-5 or 1/T if smaller
        check_real("delta", args["delta"], low=0.0, high=1.0, high_open=True)
    check_choice("calibration", args["calibration"], ("tight", "paper"))
    check_choice("normalize", args["normalize"], RUN_NORMALIZATIONS)
    x_bound, y_bound, y_centre = _check_bounds(args, spec)
    given = {k: args[k] for k in ("learner", "data", "epsilon", "delta", "counter", "seed",
                                  "calibration", "target_col", "normalize", "bounds_budget",
                                  "options", "baseline", "test_fraction", "command",
                                  "replace")}
    return RunRequest(**given, **_check_stream(args, spec), spec=spec, out=out,
                      x_bound=x_bound, y_bound=y_bound, y_centre=y_centre, run_id=run_id,
                      args=saved)


def _check_stream(args: dict, spec: LearnerSpec) -> dict:
    """The horizon, held-out share, counter, features, checkpoints and chunks of a run."""
    horizon, every, chunk_rows = args["horizon"], args["checkpoint_every"], args["chunk_rows"]
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
    if args["test_fraction"] is not None:
        check_real("test_fraction", args["test_fraction"], low=0.0, high=1.0, low_open=True,
                   high_open=True)
    if args["counter"] is not None and spec.counter is None:
        raise fail("counter", f"be left unset: {spec.name} adds its noise without a counter",
                   args["counter"])
    features = feature_arguments(spec, spec.name, args["fit_intercept"],
                                 args["random_features"], args["bandwidth"])
    if every is not None:
        every = check_int("checkpoint_every", every, low=1)
        if isinstance(args["data"], str) and args["data"] == "-":
            raise fail("checkpoint_every", "be unset for data read from standard input (a "
                       "resumed run must read the same rows again)", every)
    if chunk_rows is not None:  # streams larger than memory (runs.chunked)
        chunk_rows = check_int("chunk_rows", chunk_rows, low=1)
    return {"horizon": horizon, "checkpoint_every": every, "chunk_rows": chunk_rows,
            "features": features, "fallback": _check_fallback(args, spec, chunk_rows)}


def _check_fallback(args: dict, spec: LearnerSpec, chunk_rows: int | None) -> bool:
    """``fallback``: a bool, for a classification learner on replace-one streams, not
    chunked (the chunked path builds no fallback)."""
    if not check_fallback(args["fallback"]):
        return False
    if spec.task != "classification":
        raise fail("fallback", f"be off for a {spec.task} learner ({spec.name}): it falls "
                   "back to the class prior of a classification learner", True)
    if chunk_rows is not None:
        raise fail("fallback", "be off for a chunked run (chunk_rows)", True)
    options = args["options"] if isinstance(args["options"], dict) else {}
    if options.get("neighbouring", "replace_one") != "replace_one":
        raise fail("fallback", "be off for add/remove streams (an added row shifts every "
                   "later row into another of its blocks)", True)
    return True


def _check_out(out: Path, replace: bool, resumed_id: str | None) -> None:
    """A new or empty ``out`` (or the run's own, resumed), with no other run's checkpoint."""
    check_out(out, replace=replace, run_id=resumed_id)
    if resumed_id is None and (checkpoint_folder(out) / CHECKPOINT).is_file():
        raise fail("out", f"have no unfinished run's checkpoint beside it (resume it with "
                   f"--resume {out}, or delete {checkpoint_folder(out)})", str(out))


def _check_bounds(args: dict, spec: LearnerSpec) -> tuple[float | str, float | str, float]:
    """The bounds on ||x|| and |y - c| as declared (a float) or to release ("auto"), c
    the centre of a declared range ``y_bound="lo,hi"`` (else 0), and the budget of those
    released privately."""
    regression = spec.task == "regression"
    x_bound = parse_bound("x_bound", args["x_bound"])
    y_centre, y_bound = label_range(args["y_bound"], regression=regression)
    private = args["normalize"] == "private"  # the bounds are then released after scaling
    y_declared = y_bound if y_centre == 0.0 else "a range"
    if y_centre != 0.0 and args["normalize"] == "standardize":
        raise fail("y_bound", "be a bound, not a range, with normalize='standardize' (it "
                   "scales the labels by their own statistics)", args["y_bound"])
    for name, value, declared in (("x_bound", x_bound, x_bound),
                                  ("y_bound", args["y_bound"], y_declared)):
        if private and declared not in ("auto", 1.0):  # 1.0: the default, left unset
            raise fail(name, "be 'auto' or left unset with normalize='private' (the bounds "
                       "are released after the private scaling)", value)
    if x_bound == "auto" or y_bound == "auto" or private:
        _check_auto(args["bounds_budget"], args["epsilon"], args["normalize"],
                    y_bound == "auto" and not regression)
    return x_bound, y_bound, y_centre


def _check_auto(budget: float, epsilon: float, normalize: str, classifier: bool) -> None:
    check_real("bounds_budget", budget, low=0.0, high=1.0, low_open=True, high_open=True)
    if math.isinf(epsilon):
        raise fail("epsilon", "be finite for a bound 'auto' (a share of it estimates the "
                   "bound)", epsilon)
    if normalize == "standardize":
        raise fail("normalize", "be 'clip' or 'private' for a bound 'auto' (standardize "
                   "scales the rows to declared bounds)", normalize)
    if classifier:
        raise fail("y_bound", "be left unset for a classification learner (labels are "
                   "+-1, never clipped)", "auto")


def feature_arguments(spec: LearnerSpec, learner: str, fit_intercept: bool | None,
                      random_features: object, bandwidth: float | None) -> dict:
    """``make_learner``'s feature keywords of a run, checked before any data is read: an
    intercept by default for a linear learner, random features when asked."""
    if fit_intercept is None:
        fit_intercept = spec.linear
    random_features = check_features(learner, fit_intercept, random_features)
    if bandwidth is None:
        bandwidth = BANDWIDTH
    elif random_features is None:  # a flag that would change nothing
        raise fail("bandwidth", "be given only with random_features (the bandwidth of "
                   "their kernel)", bandwidth)
    check_real("bandwidth", bandwidth, low=0.0, low_open=True)
    return {"fit_intercept": fit_intercept, "random_features": random_features,
            "bandwidth": bandwidth}
