"""Fixtures shared by test packages."""

from __future__ import annotations

import functools
import os

import pytest


def pytest_configure(config):
    """One BLAS/OpenMP thread per xdist worker: the workers already take every core.

    ``-n auto`` starts one worker per core, and each one's OpenBLAS would start a thread
    per core too: on 2 cores, 4 threads fight for 2, and the many small LAPACK calls of
    the tests (batched 32 x 32 ``eigh``, PSD solves) spend their time waking and waiting
    (a batched eigh measured 5-10x slower with 2 threads than with 1 beside another
    busy process). The library limits BLAS itself where it measured the same (PQFTL's
    solves, the strategy optimizers); this covers the rest of the suite. Child
    processes (CLI, tutorials) inherit it through the environment.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
        threadpool_limits(1)


def _memoized(function):
    """``function`` with its results kept per (hashable) arguments; others pass through."""
    cached = functools.lru_cache(maxsize=None)(function)

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            hash((args, tuple(kwargs.items())))
        except TypeError:
            return function(*args, **kwargs)
        return cached(*args, **kwargs)

    return call


@pytest.fixture(scope="module")
def memoized_gaussian_accounting():
    """dp-accounting's Gaussian (epsilon, delta) <-> sigma conversions, memoized.

    An audit that builds thousands of learners or estimators recalibrates each one: ~7-10
    ms of scipy root finding in ``get_sigma_gaussian`` / ``get_epsilon_gaussian``, 80-90%
    of a build (cProfile), for the same few (epsilon, delta) pairs every time. Both are
    pure functions of floats, so a cached call returns the very float the first call did:
    every noise draw and every audit bound stays bit-identical (the adaptive audits'
    bounds, counts and thresholds were compared; test_estimator_audit.py's
    test_memoised_calibration_changes_no_release checks a fit through ``__wrapped__``).
    The library's calibration code runs unchanged on top.
    """
    import dp_accounting

    with pytest.MonkeyPatch.context() as patch:
        for name in ("get_sigma_gaussian", "get_epsilon_gaussian"):
            patch.setattr(dp_accounting, name, _memoized(getattr(dp_accounting, name)))
        yield
