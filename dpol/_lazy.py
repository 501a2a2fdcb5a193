"""Packages that are slow to import, imported where they are first used (layer L0).

dp-accounting, scipy.signal, scipy.optimize and scipy.stats cost about a second of import
together, which every ``import dpol.learners`` and ``dpol --help`` paid for code that
only some runs reach. A module takes the name from here instead: an object whose
attributes are the package's, which imports the package on the first attribute read.
``tests/test_lazy.py`` holds ``dpol --help`` to that, and
``tests/noise/test_dp_accounting.py`` every ``import dpol...``.

Examples
--------
>>> import numpy as np
>>> scipy_signal.fftconvolve(np.ones(3), np.ones(2)).round(6).tolist()
[1.0, 2.0, 2.0, 1.0]
>>> scipy_stats
<scipy.stats, imported on first use>
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["on_first_use", "scipy_optimize", "scipy_signal", "scipy_stats"]


class on_first_use:  # lower case: read as a module at its call sites
    """The module ``name``, imported on the first attribute read."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> object:
        module = sys.modules.get(self._name)
        if module is None:
            module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


scipy_signal = on_first_use("scipy.signal")
scipy_optimize = on_first_use("scipy.optimize")
scipy_stats = on_first_use("scipy.stats")
