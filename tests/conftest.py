"""Fixtures shared by test packages."""

from __future__ import annotations

import functools

import pytest


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


@pytest.fixture
def memoized_gaussian_accounting(monkeypatch):
    """dp-accounting's Gaussian (epsilon, delta) <-> sigma conversions, memoized.

    An audit that builds thousands of learners recalibrates each one: ~7 ms of scipy root
    finding in ``get_sigma_gaussian`` / ``get_epsilon_gaussian``, 80-90% of a run (their
    cProfile), for the same few (epsilon, delta) pairs every time. Both are pure functions
    of floats, so a cached call returns the very float the first call did: every learner,
    every noise draw and every audit bound stay bit-identical (checked on the adaptive
    audits), only the repeated root finding is gone. The library's calibration code runs
    unchanged on top.
    """
    import dp_accounting

    for name in ("get_sigma_gaussian", "get_epsilon_gaussian"):
        monkeypatch.setattr(dp_accounting, name, _memoized(getattr(dp_accounting, name)))
