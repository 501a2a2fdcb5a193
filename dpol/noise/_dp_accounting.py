"""dp-accounting, imported where it is first used (layer L0).

``import dp_accounting`` takes most of a second (it loads scipy.signal and scipy.stats),
most of what ``import dpol.learners`` and the ``dpol`` command spent starting up. Every
dpol module that builds or reads dp-accounting events takes the name ``dp_accounting``
from here instead: an object whose attributes are the package's, which imports the
package on the first attribute read (building a noisy object or accounting for one),
not when dpol is imported. ``tests/learners/test_lazy_dp_accounting.py`` holds the
import of the learners to that. (The command line's data sets import it at once:
``dpol run`` checkpoints hold its events, and their reader reads loaded packages only.)

Examples
--------
>>> dp_accounting.GaussianDpEvent(2.0)
GaussianDpEvent(noise_multiplier=2.0)
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["dp_accounting"]


class _OnFirstUse:
    """The ``dp_accounting`` package, imported on the first attribute read."""

    __slots__ = ()

    def __getattr__(self, name: str) -> object:
        module = sys.modules.get("dp_accounting")
        if module is None:
            module = importlib.import_module("dp_accounting")
        return getattr(module, name)

    def __repr__(self) -> str:
        return "<dp_accounting, imported on first use>"


dp_accounting = _OnFirstUse()
