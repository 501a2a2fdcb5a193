"""Engines that run independent tasks: local processes, Ray or Dask (layer L5).

:func:`open_engine` starts (or joins, with ``address``) one engine and yields an object
with ``submit(func, *args) -> concurrent.futures.Future``, ``workers`` and ``lost``: the
exception types that mean "the worker died, the task did not fail" (the runner resubmits
those tasks). Ray and Dask are optional extras (``dpol[ray]``, ``dpol[dask]``); their
adapters are imported only when asked for.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager

from dpol._validation import check_choice, check_int
from dpol.experiments.sweeps.engines.probe import check_address

__all__ = ["BACKENDS", "check_address", "open_engine", "require"]

#: the engines a sweep runs on (the ``backend`` argument, ``--backend``)
BACKENDS = ("local", "ray", "dask")


def require(backend: str) -> str:
    """Refuse an unknown backend, or one whose extra is not installed, before any work.

    Examples
    --------
    >>> require("local")
    'local'
    >>> require("spark")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: backend must be one of 'local', 'ray', 'dask'; got 'spark'
    """
    backend = check_choice("backend", backend, BACKENDS)
    module = {"ray": "ray", "dask": "distributed"}.get(backend)
    if module is not None:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(f"--backend {backend} needs the '{backend}' extra: pip install "
                              f"'dpol[{backend}]'", name=exc.name) from None
    return backend


@contextmanager
def open_engine(backend: str = "local", workers: int = 1, address: str | None = None):
    """Start (or join) an engine for the block; it is shut down after (if dpol started it).

    Examples
    --------
    >>> with open_engine("local", workers=1) as engine:
    ...     engine.submit(pow, 2, 10).result()
    1024
    """
    backend = require(backend)
    workers = check_int("workers", workers, low=1)
    address = check_address(backend, address)
    if backend == "ray":
        from dpol.experiments.sweeps.engines.ray_engine import RayEngine as Engine
    elif backend == "dask":
        from dpol.experiments.sweeps.engines.dask_engine import DaskEngine as Engine
    else:
        from dpol.experiments.sweeps.engines.local_engine import LocalEngine as Engine
    engine = Engine(workers, address)
    try:
        yield engine
    except BaseException:  # Ctrl-C or a failure: queued tasks are dropped, not awaited
        engine.close(cancel=True)
        raise
    engine.close()
