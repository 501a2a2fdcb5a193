"""`dpol train` losing its engine for real, as docs/training.md ("A lost worker") says it
ends: a Ray actor process killed mid-run, and a Dask task that kills every worker it runs
on until the scheduler gives up (``KilledWorker``). Each run stops with one line naming
its last checkpoint, and that checkpoint, resumed, finishes with the uninterrupted run's
releases.

Cluster tests (``pytest -m cluster``, deselected by default): real worker processes,
killed by SIGKILL; 10 to 30 s each on 2 busy CPUs, mostly the engines' start.
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

from dpol.experiments.training import TrainingFailed, train

pytestmark = pytest.mark.cluster
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

RUN = dict(label="y", batch_size=40, epochs=2, epsilon=1.0, delta=1e-5, seed=0,
           counter="banded")
#: 14 steps (2 epochs of 7), saved after steps 3 and 6 before the loss at step 7
EVERY, LOST_AFTER = 3, 6


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """3 Parquet files of 100, 120 and 80 rows."""
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


def _stopped_then_resumed(folder, reference, ckpt, failed: TrainingFailed, kind: str):
    """The one line of a run that lost its engine, its checkpoint, and the resumption."""
    text = str(failed)
    assert "\n" not in text and len(text) < 400, text
    assert text.startswith(f"training stopped at step {LOST_AFTER + 1} of 14 ({kind}")
    assert f"its last checkpoint, after step {LOST_AFTER}, is in {ckpt}" in text
    resumed = train(folder, checkpoint=ckpt, resume=True, **RUN)  # here: no engine to lose
    assert resumed.resumed_from == LOST_AFTER
    assert np.array_equal(resumed.iterates, reference.iterates)


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
