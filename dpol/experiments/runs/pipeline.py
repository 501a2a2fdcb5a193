"""``dpol run``: one learner on a table or a named data set, with regret and a report (L5).

:func:`run_learner` checks what it is asked (:mod:`.request`), then runs the stages of
:mod:`.stages` in turn: read → bounds and scaling → learner → scores → outputs (or, with
``chunk_rows``, the same in chunks: :mod:`.chunked`).

Writes into the output folder:

* ``iterates.npy`` — every released iterate, shape (T + 1, d) (d + 1 with the
  intercept, its coordinate last; D (+ 1) on random features): row t is the model
  released before element t + 1, the last row the model after the stream. This is the
  private output.
* ``losses.csv`` — per step: the loss suffered, the cumulative and average regret against
  the best fixed point in hindsight (:func:`dpol.adapters.comparator`).
* ``regret.png``, ``loss.png`` — average regret and running mean loss on log axes (symlog
  where a value is <= 0), beside the learner's non-private twin (``epsilon=inf``).
* ``report.md`` — the guarantee, the calibration and the noise, the parameters, the data
  and its normalisation, the results, the plots and the terms used.

Classification labels of K > 2 classes (whole numbers) are one-hot rows for the ridge
classifiers (``outputs=K``), scored by the class of the largest margin.
Classifiers are also scored by their online accuracy, and with ``test_fraction`` the
final model (``predict_one``: the post-processed releases,
:mod:`dpol.learners.postprocess`) by its held-out score
(:mod:`dpol.experiments.runs.scores`), beside the trivial baselines. Losses, regret,
scores and plots are computed from the raw stream: they are **not** private.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

from dpol._validation import fail
from dpol.experiments.report import ExperimentResult
from dpol.experiments.runs.checkpoint import check_resumed, load_checkpoint
from dpol.experiments.runs.chunked import run_chunked
from dpol.experiments.runs.output import find_checkpoint
from dpol.experiments.runs.request import RunRequest, check_request
from dpol.experiments.runs.stages import (
    bound_rows,
    fit_learners,
    publish,
    read_rows,
    score_run,
)

__all__ = ["resume_run", "run_learner", "run_request"]

#: run_learner's parameters that are not the run's arguments (nor saved with them)
_NOT_ARGS = ("progress", "_resumed", "_keep_checkpoint")


def run_learner(learner: str, data: object, out_dir: str | Path, *, epsilon: float = 1.0,
                delta: float | None = None, horizon: int | None = None, counter: str | None = None,
                seed: int | None = None, calibration: str = "tight",
                target_col: int | str | None = None, normalize: str = "clip",
                x_bound: float | str = 1.0,
                y_bound: float | str = 1.0, bounds_budget: float = 0.1,
                options: dict | None = None, baseline: bool = True,
                test_fraction: float | None = None,
                progress: Callable[..., None] | None = None,
                command: str | None = None, checkpoint_every: int | None = None,
                chunk_rows: int | None = None, fit_intercept: bool | None = None,
                random_features: int | None = None, bandwidth: float | None = None,
                replace: bool = False, fallback: bool = False,
                _resumed: dict | None = None, _keep_checkpoint: bool = False) -> ExperimentResult:
    """Run ``learner`` (a name of :data:`dpol.adapters.LEARNERS`) on ``data``; write outputs.

    ``horizon`` is the length the noise is calibrated for (default: the number of rows;
    a smaller value keeps the first ``horizon`` rows). ``baseline`` also runs the
    non-private twin for comparison. ``test_fraction`` holds out a fixed random share of
    the rows (:func:`~dpol.experiments.runs.scores.holdout_split`) on which the final
    released model is scored. ``progress(done, total, label)`` is called as rows are
    learned (``label``: the learner's name, then the twin's). ``command``, when given, is
    quoted in the report (how to reproduce it). The result's ``notes`` are what a user
    must not miss (heavy clipping, a horizon that is not the number of rows).

    ``seed`` None (default) draws the noise from fresh operating-system entropy, which
    nobody can replay; a seed makes the run reproducible and its guarantee *seeded*:
    private only against whoever does not know the seed (a named synthetic data set is
    generated with the public seed 0, never the noise's). The outputs appear in
    ``out_dir`` together or not at all (:mod:`dpol.experiments.runs.output`); a folder
    holding files is refused unless ``replace``. ``checkpoint_every`` saves the learners'
    state with their releases every that many rows into the folder ``OUT.checkpoint``
    beside ``out_dir``, owner-only and signed: it can de-noise the releases
    (:mod:`dpol.experiments.runs.checkpoint`); :func:`resume_run` continues from it, with
    releases identical to an uninterrupted run's, and it is removed once the outputs are
    published. ``chunk_rows`` reads and learns the file that many rows at a time
    (:mod:`dpol.experiments.runs.chunked`), for streams larger than memory; with
    ``checkpoint_every`` too, the checkpoints fall between chunks and hold no row
    (:mod:`dpol.experiments.runs.chunk_checkpoint`).

    ``fit_intercept`` (default: True for a linear learner, as in the adapters) runs the
    learner with an intercept (:class:`~dpol.learners.intercept.WithIntercept`; the
    iterates and the comparator then have d + 1 coordinates, the intercept's last);
    ``random_features`` = D runs it on D random Fourier features of the rows, with the
    kernel's ``bandwidth`` in units of the bound on ||x||
    (:class:`~dpol.learners.random_features.WithRandomFeatures`; default bandwidth
    its ``BANDWIDTH``, refused without ``random_features``: it would change nothing).
    ``fallback`` (classification learners) runs the learner inside the trivial fallback
    (:mod:`dpol.experiments.runs.fallback`): the final model predicts the private class
    prior unless the model's errors were privately below it; the guarantee includes its
    share of the budget.

    A bound ``"auto"`` is estimated privately from the rows the learner sees
    (:func:`~dpol.datasets.private_bounds.private_bounds`) with ``bounds_budget * epsilon``;
    the learner gets the rest, and the reported guarantee composes both. ``normalize=
    "private"`` scales the features (and a regression label) by quantiles released
    privately on that share, then releases the bounds
    (:func:`~dpol.datasets.private_scaling.private_scaling`); regret and scores are then
    in the scaled units.

    Examples
    --------
    >>> import tempfile
    >>> res = run_learner("pqftl", "synthetic-regression", tempfile.mkdtemp(), horizon=500,
    ...                   seed=0)
    >>> res.rows[0]["model"], round(res.rows[0]["average_regret"], 4), len(res.notes)
    ('pqftl', 0.2677, 1)
    >>> res.notes[0][:38]  # a seed given: the one note
    'the noise is seeded (--seed): whoever '
    """
    args = {k: v for k, v in locals().items() if k not in _NOT_ARGS}
    request = check_request(args, _resumed)
    check_resumed(request.args, _resumed)
    if request.chunk_rows is not None:  # streams larger than memory: another path
        return run_chunked(request, progress=progress, resumed=_resumed)
    rows = read_rows(request)
    bounded = bound_rows(request, rows, _resumed and _resumed["estimate"])
    fits = fit_learners(request, rows, bounded, _resumed, progress)
    return publish(request, rows, bounded, fits, score_run(request, rows, bounded, fits),
                   keep_checkpoint=_keep_checkpoint)


def run_request(learner: str, data: object, out_dir: str | Path, **kwargs) -> RunRequest:
    """The checked request :func:`run_learner` runs for these arguments (its defaults for
    the others): what each stage of :mod:`~dpol.experiments.runs.stages` takes, to run
    one alone.

    Examples
    --------
    >>> import tempfile
    >>> request = run_request("ridge", "synthetic-regression", tempfile.mkdtemp(), horizon=100)
    >>> request.learner, request.horizon, request.epsilon, request.features["fit_intercept"]
    ('ridge', 100, 1.0, True)
    """
    given = inspect.signature(run_learner).bind(learner, data, out_dir, **kwargs)
    given.apply_defaults()
    return check_request({k: v for k, v in given.arguments.items() if k not in _NOT_ARGS})


def resume_run(out_dir: str | Path, *, progress: Callable[..., None] | None = None
               ) -> ExperimentResult:
    """Continue the run whose checkpoint is beside the output folder ``out_dir`` (or in
    ``out_dir``, its checkpoint folder; see :func:`run_learner`).

    The data are read again and must be the same rows; bounds or scaling released
    privately before the stream come from the checkpoint (never released twice), and the
    learners continue from their saved state: the releases are those of an
    uninterrupted run with the same seed.
    """
    folder, out = find_checkpoint(out_dir)
    saved = load_checkpoint(folder)
    args = {**saved["args"], "out_dir": out}
    if saved.get("by_key"):
        raise fail("resume", "name a run of one learner (this one is by key: "
                   "dpol.experiments.runs.by_key.resume_any resumes either)", str(out_dir))
    return run_learner(**args, progress=progress, _resumed=saved)
