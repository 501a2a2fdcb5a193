"""Local engine: this process (one worker) or a pool of local processes."""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

__all__ = ["LocalEngine"]


def _one_blas_thread() -> None:
    """Each worker process on one BLAS thread, as Ray's and Dask's workers are: workers
    x BLAS threads above the CPUs slowed a 64-cell sweep on 2 CPUs by 1.9x."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


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
            self._pool = ProcessPoolExecutor(max_workers=self.workers,
                                             initializer=_one_blas_thread)
        return self._pool.submit(func, *args)

    def close(self, cancel: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
            self._pool = None
