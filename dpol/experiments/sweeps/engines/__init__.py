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
from urllib.parse import urlsplit

from dpol._validation import check_choice, check_int, fail
from dpol.experiments.sweeps.engines.probe import probe_dask, probe_ray, reach

__all__ = ["BACKENDS", "check_address", "open_engine", "require"]

#: the engines a sweep runs on (the ``backend`` argument, ``--backend``)
BACKENDS = ("local", "ray", "dask")


def check_address(backend: str, address: object) -> str | None:
    """Refuse an address that is not ``host:port`` (or a URL) or does not answer as a Ray
    head / Dask scheduler within :data:`~dpol.experiments.sweeps.engines.probe.CONNECT_TIMEOUT`
    seconds (:mod:`~dpol.experiments.sweeps.engines.probe`).

    ``None`` starts a local engine; Ray's ``"auto"`` (a head started on this machine by
    ``ray start --head``, found by Ray itself) is passed on unchecked, and so is the
    protocol of a Dask address other than ``tcp://`` (its host and port are checked).

    Examples
    --------
    >>> check_address("dask", None) is None
    True
    >>> check_address("local", "tcp://127.0.0.1:1")
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: address must be left unset for --backend local (it runs \
on this machine); got 'tcp://127.0.0.1:1'
    """
    if address is None:
        return None
    if backend == "local":
        raise fail("address", "be left unset for --backend local (it runs on this machine)",
                   address)
    if not isinstance(address, str) or not address:
        raise fail("address", "be host:port or a URL such as tcp://host:8786", address)
    if backend == "ray" and address == "auto":
        return address
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise fail("address", "be host:port or a URL such as tcp://host:8786", address)
    if backend == "ray":  # a head's GCS, or with ray:// a Ray Client server
        probe_ray(host, port, address, gcs=parts.scheme != "ray")
    elif parts.scheme == "tcp":
        probe_dask(host, port, address)
    else:  # tls://, ws://...: the scheduler's security settings are the client's to use
        reach(host, port, address, "Dask scheduler").close()
    return address


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
