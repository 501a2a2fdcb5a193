"""One runner for sweeps (learners x epsilons x seeds): in-process or local processes."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from dpol._validation import check_int

__all__ = ["run_sweep"]


def _call(func: Callable, task: dict) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(**task)
    out = dict(out)
    out["warnings"] = "; ".join(sorted({type(w.message).__name__ for w in caught}))
    return out


def run_sweep(func: Callable[..., dict], tasks: Iterable[dict], *, workers: int = 1,
              progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """Run ``func(**task)`` for every task; results in task order.

    ``func`` must be a module-level function (picklable) when ``workers > 1``. Warnings a
    task raises (e.g. ``PaperCalibrationWarning``) are recorded in its result's
    ``warnings`` field instead of being lost in worker processes. ``progress(done, total)``
    is called once before the first task (``done = 0``: the total is known from the start)
    and after every task.

    Examples
    --------
    >>> run_sweep(dict, [{"a": 1}, {"a": 2}])
    [{'a': 1, 'warnings': ''}, {'a': 2, 'warnings': ''}]
    """
    tasks = list(tasks)
    workers = check_int("workers", workers, low=1)
    results: list[dict] = []
    if progress:
        progress(0, len(tasks))
    if workers == 1:
        for task in tasks:
            results.append(_call(func, task))
            if progress:
                progress(len(results), len(tasks))
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_call, func, task) for task in tasks]
        for future in futures:
            results.append(future.result())
            if progress:
                progress(len(results), len(tasks))
    return results
