"""dp-accounting, imported where it is first used (layer L0).

``import dp_accounting`` takes most of a second, most of dpol's start-up. dpol takes the
name from here: an object that imports the package on its first attribute read
(:mod:`dpol._lazy`), held so by ``tests/noise/test_dp_accounting.py``.

Examples
--------
>>> dp_accounting.GaussianDpEvent(2.0)
GaussianDpEvent(noise_multiplier=2.0)
"""

from __future__ import annotations

from dpol._lazy import on_first_use

__all__ = ["dp_accounting"]

dp_accounting = on_first_use("dp_accounting")
