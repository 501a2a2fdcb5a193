"""dpol sweep on a Ray head and a Dask scheduler + workers started as separate processes,
by the commands docs/sweeps.md gives: the cluster path a user meets, not an engine
started inside the test process.

Deselected by default (``-m "not cluster"`` in pyproject: about a minute on 2 CPUs
at a load of 20, mostly Ray's start); run them with ``pytest -m cluster tests/experiments/
test_sweeps_engines_cluster.py``. Every process a test starts runs in a session of its
own and is killed with that session at the end, whatever the outcome.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sweep_cases import config, results

from dpol.errors import InvalidInputError
from dpol.experiments.sweeps.store import ResultStore
from dpol.experiments.sweeps.sweep import sweep

pytestmark = pytest.mark.cluster
psutil = pytest.importorskip("psutil")
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
#: 4 cells of about 0.1 s: enough to see every cell cross the cluster and come back
GRID = {"horizon": 300, "grid": {"learners": ["pqftl"], "epsilons": [0.5, 2.0],
                                 "seeds": [0, 1], "datasets": ["synthetic-regression"]}}
TOML = ('horizon = 300\n[grid]\nlearners = ["pqftl"]\nepsilons = [0.5, 2.0]\n'
        'seeds = [0, 1]\ndatasets = ["synthetic-regression"]\n')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """Processes started in sessions of their own, all killed (with their children) at
    the end: a cluster left running would outlive the test run."""

    def __init__(self, env: dict) -> None:
        self.env, self.started, self.logs = env, [], []

    def start(self, *args: str, log: Path, env: dict | None = None) -> subprocess.Popen:
        self.logs.append(log.open("w"))
        proc = subprocess.Popen(args, stdout=self.logs[-1], stderr=subprocess.STDOUT,
                                env={**self.env, **(env or {})}, start_new_session=True)
        self.started.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen) -> None:
        """TERM to the session (Ray's and Dask's commands stop their own processes), and
        KILL to what is left of it 3 s later."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        for proc in reversed(self.started):
            self.stop(proc)
        for log in self.logs:
            log.close()


def wait_until(ready, what: str, log: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    pytest.fail(f"{what} not ready after {seconds} s:\n{log.read_text()[-2000:]}")


@pytest.fixture
def cluster_env(tmp_path):
    """An environment of its own: HOME (Ray keeps its token in ~/.ray), a short temp dir
    (Ray's socket paths must stay under 108 bytes) and this checkout's dpol on the path
    of every worker."""
    home, temp = tmp_path / "home", Path(tempfile.mkdtemp(prefix="dpc", dir="/tmp"))
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("RAY_AUTH_MODE", None)
    env.pop("RAY_ADDRESS", None)
    procs = Processes(env)
    try:
        yield procs, temp
    finally:
        procs.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    store = tmp_path_factory.mktemp("reference") / "local.sqlite"
    sweep(config(GRID), workers=1, store=store)
    return results(store)


def dpol_sweep(procs: Processes, tmp_path: Path, *args: str, env: dict | None = None):
    """``dpol sweep grid.toml ARGS`` as a user types it, in a process of its own."""
    (tmp_path / "grid.toml").write_text(TOML)
    return subprocess.run([str(BIN / "python"), "-c", "from dpol.cli import main; main()",
                           "sweep", str(tmp_path / "grid.toml"), *args],
                          env={**procs.env, **(env or {})}, capture_output=True, text=True,
                          timeout=300)


def test_a_ray_head_with_token_authentication(cluster_env, tmp_path, reference,
                                              monkeypatch):
    # as docs/sweeps.md says: a token on the head, the head in token mode, and the
    # driver on another machine (another HOME) with RAY_AUTH_MODE=token and the token
    procs, temp = cluster_env
    token = subprocess.run([str(BIN / "ray"), "get-auth-token", "--generate"],
                           env=procs.env, capture_output=True, text=True, check=True,
                           timeout=120).stdout.strip()
    port = free_port()
    log = tmp_path / "head.log"
    # ports Ray would otherwise take at fixed numbers, shared with any other Ray here
    fixed = {f"--{name}": str(free_port()) for name in (
        "dashboard-port", "dashboard-agent-listen-port")}
    procs.start(str(BIN / "ray"), "start", "--head", "--port", str(port), "--num-cpus", "2",
                "--temp-dir", str(temp), "--include-dashboard", "false",
                "--disable-usage-stats", "--block", *(x for kv in fixed.items() for x in kv),
                log=log, env={"RAY_AUTH_MODE": "token"})
    address = f"127.0.0.1:{port}"
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    grid = config(GRID)

    def answers() -> bool:
        try:
            sweep(grid, backend="ray", address=address, store=tmp_path / "no.sqlite")
        except InvalidInputError as exc:
            if "reachable" in str(exc) or "within" in str(exc):
                return False
            assert "requires token authentication" in str(exc), exc
            return True
        pytest.fail("joined a head with token authentication without a token")

    # without RAY_AUTH_MODE=token Ray's client would retry for 20 s, then fail in general
    # terms: the probe names what to set, and nothing is created
    wait_until(answers, "ray head", log)
    assert not (tmp_path / "no.sqlite").exists()
    elsewhere = tmp_path / "driver-home"
    elsewhere.mkdir()
    out = dpol_sweep(procs, tmp_path, "--backend", "ray", "--address", address,
                     "--store", str(tmp_path / "ray.sqlite"),
                     env={"HOME": str(elsewhere), "RAY_AUTH_MODE": "token",
                          "RAY_AUTH_TOKEN": token})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "4 finished now, 0 failed (ray)" in " ".join(out.stdout.split())
    assert results(tmp_path / "ray.sqlite") == reference
    # Ray's workers run in process groups of their own: they must end with the head
    with ResultStore(tmp_path / "ray.sqlite") as store:
        pids = {int(row["worker"].rsplit(":", 1)[1]) for row in store.rows()}
    procs.close()
    deadline = time.monotonic() + 10
    while (alive := [p for p in pids if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_dask_scheduler_and_workers(cluster_env, tmp_path, reference):
    procs, _ = cluster_env
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs.start(str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                "--dashboard-address", ":0", "--no-show", log=tmp_path / "scheduler.log")
    worker = [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"]
    procs.start(*worker, "--nworkers", "2", log=tmp_path / "workers.log")
    # a worker on a node without dpol (its preload hides it): Dask would drop it at its
    # first cell and say nothing
    (tmp_path / "nodpol.py").write_text('import sys\nsys.modules["dpol"] = None\n')
    bad = procs.start(*worker, "--name", "no-dpol", "--preload", str(tmp_path / "nodpol.py"),
                      log=tmp_path / "bad.log")
    from distributed import Client

    with Client(address, timeout="60s") as client:
        wait_until(lambda: len(client.scheduler_info()["workers"]) == 3, "3 dask workers",
                   tmp_path / "workers.log")
        names = {w["name"]: a for a, w in client.scheduler_info()["workers"].items()}
        with pytest.raises(InvalidInputError, match=r"workers run dpol; 1 of 3 cannot: "
                           rf"{names['no-dpol']} \(ModuleNotFoundError"):
            sweep(config(GRID), backend="dask", address=address,
                  store=tmp_path / "no.sqlite")
        assert not (tmp_path / "no.sqlite").exists()
        procs.stop(bad)
        wait_until(lambda: len(client.scheduler_info()["workers"]) == 2, "2 dask workers",
                   tmp_path / "workers.log")
    # the driver in this process (the command line is a thin call of sweep(), which the
    # Ray test above runs as a user types it)
    summary = sweep(config(GRID), backend="dask", address=address,
                    store=tmp_path / "dask.sqlite")
    assert (summary.done, summary.failed) == (4, 0)
    assert results(tmp_path / "dask.sqlite") == reference
