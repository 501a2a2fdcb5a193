"""Dask engine (``dpol[dask]``): a ``LocalCluster`` started here, or a running scheduler."""

from __future__ import annotations

import logging
from concurrent.futures import Future

from dpol._validation import fail

__all__ = ["DaskEngine", "check_workers"]

#: the versions every worker must share with the driver: a cell runs dpol's code, and
#: the same versions of dpol, numpy and scipy give the same bits on every node
VERSIONS = ("dpol", "numpy", "scipy")
#: the check itself, as an expression: it runs on workers that may not have dpol, so its
#: code cannot live in dpol (a function of dpol's is sent by name, not by value)
_ASK = f"tuple(__import__(m).__version__ for m in {VERSIONS!r})"


def check_workers(client, address: str) -> None:
    """Refuse a cluster some of whose workers cannot run dpol's cells, naming them.

    A worker that cannot import dpol fails to read its first task and Dask drops it
    without a word (the sweep then runs on the others); one with other versions would
    store other bits. Refusing, rather than going on without them, keeps the cluster's
    own retries: tasks pinned to the good workers' addresses could run nowhere once one
    of them is restarted (under a new address).

    Examples
    --------
    >>> class Cluster:  # what ``Client.run`` answers: a result or an error per worker
    ...     def run(self, func, *args, on_error):
    ...         return {"tcp://a:1": func(*args), "tcp://b:1": ImportError("no dpol")}
    >>> check_workers(Cluster(), "tcp://s:8786")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be a Dask scheduler whose workers run \
dpol; 1 of 2 cannot: tcp://b:1 (ImportError: no dpol); got 'tcp://s:8786'
    """
    here = eval(_ASK, {})  # a constant expression, evaluated as on the workers
    answers = client.run(eval, _ASK, {}, on_error="return")
    missing = {w: a for w, a in answers.items() if isinstance(a, BaseException)}
    if missing:
        shown = "; ".join(f"{w} ({type(a).__name__}: {a})" for w, a in sorted(missing.items()))
        raise fail("address", f"be a Dask scheduler whose workers run dpol; "
                   f"{len(missing)} of {len(answers)} cannot: {shown}", address)
    other = {w: a for w, a in answers.items() if tuple(a) != here}
    if other:
        wanted = ", ".join(f"{m} {v}" for m, v in zip(VERSIONS, here, strict=True))
        shown = "; ".join(f"{w} ({', '.join(map(str, a))})" for w, a in sorted(other.items()))
        raise fail("address", f"be a Dask scheduler whose workers run {wanted} as this "
                   f"process does (the same versions give the same bits); {len(other)} of "
                   f"{len(answers)} differ: {shown}", address)


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
            try:
                check_workers(self._client, address)
            except BaseException:
                self._client.close()
                raise
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
