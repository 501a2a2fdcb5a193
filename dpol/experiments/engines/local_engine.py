"""Local engine: this process (one worker) or a pool of local processes."""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

__all__ = ["LocalEngine"]


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

    def __init__(self, workers: int, address: str | None = None) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def describe(self) -> str:
        return ("local (this process)" if self.workers == 1
                else f"local ({self.workers} processes)")

    def submit(self, func, *args) -> Future:
        if self.workers == 1:  # in process: no pickling, a task's exception as it was
            future: Future = Future()
            try:
                future.set_result(func(*args))
            except Exception as exc:
                future.set_exception(exc)
            return future
        if self._pool is None or getattr(self._pool, "_broken", False):
            self.close()
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return self._pool.submit(func, *args)

    def close(self, cancel: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
            self._pool = None
