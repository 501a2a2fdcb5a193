"""The sweeps' runner: a task whose worker died is resubmitted (up to ``retries`` times),
any other failure propagates, and results come back in task order with the warnings
each task raised."""

from __future__ import annotations

import warnings
from concurrent.futures import Future

import pytest

from dpol.errors import PaperCalibrationWarning
from dpol.experiments.sweeps.runner import run_sweep, run_tasks


class Lost(Exception):
    """A worker's death, as an engine reports it."""


class FlakyEngine:
    """An engine whose worker dies under task ``i`` the first ``deaths[i]`` times."""

    lost = Lost

    def __init__(self, deaths: dict[int, int]) -> None:
        self.deaths, self.calls = dict(deaths), []

    def submit(self, func, task):
        self.calls.append(task)
        future = Future()
        if self.deaths.get(task, 0) > 0:
            self.deaths[task] -= 1
            future.set_exception(Lost(f"worker of task {task} died"))
        else:
            future.set_result(func(task))
        return future


def test_a_task_whose_worker_died_is_resubmitted_up_to_the_retries():
    engine, got = FlakyEngine({1: 3}), {}
    run_tasks(engine, lambda t: 10 * t, [0, 1, 2], got.__setitem__, retries=3)
    assert got == {0: 0, 1: 10, 2: 20} and engine.calls.count(1) == 4  # 3 deaths, 1 run
    with pytest.raises(Lost, match="worker of task 1 died"):  # a fourth death: given up
        run_tasks(FlakyEngine({1: 4}), lambda t: t, [0, 1], {}.__setitem__, retries=3)


def test_a_task_that_raises_is_not_retried():
    def fail(task):
        raise ValueError(f"task {task}")

    engine = FlakyEngine({})
    with pytest.raises(ValueError, match="task 0"):
        run_tasks(engine, fail, [0], {}.__setitem__)
    assert engine.calls == [0]


def _warns(a: int) -> dict:
    if a % 2:
        warnings.warn("as printed", PaperCalibrationWarning, stacklevel=1)
    return {"a": a}


def test_results_come_in_task_order_with_their_warnings():
    seen = []
    out = run_sweep(_warns, [{"a": a} for a in range(4)],
                    progress=lambda done, total: seen.append((done, total)))
    assert out == [{"a": a, "warnings": "PaperCalibrationWarning" if a % 2 else ""}
                   for a in range(4)]
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]  # the total known at once
