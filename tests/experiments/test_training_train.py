"""dpol train's driver and engines: 1 worker == 2 workers bit for bit on a real Dask
LocalCluster, a run killed mid-way and resumed == the uninterrupted run, a Dask worker
lost mid-way == no loss, an engine lost for good (a killed Ray actor, Dask's
KilledWorker) == one line and the last checkpoint, and bad input refused with one line
before any step.

The worker process killed by SIGKILL runs with the cluster tests (``pytest -m cluster``);
the default run loses an in-process worker, the same loss to the scheduler."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.training import TrainingFailed, train

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

RUN = dict(label="y", batch_size=40, epochs=2, epsilon=1.0, delta=1e-5, seed=0, counter="banded")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """3 Parquet files of 100, 120 and 80 rows (uneven, as a data lake's are)."""
    out = tmp_path_factory.mktemp("parquet")
    rng = np.random.default_rng(0)
    for i, n in enumerate((100, 120, 80)):
        X = rng.normal(size=(n, 3)) / 2
        frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=np.sign(X[:, 0] + 0.1))
        frame.to_parquet(out / f"part-{i}.parquet")
    return out


@pytest.fixture(scope="module")
def reference(folder):
    return train(folder, **RUN)


@pytest.fixture(scope="module", params=[1, 2])
def dask_address(request):
    """Real Dask LocalClusters of 1 and 2 workers (in-process threads: the same
    scheduler, tasks and data movement, without the processes' start-up)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=request.param, threads_per_worker=1,
                                  processes=False, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def test_workers_release_the_same_bits(folder, reference, dask_address):
    got = train(folder, engine="dask", address=dask_address, **RUN)
    assert got.workers in (1, 2)
    assert np.array_equal(got.iterates, reference.iterates)
    assert got.privacy == reference.privacy


@pytest.mark.parametrize("dask_address", [2], indirect=True)  # one cluster is enough
def test_a_dask_dataframe_is_its_partitions(folder, reference, dask_address):
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.read_parquet(str(folder))
    got = train(frame, engine="dask", address=dask_address, **RUN)
    assert np.array_equal(got.iterates, reference.iterates)


def test_guarantee_is_derived_for_the_participation(reference):
    assert (reference.steps, reference.steps_per_epoch, reference.n_rows) == (14, 7, 300)
    assert reference.privacy.epsilon == 1.0
    assert reference.privacy.unit.startswith("one record (2 epochs of 7 steps")


def test_a_killed_run_resumes_to_the_same_releases(folder, reference, tmp_path):
    def crash(t, _total):
        if t == 8:
            raise RuntimeError("driver killed")

    ckpt = tmp_path / "ckpt"  # a real SIGKILL of the driver: benchmarks/training.py
    with pytest.raises(TrainingFailed, match=r"stopped at step 9 of 14 .*driver killed.*"
                       r"last checkpoint, after step 6"):
        train(folder, checkpoint=ckpt, checkpoint_every=3, on_step=crash, **RUN)
    resumed = train(folder, checkpoint=ckpt, resume=True, **RUN)
    assert resumed.resumed_from == 6
    assert np.array_equal(resumed.iterates, reference.iterates)
    with pytest.raises(InvalidInputError, match="lr differ"):
        train(folder, checkpoint=ckpt, resume=True, lr=0.5, **RUN)
    with pytest.raises(InvalidInputError, match="checkpoint must be a folder without a "
                       "checkpoint"):  # a fresh run never overwrites one
        train(folder, checkpoint=ckpt, **RUN)


def test_a_failure_before_any_checkpoint_says_so(folder, tmp_path):
    def crash(t, _total):
        raise RuntimeError("worker lost")

    with pytest.raises(TrainingFailed, match="no checkpoint was written"):
        train(folder, checkpoint=tmp_path / "c", checkpoint_every=5, on_step=crash, **RUN)


def train_losing_a_worker(folder, cluster, lose) -> object:
    """Train on ``cluster`` and ``lose(worker address)`` after step 5 of 14; checks that
    the lost worker's shards were computed again (the loss was real, not absorbed).

    A run that hangs (as one did when a shard's task was pinned to its first worker: its
    recomputation waited for a worker that never came back) fails here after 60 s."""
    lost = []

    def on_step(t, _total):
        if t == 5:  # a worker holding shards (Dask places them: no worker is named)
            held = [ws.address for ts in list(cluster.scheduler.tasks.values())
                    if str(ts.key).startswith("_placed-") for ws in ts.who_has or ()]
            lost.append(max(set(held), key=held.count))
            lose(lost[0])

    got = []  # a daemon thread: one that hangs does not hold the test process at exit
    thread = threading.Thread(daemon=True, target=lambda: got.append(train(
        folder, engine="dask", address=cluster.scheduler_address, on_step=on_step, **RUN)))
    thread.start()
    thread.join(60)
    assert got, "the run hung or failed after losing a worker"
    assert lost and lost[0] not in cluster.scheduler.workers
    shards = sum(1 for key, _, finish, *_ in cluster.scheduler.transition_log
                 if str(key).startswith("_shard-") and finish == "memory")
    assert shards > 3  # the 3 partitions, then the lost worker's again
    return got[0]


def test_a_lost_dask_worker_changes_no_bit(folder, reference):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        workers = {w.address: w for w in cluster.workers.values()}
        got = train_losing_a_worker(folder, cluster,
                                    lambda address: cluster.sync(workers[address].close))
    assert np.array_equal(got.iterates, reference.iterates)


@pytest.mark.cluster  # worker processes: 10 to 20 s on 2 busy CPUs, mostly their start
def test_a_killed_dask_worker_process_changes_no_bit(folder, reference):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        pids = client.run(os.getpid)  # its nanny starts a new worker, at a new address
        got = train_losing_a_worker(folder, cluster,
                                    lambda address: os.kill(pids[address], signal.SIGKILL))
    assert np.array_equal(got.iterates, reference.iterates)


# The engine lost for good, as docs/training.md ("A lost worker") says it ends: a Ray
# actor process killed mid-run, and a task that kills every Dask worker it runs on until
# the scheduler gives it up (KilledWorker). Each run stops with one line naming its last
# checkpoint, and that checkpoint, resumed, finishes with the uninterrupted releases.
#: 14 steps (2 epochs of 7), saved after steps 3 and 6 before the loss at step 7
EVERY, LOST_AFTER = 3, 6


def _stopped_then_resumed(folder, reference, ckpt, failed: TrainingFailed, kind: str):
    """The one line of a run that lost its engine, its checkpoint, and the resumption."""
    text = str(failed)
    assert "\n" not in text and len(text) < 400, text
    assert text.startswith(f"training stopped at step {LOST_AFTER + 1} of 14 ({kind}")
    assert f"its last checkpoint, after step {LOST_AFTER}, is in {ckpt}" in text
    resumed = train(folder, checkpoint=ckpt, resume=True, **RUN)  # here: no engine to lose
    assert resumed.resumed_from == LOST_AFTER
    assert np.array_equal(resumed.iterates, reference.iterates)


@pytest.mark.cluster  # a Ray instance and its actor processes: 10 to 15 s, mostly Ray's start
def test_a_killed_ray_actor_stops_the_run_with_one_line_and_its_checkpoint(
        folder, reference, tmp_path):
    ray = pytest.importorskip("ray")
    psutil = pytest.importorskip("psutil")
    ckpt = tmp_path / "ckpt"
    killed = []

    def on_step(t, _total):
        if t == LOST_AFTER:  # an actor's process: Ray names it after its class
            actors = [p for p in psutil.process_iter(["cmdline"])
                      if (p.info["cmdline"] or [""])[0].startswith("ray::_ShardGroup")]
            assert actors, "no actor process found"
            actors[0].kill()
            actors[0].wait(10)
            killed.append(actors[0].pid)

    try:
        with pytest.raises(TrainingFailed) as failed:
            train(folder, engine="ray", workers=2, checkpoint=ckpt, checkpoint_every=EVERY,
                  on_step=on_step, **RUN)
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert killed
    _stopped_then_resumed(folder, reference, ckpt, failed.value, "ActorDiedError")


def _killing_plugin(flag: str):
    """A worker plugin (built here, so it is sent by value) that makes every step's task
    kill its own worker once ``flag`` exists: a worker the nanny restarts gets it too."""
    from distributed import WorkerPlugin

    class KillOnStep(WorkerPlugin):
        def setup(self, worker):
            from dpol.experiments.training import shard

            real = shard.shard_sums

            def shard_sums(*args):
                if os.path.exists(flag):
                    os.kill(os.getpid(), signal.SIGKILL)
                return real(*args)

            shard.shard_sums = shard_sums  # the task names it: read when it arrives

    return KillOnStep()


@pytest.mark.cluster  # worker processes killed and restarted: 15 to 20 s on 2 busy CPUs
def test_a_task_that_kills_its_dask_workers_stops_the_run_with_one_line(
        folder, reference, tmp_path):
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    ckpt, flag = tmp_path / "ckpt", tmp_path / "kill"

    def on_step(t, _total):
        if t == LOST_AFTER:
            flag.touch()

    # the scheduler gives a task up (KilledWorker) once 2 workers died running it
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        client.register_plugin(_killing_plugin(str(flag)))
        outcome = []
        thread = threading.Thread(daemon=True, target=lambda: outcome.append(_run(
            folder, cluster.scheduler_address, ckpt, on_step)))
        thread.start()
        thread.join(50)
    assert outcome, "the run hung after its workers were killed"
    assert isinstance(outcome[0], TrainingFailed), outcome[0]
    _stopped_then_resumed(folder, reference, ckpt, outcome[0], "KilledWorker")


def _run(folder, address, ckpt, on_step):
    try:
        return train(folder, engine="dask", address=address, checkpoint=ckpt,
                     checkpoint_every=EVERY, on_step=on_step, **RUN)
    except Exception as exc:  # handed to the test's thread
        return exc


def test_bad_input_is_one_line_before_any_step(folder, tmp_path):
    with pytest.raises(InvalidInputError, match=r"features must name columns of "
                       r"part-0.parquet \(missing: z"):
        train(folder, features="a,z", **RUN)
    with pytest.raises(InvalidInputError, match="batch_size must be at most the 300 rows"):
        train(folder, **{**RUN, "batch_size": 301})
    text = tmp_path / "text"
    text.mkdir()
    pd.DataFrame({"a": [1.0, 2.0], "y": [1.0, -1.0], "s": ["u", "v"]}).to_parquet(
        text / "p.parquet")
    with pytest.raises(InvalidInputError, match=r"column 's' of p\.parquet is not numeric"):
        train(text, **{**RUN, "batch_size": 1})
    pd.DataFrame({"a": [np.nan, 2.0], "y": [1.0, -1.0]}).to_parquet(text / "p.parquet")
    with pytest.raises(InvalidInputError, match=r"column 'a' of p\.parquet must hold finite"):
        train(text, **{**RUN, "batch_size": 1})
    with pytest.raises(InvalidInputError, match="address must be given only with engine"):
        train(folder, address="tcp://127.0.0.1:9", **RUN)


@pytest.mark.parametrize(("engine", "scheme", "what"), [("ray", "", "Ray head"),
                                                        ("dask", "tcp://", "Dask scheduler")])
def test_a_silent_address_is_refused_before_anything_is_written(folder, tmp_path, monkeypatch,
                                                               engine, scheme, what):
    # a listening socket nobody accepts on: the kernel completes the connection and
    # nothing ever answers. The probe of dpol sweep refuses it within the timeout, before
    # Ray or Dask is imported (Ray's client waited minutes on one)
    monkeypatch.setenv("DPOL_CONNECT_TIMEOUT", "0.3")
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"{scheme}127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        with pytest.raises(InvalidInputError, match=f"address must be a {what} that answers "
                           r"within 0\.3 s \(it accepted the connection and said nothing"):
            train(folder, engine=engine, address=address, checkpoint=tmp_path / "c", **RUN)
    # well below the 10 s Dask's client would wait to join (and Ray's minutes): the probe
    # refused it, as the message says; the margin over 0.3 s is a loaded machine's lag
    # (3.3 s was exceeded once at a load of 20 on 2 cores)
    assert time.monotonic() - start < 10
    assert list(tmp_path.iterdir()) == []  # no checkpoint folder
