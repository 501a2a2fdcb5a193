"""What ``dpol run`` scores and says besides regret (layer L5).

* the online (prequential) accuracy of a classifier, and the final released model's
  held-out score on a fixed split, beside the trivial baselines (majority class, mean
  label, predict 0); with K > 2 classes (one-hot label rows, K margins a prediction) a
  prediction is the class of the largest margin (:func:`class_options`, :func:`hits`);
* the console notes a user must not miss: more than :data:`CLIP_NOTE_SHARE` of the rows
  clipped to the declared bounds, and a horizon that differs from the rows the learner saw.

Everything here is computed from the raw data: it is not private (like the regret).
"""

from __future__ import annotations

import math

import numpy as np

from dpol._clip_warning import (
    ROWS_TRADE_OFF,
    SUGGEST_SHARE,
    far_from_zero,
    label_offset_advice,
    suggested_range,
)
from dpol._validation import check_real, fail
from dpol.adapters._multi_class import MULTI_CLASS_LEARNERS
from dpol.datasets.files import Clipping
from dpol.evaluation import prequential_accuracy
from dpol.experiments.runs.request import interval_text

__all__ = ["CLIP_NOTE_SHARE", "SEEDED_NOTE", "SPLIT_SEED",
           "class_options", "clip_note", "heldout_scores", "hits", "holdout_split",
           "horizon_note", "online_accuracy", "run_notes", "silent_note", "summary_row",
           "trivial_rows", "zero_row"]

#: the held-out split is drawn with this seed, whatever the noise seed: every run of a file
#: is scored on the same rows
SPLIT_SEED = 0
#: clipping of more than this share of the rows is said on the console
CLIP_NOTE_SHARE = 0.05
#: what a run with --seed must not miss: its noise can be recomputed from the seed
SEEDED_NOTE = ("the noise is seeded (--seed): whoever knows or guesses the seed can "
               "recompute the noise and subtract it, so the guarantee holds only while the "
               "seed stays secret (a small seed is found by trying seeds); never publish it "
               "with the outputs, and leave --seed out for noise from fresh "
               "operating-system entropy")


def class_options(learner: str, y: np.ndarray, options: dict | None,
                  calibration: str = "tight") -> dict | None:
    """The learner's options for labels ``y``: ``outputs=K`` added for one-hot rows
    (n, K); refused for a learner that fits two classes only (one line naming the
    learner and the learners that fit K classes), a given ``outputs`` that is not K, or
    the paper's calibration (JKT's noise is for scalar labels).

    Examples
    --------
    >>> class_options("ridge_classifier", np.eye(3), None)
    {'outputs': 3}
    >>> class_options("igd", np.eye(3), None)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: learner must be one of ridge_classifier,
    ridge_classifier_rff (the learners that fit K > 2 classes) for labels of 3 classes;
    got 'igd'
    """
    if np.ndim(y) == 1:
        return options
    k = np.shape(y)[1]
    if learner not in MULTI_CLASS_LEARNERS:
        raise fail("learner", f"be one of {', '.join(MULTI_CLASS_LEARNERS)} (the learners "
                   f"that fit K > 2 classes) for labels of {k} classes", learner)
    if calibration == "paper":  # said here: the user never typed outputs=K
        raise fail("calibration", f"be 'tight' for labels of {k} classes (the paper's "
                   "calibration is for scalar labels)", calibration)
    if (options or {}).get("outputs", k) != k:
        raise fail("options", f"leave outputs unset or {k}, the classes of the labels",
                   options)
    return {**(options or {}), "outputs": k}


def holdout_split(n_rows: int, test_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, test): a fixed random ``test_fraction`` of the rows held out.

    The training rows keep their order (the stream's order is part of online learning);
    the split is drawn with :data:`SPLIT_SEED`.

    Examples
    --------
    >>> train, test = holdout_split(10, 0.2)
    >>> train.tolist(), test.tolist()
    ([0, 1, 2, 3, 4, 5, 8, 9], [6, 7])
    >>> holdout_split(10, 0.01)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: test_fraction must leave at least one of the 10 rows on
    each side of the split; got 0.01
    """
    fraction = check_real("test_fraction", test_fraction, low=0.0, high=1.0, low_open=True,
                          high_open=True)
    n_test = round(fraction * n_rows)
    if not 1 <= n_test <= n_rows - 1:
        raise fail("test_fraction", f"leave at least one of the {n_rows} rows on each side "
                   "of the split", test_fraction)
    held = np.zeros(n_rows, dtype=bool)
    held[np.random.default_rng(SPLIT_SEED).choice(n_rows, n_test, replace=False)] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def hits(predictions: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Which predictions name their label: the sign for labels +-1 (0 is a mistake);
    for label rows (n, K) the class of the row's largest entry must score strictly
    above every other class (a tie, as at w = 0, is a mistake).

    Examples
    --------
    >>> hits(np.array([[0.1, 0.7, 0.2], [0.0, 0.0, 0.0]]), np.eye(3)[[1, 0]]).tolist()
    [True, False]
    """
    if np.ndim(y) == 1:
        return np.sign(predictions) == y
    true = np.argmax(y, axis=1)
    own = predictions[np.arange(len(y)), true]
    others = np.where(np.arange(y.shape[1]) == true[:, None], -np.inf, predictions)
    return own > others.max(axis=1)


def online_accuracy(predictions: np.ndarray, y: np.ndarray) -> float:
    """Share of the labels whose sign the model released before them predicted (K
    classes: whose class it gave the largest margin, :func:`hits`).

    A prediction of exactly 0 (the first, ``w = 0``) counts as a mistake.

    Examples
    --------
    >>> online_accuracy(np.array([0.0, 0.4, -0.2, 0.9]), np.array([1.0, 1.0, 1.0, -1.0]))
    0.25
    """
    if np.ndim(y) == 2:
        return float(np.mean(hits(predictions, y)))
    return prequential_accuracy(predictions, y).final


def _r2(pred: np.ndarray, y: np.ndarray) -> float:
    total = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((pred - y) ** 2)) / total if total > 0.0 else math.nan


def heldout_scores(pred: np.ndarray, y: np.ndarray, classification: bool) -> dict:
    """Accuracy of ``sign(pred)`` (0 counts as a mistake), or MSE and R^2 of ``pred``.

    R^2 = 1 - SSE / SST with SST about the held-out mean (scikit-learn's ``r2_score``):
    predicting the held-out mean scores 0, anything worse is negative.

    Examples
    --------
    >>> heldout_scores(np.array([0.5, -1.0, 0.0]), np.array([1.0, 1.0, -1.0]), True)
    {'heldout_accuracy': 0.3333333333333333}
    >>> heldout_scores(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]), False)
    {'heldout_mse': 0.3333333333333333, 'heldout_r2': 0.7857142857142857}
    """
    if classification:
        return {"heldout_accuracy": float(np.mean(hits(pred, y)))}
    return {"heldout_mse": float(np.mean((pred - y) ** 2)), "heldout_r2": _r2(pred, y)}


def summary_row(label: str, trace, ref: np.ndarray) -> dict:
    """A learner's row: its guarantee, average and final regret and mean loss, beside the
    mean loss of the comparator (``ref``: its loss at every step).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> trace = SimpleNamespace(losses=np.array([0.5, 0.3]), regret=np.array([0.2, 0.4]),
    ...                         privacy="(1, 0)-DP")
    >>> summary_row("igd", trace, np.array([0.3, 0.1]))["average_regret"]
    0.2
    """
    n = len(trace.losses)
    return {"model": label, "guarantee": str(trace.privacy),
            "average_regret": float(trace.regret[-1] / n), "final_regret": float(trace.regret[-1]),
            "mean_loss": float(trace.losses.mean()), "comparator_mean_loss": float(ref.mean())}


def zero_row(losses: np.ndarray, ref: np.ndarray, centre: float = 0.0) -> dict:
    """The row of predicting 0 (``losses``: its loss at every step), the regret against
    the comparator's (``ref``); with a declared label range, 0 is its ``centre``.

    Examples
    --------
    >>> zero_row(np.array([0.5, 0.5]), np.array([0.25, 0.125]))["final_regret"]
    0.625
    """
    return {"model": f"predict {centre:g} (trivial)", "guarantee": "(0, 0)-DP",
            "average_regret": float(np.mean(losses - ref)),
            "final_regret": float(np.sum(losses - ref)), "mean_loss": float(losses.mean()),
            "comparator_mean_loss": float(ref.mean())}


def trivial_rows(y: np.ndarray, raw_train: np.ndarray, test_y: np.ndarray | None,
                 classification: bool, zero: dict) -> list[dict]:
    """The trivial baselines' rows: ``zero`` (predict 0, with its losses) first.

    Classification: the majority label of the training rows, online accuracy its share of
    the stream (in hindsight: no constant classifier does better), held out its share of
    the test rows. Regression, with a test set: the mean of the raw (unclipped) training
    labels. Predict 0 scores a held-out MSE and R^2 (regression; for classification its
    sign is no label).

    Examples
    --------
    >>> rows = trivial_rows(np.array([1.0, 1.0, -1.0]), np.array([1.0, 1.0, -1.0]),
    ...                     np.array([-1.0, 1.0]), True, {"model": "predict 0"})
    >>> [(r["model"], r.get("accuracy"), r.get("heldout_accuracy")) for r in rows]
    [('predict 0', nan, nan), ('majority class (trivial)', 0.6666666666666666, 0.5)]
    """
    zero = dict(zero)
    if classification:
        if np.ndim(y) == 2:  # one-hot rows: the most frequent class (ties: the first)
            label = int(np.argmax(np.sum(raw_train > 0, axis=0)))
        else:
            label = 1.0 if np.mean(raw_train) >= 0.0 else -1.0
        zero["accuracy"] = math.nan
        majority = {"model": "majority class (trivial)", "guarantee": "(0, 0)-DP",
                    "accuracy": _share(y, label)}
        if test_y is not None:
            zero["heldout_accuracy"] = math.nan
            majority["heldout_accuracy"] = _share(test_y, label)
        return [zero, majority]
    if test_y is None:
        return [zero]
    zero.update(heldout_scores(np.zeros_like(test_y), test_y, False))
    mean = {"model": "mean label (trivial)", "guarantee": "(0, 0)-DP",
            **heldout_scores(np.full_like(test_y, float(np.mean(raw_train))), test_y, False)}
    return [zero, mean]


def _share(y: np.ndarray, label: float | int) -> float:
    """The share of labels +-1 equal to ``label``, or of one-hot rows of class ``label``."""
    return float(np.mean((np.argmax(y, axis=1) if np.ndim(y) == 2 else y) == label))


def released_parts(estimate: object) -> tuple[str, ...]:
    """The parts ("x", "y") whose bound a private estimate released (none: ``()``)."""
    if estimate is None:
        return ()
    return tuple(k for k, b in (("x", estimate.x_bound), ("y", estimate.y_bound))
                 if b is not None)


def run_notes(request, rows, bounded, fits, guarantee) -> list[str]:
    """What a user of ``dpol run`` must not miss, the cause before its effect (the stages'
    request, rows, bounds and fits; the run's guarantee). Labels far from 0 (or declared
    by a range) are told a range to declare, not a bound (``--y-bound lo,hi``)."""
    estimate, trace, classification = bounded.estimate, fits.trace, request.classification
    y_range = offset = None
    if not classification:
        raw = rows.y[rows.train] + request.y_centre  # the labels as in the file
        if request.y_centre or far_from_zero(raw):
            y_range = suggested_range(raw)
        offset = label_offset_advice(bounded.y[rows.train], "declare their range, --y-bound "
                                     + ("{:g},{:g}".format(*y_range) if y_range else "lo,hi"),
                                     "--normalize private")
    said = [estimate and estimate.note(), offset,
            clip_note(bounded.clip, trace.n_clipped, classification,
                      released=released_parts(estimate), centre=request.y_centre,
                      y_range=y_range),
            horizon_note(rows.horizon, len(bounded.stream.y), rows.available,
                         0 if rows.test is None else len(rows.test)),
            silent_note(request.learner, bool(np.any(trace.prequential_predictions)),
                        rows.test is None)]
    return [n for n in said if n] + ([SEEDED_NOTE] if guarantee.seeded else [])


def clip_note(clip: Clipping, by_learner: int, classification: bool, *,
              released: tuple[str, ...] = (), centre: float = 0.0,
              y_range: tuple[float, float] | None = None) -> str | None:
    """The console line when more than :data:`CLIP_NOTE_SHARE` of the rows were clipped.

    It counts x and y apart (y only for regression: +-1 labels are never clipped) and
    suggests a bound for each declared part of which more than 2.5% was clipped, one that
    at most 2.5% of the raw values exceed, so following every suggestion ends the note.
    A part whose bound was ``released`` privately ("x", "y") gets no suggestion (one read
    from the raw data is neither private nor, after private scaling, in its units): the
    note says when that estimate, not a declared bound, clipped the rows. ``centre``: a
    declared range's (the labels were clipped to it); ``y_range``: the labels' range to
    suggest in place of a bound (the narrowest that leaves at most 2.5% of the raw
    labels outside, :func:`dpol._clip_warning.suggested_range`).

    Examples
    --------
    >>> clip = Clipping(442, 0, 442, 442, 1.0, 1.0, 0.2, 310.0)
    >>> print(clip_note(clip, 0, False))  # doctest: +NORMALIZE_WHITESPACE
    442 of 442 rows (100%) were clipped to the bounds: ||x|| > 1 in 0 rows, |y| > 1 in
    442. Suggested: --y-bound 310 (at most 2.5% of the raw |y| exceed it). The suggestion
    is computed from the raw data: it is for the data holder to judge, not a private
    release.
    >>> print(clip_note(Clipping(1250, 1211, 0, 1211, 1.0, 3e5, 2.6, 0.9), 0, False,
    ...                 released=("y",)))  # doctest: +NORMALIZE_WHITESPACE
    1211 of 1250 rows (97%) were clipped to the bounds: ||x|| > 1 in 1211 rows, |y| >
    300000 (released privately) in 0. Suggested: --bound 2.6 (at most 2.5% of the raw row
    norms exceed it). The suggestion is computed from the raw data: it is for the data
    holder to judge, not a private release. A larger bound costs noise in proportion,
    and clipping rows only rescales them: compare held-out scores (--test-fraction)
    before following it.
    >>> clip_note(Clipping(100, 5, 0, 5, 1.0, 1.0, 1.0, 0.9), 0, False) is None  # 5%: not more
    True
    >>> print(clip_note(Clipping(400, 0, 40, 40, 1.0, 30.0, 0.9, 45.0), 0, False, centre=50.0,
    ...                 y_range=(10.0, 95.0)))  # doctest: +NORMALIZE_WHITESPACE
    40 of 400 rows (10%) were clipped to the bounds: ||x|| > 1 in 0 rows, y outside [20,
    80] in 40. Suggested: --y-bound 10,95 (at most 2.5% of the raw labels fall outside
    it). The suggestion is computed from the raw data: it is for the data holder to judge,
    not a private release.
    """
    if clip.rows == 0 or max(clip.clipped, by_learner) <= CLIP_NOTE_SHARE * clip.rows:
        return None
    mark = {k: " (released privately)" if k in released else "" for k in ("x", "y")}
    parts = [f"||x|| > {clip.x_bound:g}{mark['x']} in {clip.x_over} rows"]
    if not classification:
        label = f"y outside {interval_text(centre, clip.y_bound)}" if centre \
            else f"|y| > {clip.y_bound:g}"
        parts.append(f"{label}{mark['y']} in {clip.y_over}")
    if by_learner:
        parts.append(f"then {by_learner} by the learner to its own bounds")
    clipped = clip.clipped
    share = {"x": clip.x_over / clip.rows, "y": 0.0 if classification else clip.y_over / clip.rows}
    # each declared part over SUGGEST_SHARE: following them all leaves at most CLIP_NOTE_SHARE
    keys = [k for k, s in share.items() if s > SUGGEST_SHARE and k not in released]
    low = [k for k in released if share.get(k, 0.0) > CLIP_NOTE_SHARE]
    suggest = {"x": (f"--bound {clip.x_suggested:g}", "row norms"),
               "y": (f"--y-bound {clip.y_suggested:g}", "|y|")}
    text = (f"{clipped} of {clip.rows} rows ({100.0 * clipped / clip.rows:.0f}%) were clipped "
            f"to the bounds: {', '.join(parts)}.")
    at_most = f"at most {100 * SUGGEST_SHARE:g}% of the raw"
    if keys and y_range is not None and "y" in keys:  # a range: its own phrase
        said = [f"{suggest['x'][0]} ({at_most} {suggest['x'][1]} exceed it)"] * ("x" in keys)
        said.append(f"--y-bound {y_range[0]:g},{y_range[1]:g} ({at_most} labels fall "
                    "outside it)")
        text += f" Suggested: {' and '.join(said)}."
    elif keys:
        text += (f" Suggested: {' and '.join(suggest[k][0] for k in keys)} ({at_most} "
                 f"{' and of the raw '.join(suggest[k][1] for k in keys)} exceed "
                 f"{'each' if len(keys) > 1 else 'it'}).")
    if keys:
        text += (" The suggestion is computed from the raw data: it is for the data holder "
                 "to judge, not a private release.")
        if "x" in keys:
            text += f" {ROWS_TRADE_OFF} (--test-fraction) before following it."
    if low:
        what = " and ".join("||x||" if k == "x" else "|y|" for k in low)
        flags = " and ".join("--bound" if k == "x" else "--y-bound" for k in low)
        text += (f" The private estimate of {what} landed below the data: declare {flags} "
                 "or give the estimate a larger --bounds-budget.")
    return text


def horizon_note(horizon: int, used: int, available: int, held_out: int) -> str | None:
    """The console line when the horizon is not the number of rows the learner saw.

    Examples
    --------
    >>> print(horizon_note(150, 150, 200, 0))
    -T 150: the learner saw the first 150 of the 200 rows; the other 50 were not used.
    >>> horizon_note(200, 200, 200, 0) is None
    True
    """
    rows = f"{available} training rows ({held_out} more held out)" if held_out else \
        f"{available} rows"
    if used < available:
        return (f"-T {horizon}: the learner saw the first {used} of the {rows}; the other "
                f"{available - used} were not used.")
    if horizon > used:
        return (f"-T {horizon}: the noise is calibrated for {horizon} rows, more than the "
                f"{used} the learner saw: more noise than these rows need.")
    return None


def silent_note(learner: str, spoke: bool, hint: bool) -> str | None:
    """The console line when the learner predicted 0 for every row of the stream (e.g.
    POL, which releases its model only after the last row): its online scores (accuracy
    0, predict 0's loss) then say nothing about its model. ``hint``: point to
    ``--test-fraction`` (not where the run has a held-out split already, nor in chunks,
    which refuse one).

    Examples
    --------
    >>> print(silent_note("pol", False, True))  # doctest: +NORMALIZE_WHITESPACE
    pol predicted 0 for every row of the stream (its releases before the last row do not
    depend on the data), so its online scores are those of predict 0; --test-fraction
    scores its final model.
    >>> silent_note("pqftl", True, False) is None
    True
    """
    if spoke:
        return None
    return (f"{learner} predicted 0 for every row of the stream (its releases before the "
            "last row do not depend on the data), so its online scores are those of "
            "predict 0" + ("; --test-fraction scores its final model." if hint else "."))

