"""Dask engine (``dpol[dask]``): a ``LocalCluster`` started here, or a running scheduler."""

from __future__ import annotations

import logging
from concurrent.futures import Future

__all__ = ["DaskEngine"]


class _Job:
    """A call packed so that Dask passes it on untouched: Dask reads a tuple whose first
    item is callable, in any argument, as a task of its own graph and runs it."""

    def __init__(self, func, args: tuple) -> None:
        self.func, self.args = func, args


def _run(job: _Job):
    return job.func(*job.args)


class DaskEngine:
    """Tasks on Dask workers (processes, one thread each).

    Without an address, a ``distributed.LocalCluster`` of ``workers`` processes (its
    nannies restart a worker that dies, and the scheduler resubmits its task); with one,
    a client of that scheduler (whose workers must have dpol installed). :meth:`close`
    stops what it started.
    """

    def __init__(self, workers: int, address: str | None = None) -> None:
        from distributed import Client, LocalCluster  # available: open_engine required it
        from distributed.scheduler import KilledWorker

        self.lost = (KilledWorker,)
        self._cluster = None
        if address is None:
            # ":0": any free port for its HTTP server (None still takes 8787, and warns
            # "Port 8787 is already in use" when another cluster runs)
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                         processes=True, dashboard_address=":0",
                                         silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        else:
            self._client = Client(address, timeout="10s")
        self.workers = len(self._client.scheduler_info()["workers"]) or workers
        self._executor = self._client.get_executor(pure=False)

    def describe(self) -> str:
        return f"dask ({self.workers} workers)"

    def submit(self, func, *args) -> Future:
        return self._executor.submit(_run, _Job(func, args))

    def close(self, cancel: bool = False) -> None:
        self._executor.shutdown(wait=False)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
