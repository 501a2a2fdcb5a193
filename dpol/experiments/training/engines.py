"""Where the shards live: in this process, on a Dask cluster or on Ray actors (L5).

Every engine answers the same three calls: :meth:`load` (each partition read by the
worker that will hold it; returns the row counts), :meth:`place` (the rows get their
ids and are grouped by step) and :meth:`sums` (one step: every partition's clipped
gradient sum at the released iterate, returned **in partition order**, whichever
worker computed it, so that the driver adds them in an order fixed by the data).
Dask and Ray are optional extras, imported when their engine is built. An address is
checked by the probe of ``dpol sweep``
(:func:`~dpol.experiments.sweeps.engines.probe.check_address`) before any client joins
it: a port that is silent or another service's is refused with one line within
:data:`~dpol.experiments.sweeps.engines.probe.CONNECT_TIMEOUT` seconds
(``DPOL_CONNECT_TIMEOUT``), where Ray's client would wait minutes.
"""

from __future__ import annotations

import dataclasses

from dpol._validation import fail
from dpol.experiments.sweeps.engines.probe import check_address
from dpol.experiments.training.shard import Shard, shard_sums
from dpol.experiments.training.sources import Source, load_partition

__all__ = ["ENGINES", "DaskEngine", "LocalEngine", "RayEngine", "make_engine"]

#: seconds Dask's client gets to join a scheduler once the probe found one (or one
#: started here): the probe's short timeout is for telling an address, not for joining
JOIN_TIMEOUT = 10


def _shard(part, resolved, source: Source, loss: str, clip: float) -> Shard:
    X, y = load_partition(part, source.features, source.label, resolved)
    return Shard(part.index, X, y, loss, clip)


def _placed(shard: Shard, offset: int, steps: int, seed: int) -> Shard:
    return shard.place(offset, steps, seed)


def _n_rows(shard: Shard) -> int:
    return shard.n_rows


class LocalEngine:
    """Every shard in this process (one worker).

    Examples
    --------
    >>> import numpy as np
    >>> from dpol.experiments.training.sources import as_source
    >>> e = LocalEngine()
    >>> e.load(as_source((np.ones((4, 2)), np.ones(4)), "y"), "squared", 1.0)
    [4]
    """

    name, workers = "local", 1

    def load(self, source: Source, loss: str, clip: float) -> list[int]:
        """Read every partition; their row counts, in partition order."""
        self._shards = [_shard(p, None, source, loss, clip) for p in source.partitions]
        return [s.n_rows for s in self._shards]

    def place(self, offsets: list[int], steps: int, seed: int) -> None:
        """Give every shard its row ids and group its rows by step."""
        for s, off in zip(self._shards, offsets, strict=True):
            s.place(off, steps, seed)

    def sums(self, batch: int, theta) -> list[tuple]:
        """(index, sum, clipped) of every partition for ``batch``, in partition order."""
        return shard_sums(self._shards, batch, theta)

    def close(self) -> None:
        """Drop the shards."""
        self._shards = []


class DaskEngine(LocalEngine):
    """Shards as futures on the workers of a Dask cluster: one task per worker and step.

    ``address``: a running scheduler (tcp://host:8786); else a ``LocalCluster`` of
    ``workers`` processes. A lost worker's shards are read again by Dask from their task
    graph on the workers that remain, and the run goes on with the same bits (a shard is a
    function of its partition).
    """

    name = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        import distributed

        self._cluster = None
        if address is None:
            self._cluster = distributed.LocalCluster(
                n_workers=workers or 2, threads_per_worker=1, processes=True,
                dashboard_address=":0")
            address = self._cluster.scheduler_address
        try:  # the probe found a scheduler there; it may have stopped since
            self.client = distributed.Client(address, timeout=f"{JOIN_TIMEOUT}s")
        except (OSError, TimeoutError) as exc:
            raise fail("address", f"be a Dask scheduler this process can join within "
                       f"{JOIN_TIMEOUT} s ({type(exc).__name__})", address) from None
        self.hosts = sorted(self.client.scheduler_info()["workers"])
        if not self.hosts:
            raise fail("address", "lead to a Dask cluster with at least one worker", address)
        self.workers = len(self.hosts)

    def load(self, source: Source, loss: str, clip: float) -> list[int]:
        import dask

        # no worker is named for a read, not even as a preference: once every worker was
        # lost at once (a task that kills its workers), Dask held a read whose named
        # worker was gone for ever (its re-scheduling of an unrunnable task ignores
        # allow_other_workers) and the run hung; the scheduler spreads the reads itself
        self._futures = []
        for p in source.partitions:
            if p.kind == "pandas":  # a delayed partition of a Dask DataFrame
                task = dask.delayed(_shard)(dataclasses.replace(p, ref=None), p.ref,
                                            source, loss, clip)
                self._futures.append(self.client.compute(task))
            else:
                self._futures.append(self.client.submit(_shard, p, None, source, loss, clip,
                                                        pure=False))
        return self.client.gather([self.client.submit(_n_rows, f) for f in self._futures])

    def place(self, offsets: list[int], steps: int, seed: int) -> None:
        self._futures = [self.client.submit(_placed, f, off, steps, seed, pure=False)
                         for f, off in zip(self._futures, offsets, strict=True)]
        import distributed

        distributed.wait(self._futures)
        who = self.client.who_has(self._futures)
        groups: dict[str, list] = {}
        for f in self._futures:
            groups.setdefault(min(who[f.key]), []).append(f)
        self._groups = sorted(groups.items())

    def sums(self, batch: int, theta) -> list[tuple]:
        # each step's task where its shards are (named: else Dask's work stealing moves
        # the shards between workers); a lost worker's goes to another
        tasks = [self.client.submit(shard_sums, futs, batch, theta, workers=[host],
                                    allow_other_workers=True, pure=False)
                 for host, futs in self._groups]
        return sorted((r for part in self.client.gather(tasks) for r in part),
                      key=lambda r: r[0])

    def close(self) -> None:
        self._futures, self._groups = [], []
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


class _ShardGroup(LocalEngine):
    """A Ray actor's shards (the class is made a Ray actor when the engine is built)."""

    def load(self, parts: list, source: Source, loss: str, clip: float) -> list[int]:
        import ray

        self._shards = [_shard(p, ray.get(ref) if p.kind == "pandas" else None, source,
                               loss, clip) for p, ref in parts]
        return [s.n_rows for s in self._shards]


class RayEngine(LocalEngine):
    """Shards held by ``workers`` Ray actors (partition i on actor i mod workers).

    ``address``: a running Ray cluster (host:port, auto); else a local Ray started here
    (or the one this process already runs). A Ray Dataset's partitions are its blocks:
    Ray sizes them when it reads, by the cluster's CPUs unless told
    (``override_num_blocks``); the same blocks give the same bits on any number of actors.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        import ray

        self._started = not ray.is_initialized()  # a Ray started here ends with the run
        if self._started:
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, TimeoutError, ValueError) as exc:
                raise fail("address", f"be a Ray head this process may join "
                           f"({type(exc).__name__})", address) from None
        self.workers = workers or 2
        actor = ray.remote(num_cpus=0, scheduling_strategy="SPREAD")(_ShardGroup)
        self._actors = [actor.remote() for _ in range(self.workers)]

    def _each(self, calls) -> list:
        import ray

        return ray.get(list(calls))

    def load(self, source: Source, loss: str, clip: float) -> list[int]:
        parts = [(dataclasses.replace(p, ref=None), p.ref) if p.kind == "pandas" else
                 (p, None) for p in source.partitions]
        mine = [parts[i::self.workers] for i in range(self.workers)]
        counts = self._each(a.load.remote(m, source, loss, clip)
                            for a, m in zip(self._actors, mine, strict=True))
        out = [0] * len(parts)
        for i, c in enumerate(counts):
            out[i::self.workers] = c
        return out

    def place(self, offsets: list[int], steps: int, seed: int) -> None:
        self._each(a.place.remote(offsets[i::self.workers], steps, seed)
                   for i, a in enumerate(self._actors))

    def sums(self, batch: int, theta) -> list[tuple]:
        parts = self._each(a.sums.remote(batch, theta) for a in self._actors)
        return sorted((r for p in parts for r in p), key=lambda r: r[0])

    def close(self) -> None:
        import ray

        for a in self._actors:
            ray.kill(a)
        self._actors = []
        if self._started:
            ray.shutdown()


#: the engines by name
ENGINES = {"local": LocalEngine, "dask": DaskEngine, "ray": RayEngine}


def make_engine(engine: str, address: str | None = None, workers: int | None = None):
    """The engine called ``engine``, connected: an address that does not answer as its
    engine is refused with one line, by the probe of ``dpol sweep``, before any client
    joins it.

    Examples
    --------
    >>> make_engine("dask", "127.0.0.1:1")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be a reachable Dask scheduler (Connection \
refused); got '127.0.0.1:1'
    """
    if engine not in ENGINES:
        raise fail("engine", f"be one of {', '.join(ENGINES)}", engine)
    if engine == "local":
        if address is not None:
            raise fail("address", "be given only with engine 'dask' or 'ray'", address)
        return LocalEngine()
    return ENGINES[engine](check_address(engine, address), workers)
