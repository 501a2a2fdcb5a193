"""Local engine: this process (one worker) or a pool of local processes."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_start_method

__all__ = ["DRIVER_POLL", "LocalEngine"]

#: seconds between a pool worker's checks that its driver still runs
DRIVER_POLL = 0.25


def _start_worker(parent: int | None) -> None:
    """Each worker process: watched by a thread that ends it once its driver is gone, and
    on one BLAS thread, as Ray's and Dask's workers are (workers x BLAS threads above the
    CPUs slowed a 64-cell sweep on 2 CPUs by 1.9x).

    ``parent`` is the driver's pid when it forks or spawns the workers itself: a driver
    killed while this worker starts is then seen at once. With the forkserver start
    method (``None``) the parent is the server, which exits with the driver.
    """
    parent = os.getppid() if parent is None else parent
    threading.Thread(target=_end_without_parent, args=(parent,), daemon=True,
                     name="dpol-driver-watch").start()
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _end_without_parent(parent: int) -> None:
    """Exit once this process's parent is no longer ``parent``. A driver killed by
    SIGKILL or SIGTERM cannot shut its pool down, and its workers, waiting on a queue
    whose other end they hold too, slept for ever; a dead process's children are handed
    to another one, which :func:`os.getppid` shows."""
    while os.getppid() == parent:
        time.sleep(DRIVER_POLL)
    os._exit(1)  # nothing to clean up: a result would have no one to go to


class LocalEngine:
    """Tasks in this process (``workers == 1``) or in ``workers`` local processes.

    A worker that dies (killed, out of memory) breaks a ``ProcessPoolExecutor``: every
    task in flight then fails with :class:`BrokenProcessPool`, which is :attr:`lost`, and
    the next ``submit`` starts a fresh pool, so the runner can resubmit them.

    Examples
    --------
    >>> engine = LocalEngine(1)
    >>> engine.submit(divmod, 7, 2).result(), engine.describe()
    ((3, 1), 'local (this process)')
    >>> engine.close()
    """

    lost = (BrokenProcessPool,)

    def __init__(self, workers: int, address: str | None = None, *,
                 in_process: bool | None = None) -> None:
        self.workers = workers
        self.in_process = workers == 1 if in_process is None else in_process
        self._pool: ProcessPoolExecutor | None = None

    def describe(self) -> str:
        return ("local (this process)" if self.in_process
                else f"local ({self.workers} processes)")

    def submit(self, func, *args) -> Future:
        if self.in_process:  # no pickling, a task's exception as it was
            future: Future = Future()
            try:
                future.set_result(func(*args))
            except Exception as exc:
                future.set_exception(exc)
            return future
        if self._pool is None or getattr(self._pool, "_broken", False):
            self.close()
            parent = None if get_start_method() == "forkserver" else os.getpid()
            self._pool = ProcessPoolExecutor(max_workers=self.workers,
                                             initializer=_start_worker, initargs=(parent,))
        return self._pool.submit(func, *args)

    def close(self, cancel: bool = False) -> None:
        """Shut the pool down; with ``cancel`` (Ctrl-C, a failure) the tasks in flight are
        abandoned, so their workers are ended rather than waited for."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if cancel:
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for process in workers:
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=cancel)
