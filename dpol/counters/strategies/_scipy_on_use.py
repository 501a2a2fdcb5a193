"""scipy.signal and scipy.optimize, imported on first use (layer L2).

The two cost about half a second at import (scipy.signal loads scipy.stats), which every
``import dpol.learners`` and ``dpol --help`` paid for strategies that only some runs
build. The strategies call these thin functions instead; each imports scipy's own on
its first call and passes every argument through, so results are scipy's, bit for bit.

Examples
--------
>>> import numpy as np
>>> fftconvolve(np.ones(3), np.ones(2)).round(6).tolist()
[1.0, 2.0, 2.0, 1.0]
"""

from __future__ import annotations

__all__ = ["fftconvolve", "lfilter", "minimize"]


def fftconvolve(*args, **kwargs):
    """``scipy.signal.fftconvolve``."""
    from scipy.signal import fftconvolve as function

    return function(*args, **kwargs)


def lfilter(*args, **kwargs):
    """``scipy.signal.lfilter``."""
    from scipy.signal import lfilter as function

    return function(*args, **kwargs)


def minimize(*args, **kwargs):
    """``scipy.optimize.minimize``."""
    from scipy.optimize import minimize as function

    return function(*args, **kwargs)
