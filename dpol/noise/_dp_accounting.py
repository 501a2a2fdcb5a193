"""dp-accounting, imported where it is first used (layer L0).

``import dp_accounting`` takes most of a second (it loads scipy.signal and scipy.stats),
most of what ``import dpol.learners`` and the ``dpol`` command spent starting up. Every
dpol module that builds or reads dp-accounting events takes the name ``dp_accounting``
from here instead: an object whose attributes are the package's, which imports the
package on the first attribute read (building a noisy object or accounting for one),
not when dpol is imported (:mod:`dpol._lazy`). ``tests/noise/test_dp_accounting.py``
holds dpol's imports to that; a checkpoint's reader imports the modules its events name.

Examples
--------
>>> dp_accounting.GaussianDpEvent(2.0)
GaussianDpEvent(noise_multiplier=2.0)
"""

from __future__ import annotations

from dpol._lazy import on_first_use

__all__ = ["dp_accounting"]

dp_accounting = on_first_use("dp_accounting")
