"""dpol sweep on real Ray and Dask engines (2 CPUs each, one start per engine): the same
bits as local processes, and a worker killed with SIGKILL mid-task is retried."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from sweep_cases import SLOW, TINY, config, reference_results, results

from dpol.errors import InvalidInputError
from dpol.experiments.sweeps.config import load_config
from dpol.experiments.sweeps.runner import run_sweep
from dpol.experiments.sweeps.sweep import SweepInterrupted, sweep

psutil = pytest.importorskip("psutil")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return reference_results(tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def ray_engine():
    """A local Ray instance; the engine reuses it (``ray.init`` is not called again)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})

    def busy() -> list[int]:  # Ray names a worker after the task it runs
        return [p.pid for p in psutil.process_iter(["cmdline"])
                if any("ray::run_cell" in part for part in p.info["cmdline"] or [])]

    yield {"backend": "ray"}, busy
    ray.shutdown()


@pytest.fixture(scope="module")
def dask_engine():
    """A ``LocalCluster`` of 2 worker processes, joined by its address (as --address does)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:

        def busy() -> list[int]:  # both workers hold a cell when the first result is in
            return list(client.run(os.getpid).values())

        yield {"backend": "dask", "address": cluster.scheduler_address}, busy


@pytest.fixture(params=["ray", "dask"])
def engine(request):
    return request.getfixturevalue(f"{request.param}_engine")


def test_same_bits_as_local_processes(tmp_path, reference, engine):
    engine, _ = engine
    summary = sweep(config(TINY), store=tmp_path / "s.sqlite", **engine)
    assert (summary.done, summary.failed, summary.backend) == (len(reference[0]), 0,
                                                                engine["backend"])
    assert results(tmp_path / "s.sqlite") == reference[0]
    # the paper experiments' runner (dpol reproduce --backend) goes through the same engine
    assert run_sweep(dict, [{"a": 1}, {"a": 2}], **engine) == [
        {"a": 1, "warnings": ""}, {"a": 2, "warnings": ""}]


def test_a_worker_killed_mid_task_is_retried(tmp_path, reference, engine):
    engine, busy = engine
    killed = []

    def kill_a_busy_worker(done: int, total: int) -> None:
        if done < 1 or killed:
            return
        # under load the freed worker may not have taken its next cell yet when the first
        # result lands: wait for one to be running a cell (a few seconds at most), else
        # try again at the next result (the test then fails on `killed` if none ever is)
        deadline = time.monotonic() + 5.0
        while not (victims := busy()) and time.monotonic() < deadline:
            time.sleep(0.05)
        if victims:
            os.kill(victims[0], signal.SIGKILL)
            killed.append(victims[0])

    summary = sweep(config(SLOW), store=tmp_path / "s.sqlite", progress=kill_a_busy_worker,
                    **engine)
    assert killed and (summary.done, summary.failed) == (len(reference[1]), 0)
    assert results(tmp_path / "s.sqlite") == reference[1]


def test_interrupted_sweep_keeps_finished_cells_and_a_rerun_ends_it(tmp_path, reference,
                                                                     engine):
    engine, _ = engine

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt  # as Ctrl-C in the driver: queued cells are cancelled

    with pytest.raises(SweepInterrupted, match="cells kept in"):
        sweep(config(SLOW), store=tmp_path / "s.sqlite", progress=stop_after_two, **engine)
    kept = results(tmp_path / "s.sqlite")
    assert len(kept) == 2 and all(reference[1][k] == v for k, v in kept.items())
    summary = sweep(config(SLOW), store=tmp_path / "s.sqlite", **engine)  # the rerun
    assert (summary.skipped, summary.done) == (2, len(reference[1]) - 2)
    assert results(tmp_path / "s.sqlite") == reference[1]


def test_the_sweeps_tutorials_grid_gives_the_local_cells_on_ray(ray_engine, tmp_path):
    # docs/tutorials/sweeps.md shows its Ray command without running it at every build (a
    # Ray start costs about 20 s of CPU): its grid runs here, on this module's Ray, and
    # must give the local run's cells bit for bit (the command line is a thin call of
    # sweep(), whose --backend ray path the tests above cover)
    page = (ROOT / "docs" / "tutorials" / "sweeps.md").read_text()
    toml = re.search(r"cat > grid.toml <<'TOML'\n(.*?)\nTOML\n", page, re.S).group(1)
    (tmp_path / "grid.toml").write_text(toml)
    grid = load_config(tmp_path / "grid.toml")
    assert len(grid.cells) == 12  # as the page says
    sweep(grid, workers=1, store=tmp_path / "local.sqlite")
    kwargs, _ = ray_engine
    sweep(grid, store=tmp_path / "ray.sqlite", workers=2, **kwargs)
    assert results(tmp_path / "ray.sqlite") == results(tmp_path / "local.sqlite")


def test_a_dask_worker_without_dpol_is_named_before_the_store(dask_engine, tmp_path):
    distributed = pytest.importorskip("distributed")
    engine, _ = dask_engine
    def hide() -> None:  # as on a node without dpol: its import fails (sent by value)
        sys.modules["_dpol"] = sys.modules.get("dpol")  # None until a cell ran there
        sys.modules["dpol"] = None

    def restore() -> None:  # the worker whole again for the other tests
        kept = sys.modules.pop("_dpol")
        if kept is None:
            del sys.modules["dpol"]
        else:
            sys.modules["dpol"] = kept

    with distributed.Client(engine["address"]) as client:
        poisoned = sorted(client.scheduler_info()["workers"])[0]
        client.run(hide, workers=[poisoned])
        try:
            with pytest.raises(InvalidInputError, match=rf"workers run dpol; 1 of 2 cannot: "
                               rf"{poisoned} \(ModuleNotFoundError: import of dpol halted"):
                sweep(config(TINY), store=tmp_path / "s.sqlite", **engine)
        finally:
            client.run(restore, workers=[poisoned])
    assert not (tmp_path / "s.sqlite").exists()
