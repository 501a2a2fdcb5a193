"""dpol sweep on local processes: bad input refused by the Python API, resume, faults
(the command line's refusals: tests/cli/test_cli_sweep.py)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_cases import SLOW, TINY, config, reference_results, results

from dpol.errors import InvalidInputError
from dpol.experiments.sweeps.config import SweepConfig, load_config
from dpol.experiments.sweeps.sweep import SweepInterrupted, sweep

typer_testing = pytest.importorskip("typer.testing")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return reference_results(tmp_path_factory.mktemp("reference"))


def test_the_python_api_refuses_the_same_input():
    # the same rules as the command line (tests/cli/test_cli_sweep.py)
    with pytest.raises(InvalidInputError, match=r"grid\.seeds must be a non-empty list"):
        sweep(config({**TINY, "grid": {**TINY["grid"], "seeds": 0}}))
    with pytest.raises(InvalidInputError, match="workers must be"):
        sweep(config(TINY), workers=-1)


def test_cells_are_written_once_and_a_rerun_skips_them(tmp_path, reference):
    store = tmp_path / "s.sqlite"
    cfg = config(TINY)
    first = sweep(cfg, workers=2, store=store)
    assert (first.total, first.done, first.failed, first.skipped) == (len(cfg.cells),) * 2 + (
        0, 0)
    assert results(store) == reference[0]  # two local processes: the same bits
    lost = next(iter(reference[0]))  # a crash before this cell's commit: it is not there
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM cells WHERE key = ?", (lost,))
    again = sweep(cfg, workers=2, store=store)
    assert (again.skipped, again.done) == (len(cfg.cells) - 1, 1)
    assert results(store) == reference[0]


def test_a_cell_that_raises_is_recorded_and_the_rest_go_on(tmp_path, reference):
    cfg = config(TINY)
    bad = {**cfg.cells[0], "dataset": "no-such-set"}  # past the config check: fails in its task
    summary = sweep(SweepConfig([bad, *cfg.cells], tmp_path / "s.sqlite"), workers=2)
    assert (summary.done, summary.failed) == (len(cfg.cells), 1)
    rows = results(tmp_path / "s.sqlite")
    failed = [r for r in rows.values() if r["status"] == "failed"]
    assert len(failed) == 1 and "dataset must be one of" in failed[0]["error"]
    assert failed[0]["traceback"].startswith("Traceback")
    assert {k: v for k, v in rows.items() if v["status"] == "done"} == reference[0]


def test_a_killed_worker_is_replaced_and_its_task_rerun(tmp_path, reference):
    killed = []

    def kill_one_worker(done: int, total: int) -> None:
        if done == 1 and not killed:  # the other worker, and this one's next cell, mid-task
            victim = multiprocessing.active_children()[0]
            os.kill(victim.pid, signal.SIGKILL)
            killed.append(victim.pid)

    summary = sweep(config(SLOW), workers=2, store=tmp_path / "s.sqlite",
                    progress=kill_one_worker)
    assert killed and (summary.done, summary.failed) == (6, 0)
    assert results(tmp_path / "s.sqlite") == reference[1]
    with sqlite3.connect(tmp_path / "s.sqlite") as db:  # a fresh pool ran the retried cells
        pids = {w.split(":")[1] for (w,) in db.execute("SELECT worker FROM cells")}
    assert len(pids) > 2


def test_ctrl_c_stops_cleanly_and_keeps_finished_cells(tmp_path, reference):
    # 72 cells, about 6 s on 2 workers: 18 took 1.4 s and, on a loaded machine, all
    # finished before the Ctrl-C landed
    cells = 72
    raw = dict(SLOW, grid={**SLOW["grid"], "seeds": list(range(cells // 3))})
    lines = [f"horizon = {raw['horizon']}", "[grid]"] + [
        f"{k} = {v!r}".replace("'", '"') for k, v in raw["grid"].items()] + ["[run]",
                                                                              "workers = 2"]
    path = tmp_path / "sweep.toml"
    path.write_text("\n".join(lines) + "\n")
    store = path.with_suffix(".sqlite")
    proc = subprocess.Popen([sys.executable, "-c", "from dpol.cli import main; main()",
                             "sweep", str(path)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=terminal_sigint,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_done(store)) < 2:
        time.sleep(0.2)
    sent = time.monotonic()
    done_then = len(_done(store))
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=60)
    if proc.returncode == 0 and done_then >= cells - 2:  # pragma: no cover - a loaded host
        pytest.skip(f"the sweep had {done_then} of {cells} cells when Ctrl-C was sent")
    assert proc.returncode == 130, (done_then, round(time.monotonic() - sent, 2), out, err)
    message = [line for line in err.splitlines() if line.startswith("dpol sweep:")]
    assert len(message) == 1 and "cells kept in" in message[0], err
    assert "Traceback" not in err
    kept = _done(store)
    assert 2 <= len(kept) < cells
    summary = sweep(load_config(path), workers=2)  # the rerun finishes the others
    assert (summary.skipped, summary.done) == (len(kept), cells - len(kept))
    assert {k: r for k, r in results(store).items() if k in reference[1]} == reference[1]


def terminal_sigint() -> None:
    """In the child before exec: SIGINT at its default and unblocked, as a terminal's
    foreground job has it. A test run started in the background (a script's '&', a
    non-interactive shell) has SIGINT ignored, every child inherits that, and Python
    then installs no KeyboardInterrupt: the child ran on through its Ctrl-C (reproduced
    by running a test under an ignored SIGINT). The test run's own state must not
    decide what the test measures."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _done(store: Path) -> set[str]:
    if not store.exists():
        return set()
    try:
        with sqlite3.connect(store) as db:
            return {k for (k,) in db.execute("SELECT key FROM cells WHERE status = 'done'")}
    except sqlite3.OperationalError:  # the driver is creating the table
        return set()


def test_interrupted_in_process_keeps_what_finished(tmp_path, reference):
    def stop_after_three(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(SweepInterrupted, match=f"3 of {len(reference[0])} cells kept"):
        sweep(config(TINY), workers=1, store=tmp_path / "s.sqlite", progress=stop_after_three)
    kept = results(tmp_path / "s.sqlite")
    assert len(kept) == 3 and all(reference[0][k] == v for k, v in kept.items())


@pytest.mark.parametrize(("backend", "module"), [("ray", "ray"), ("dask", "distributed")])
def test_a_missing_engine_is_named_before_the_store_is_opened(tmp_path, monkeypatch, backend,
                                                              module):
    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=rf"needs the '{backend}' extra: pip install"):
        sweep(config(TINY), backend=backend, store=tmp_path / "s.sqlite")
    assert not (tmp_path / "s.sqlite").exists()


#: a driver of two local workers, each asleep in a task for a minute
SLEEPER = """
import os, sys, time
from dpol.experiments.sweeps.engines import open_engine
from dpol.experiments.sweeps.runner import run_tasks

def nap(seconds):  # a file per task says it started (forked workers know __main__)
    open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
    time.sleep(seconds)

with open_engine("local", 2) as engine:
    engine.in_process = False
    run_tasks(engine, nap, [60, 60], lambda i, r: None)
"""


def test_a_killed_driver_leaves_no_worker(tmp_path):
    psutil = pytest.importorskip("psutil")
    from dpol.experiments.sweeps.engines.local_engine import DRIVER_POLL

    # SIGKILL and SIGTERM end the driver with no cleanup (its workers slept on for ever:
    # they watch it now); SIGINT ends the sweep, which ends its workers (no longer after
    # their tasks). Three drivers at once: one start-up's time
    signals = (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
    started = {sig: tmp_path / sig.name for sig in signals}
    for folder in started.values():
        folder.mkdir()
    drivers = {sig: subprocess.Popen([sys.executable, "-c", SLEEPER, str(started[sig])],
                                     cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                     stderr=subprocess.DEVNULL, preexec_fn=terminal_sigint)
               for sig in signals}
    workers = {}
    try:
        deadline = time.monotonic() + 90
        for sig, proc in drivers.items():
            # both workers in their task's sleep (each wrote its file): the pool is up, no
            # fork of the driver is left (a SIGINT during a fork is lost by Python), and
            # the driver waits on its tasks
            while len(list(started[sig].iterdir())) < 2:
                assert time.monotonic() < deadline, f"{sig.name}: its tasks never started"
                time.sleep(0.05)
            workers[sig] = psutil.Process(proc.pid).children()
        for sig, proc in drivers.items():
            os.kill(proc.pid, sig)
        for sig, proc in drivers.items():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the driver sent {sig.name} still runs after 30 s")
        # each worker sees its parent gone within DRIVER_POLL s; the rest is the time a
        # loaded machine takes to schedule it (1-2 s at a load of 13 on 2 CPUs)
        _, alive = psutil.wait_procs([k for ks in workers.values() for k in ks],
                                     timeout=DRIVER_POLL + 10)
        assert not alive, {sig.name: [k.pid for k in ks if k in alive]
                           for sig, ks in workers.items()}
        assert all(len(ks) == 2 for ks in workers.values())
    finally:
        for proc in drivers.values():  # reaped, so no later test meets a live Popen
            proc.kill()
            proc.wait(timeout=30)
        for kids in workers.values():
            for kid in kids:
                with contextlib.suppress(psutil.NoSuchProcess):
                    kid.kill()
