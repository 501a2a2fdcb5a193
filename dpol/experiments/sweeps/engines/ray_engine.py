"""Ray engine (``dpol[ray]``): a local instance started here, or a running cluster."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from pathlib import Path

__all__ = ["RayEngine"]

#: Ray resubmits a task whose worker died this many times before it reports the loss
MAX_RETRIES = 3


class RayEngine:
    """Tasks as Ray remote functions (one CPU each).

    Without an address, ``ray.init(num_cpus=workers)`` starts a local instance (its
    workers import the same ``dpol`` as this process) and :meth:`close` stops it; with
    one, this process joins that cluster (whose nodes must have dpol installed) and
    leaves it running. An instance already initialised in this process is reused.
    """

    def __init__(self, workers: int, address: str | None = None) -> None:
        import ray  # available: open_engine required it
        import ray.exceptions as rex

        self._ray = ray
        self.lost = (rex.WorkerCrashedError, rex.NodeDiedError, rex.OwnerDiedError)
        self._started = not ray.is_initialized()
        if self._started:
            quiet = {"logging_level": logging.ERROR, "log_to_driver": False,
                     "include_dashboard": False, "configure_logging": True}
            if address is None:
                import dpol
                root = str(Path(dpol.__file__).resolve().parents[1])
                ray.init(num_cpus=workers, runtime_env={"env_vars": {"PYTHONPATH": root}},
                         **quiet)
            else:
                ray.init(address=address, **quiet)
        self.workers = int(ray.cluster_resources().get("CPU", workers))
        self._remote: dict = {}
        self._refs: list = []

    def describe(self) -> str:
        return f"ray ({self.workers} CPUs)"

    def submit(self, func, *args) -> Future:
        remote = self._remote.get(func)
        if remote is None:
            remote = self._remote[func] = self._ray.remote(num_cpus=1,
                                                           max_retries=MAX_RETRIES)(func)
        ref = remote.remote(*args)
        self._refs.append(ref)
        return ref.future()

    def close(self, cancel: bool = False) -> None:
        if cancel:
            for ref in self._refs:
                try:
                    self._ray.cancel(ref, force=True)
                except Exception:  # already finished or lost: nothing to stop
                    pass
        self._refs = []
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()
