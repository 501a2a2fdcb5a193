"""One runner for sweeps (learners x epsilons x seeds) on any engine (layer L5).

:func:`run_tasks` runs independent tasks on an engine of :mod:`dpol.experiments.sweeps.engines`
(local processes by default, Ray or Dask), hands each result over as it finishes and
resubmits a task whose worker died; :func:`run_sweep` is its ordered, list-returning
form, and :func:`using_engine` lets code that calls :func:`run_sweep` (the paper
experiments) run on an engine chosen by its caller (``dpol reproduce --backend ray``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import contextmanager

from dpol._validation import check_int
from dpol.experiments.sweeps.engines import open_engine

__all__ = ["run_sweep", "run_tasks", "using_engine"]

#: how many times a task whose worker died is resubmitted before the sweep gives up
RETRIES = 3

_ACTIVE: list = []  # the engine of the innermost ``using_engine`` block


def _call(func: Callable, task: dict) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(**task)
    out = dict(out)
    out["warnings"] = "; ".join(sorted({type(w.message).__name__ for w in caught}))
    return out


@contextmanager
def using_engine(backend: str = "local", workers: int = 1, address: str | None = None):
    """Run every :func:`run_sweep` inside the block on one engine, started once.

    Examples
    --------
    >>> with using_engine("local", workers=1) as engine:
    ...     run_sweep(dict, [{"a": 1}]), engine.describe()
    ([{'a': 1, 'warnings': ''}], 'local (this process)')
    """
    with open_engine(backend, workers, address) as engine:
        _ACTIVE.append(engine)
        try:
            yield engine
        finally:
            _ACTIVE.pop()


def run_tasks(engine, func: Callable, tasks: list, on_result: Callable[[int, object], None],
              *, retries: int = RETRIES) -> None:
    """Run ``func(task)`` for every task on ``engine``; ``on_result(i, result)`` as each ends.

    Results arrive in the order tasks finish. A task whose worker died (an exception of
    ``engine.lost``) is resubmitted, up to ``retries`` times; any other exception of a
    task propagates (after the engine drops the queued tasks). A ``KeyboardInterrupt``
    propagates the same way; results already handed over are kept by the caller.

    Examples
    --------
    >>> from dpol.experiments.sweeps.engines import open_engine
    >>> got = {}
    >>> with open_engine("local") as engine:
    ...     run_tasks(engine, abs, [-1, 2, -3], got.__setitem__)
    >>> sorted(got.items())
    [(0, 1), (1, 2), (2, 3)]
    """
    retries = check_int("retries", retries, low=0)
    pending = dict(enumerate(tasks))
    attempts = dict.fromkeys(pending, 0)
    while pending:
        futures = {engine.submit(func, task): i for i, task in pending.items()}
        while futures:
            done, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                i = futures.pop(future)
                try:
                    result = future.result()
                except engine.lost:
                    attempts[i] += 1
                    if attempts[i] > retries:
                        raise
                    continue  # stays pending: resubmitted in the next round
                del pending[i]
                on_result(i, result)


def run_sweep(func: Callable[..., dict], tasks: Iterable[dict], *, workers: int = 1,
              progress: Callable[[int, int], None] | None = None, backend: str = "local",
              address: str | None = None) -> list[dict]:
    """Run ``func(**task)`` for every task; results in task order.

    ``func`` must be a module-level function (picklable) when the tasks leave this
    process (``workers > 1``, ``backend`` ``"ray"`` or ``"dask"``). Warnings a task raises
    (e.g. ``PaperCalibrationWarning``) are recorded in its result's ``warnings`` field
    instead of being lost in worker processes. ``progress(done, total)`` is called once
    before the first task (``done = 0``: the total is known from the start) and after
    every task. Inside :func:`using_engine` the tasks run on its engine (``workers``,
    ``backend`` and ``address`` are then ignored); otherwise an engine is started for
    this call (:func:`~dpol.experiments.sweeps.engines.open_engine`).

    Examples
    --------
    >>> run_sweep(dict, [{"a": 1}, {"a": 2}])
    [{'a': 1, 'warnings': ''}, {'a': 2, 'warnings': ''}]
    """
    tasks = list(tasks)
    workers = check_int("workers", workers, low=1)
    results: dict[int, dict] = {}
    if progress:
        progress(0, len(tasks))

    def keep(i: int, result: dict) -> None:
        results[i] = result
        if progress:
            progress(len(results), len(tasks))

    if _ACTIVE:
        run_tasks(_ACTIVE[-1], _call_task, [(func, t) for t in tasks], keep)
    else:
        with open_engine(backend, workers, address) as engine:
            run_tasks(engine, _call_task, [(func, t) for t in tasks], keep)
    return [results[i] for i in range(len(tasks))]


def _call_task(job: tuple[Callable, dict]) -> dict:
    return _call(*job)
