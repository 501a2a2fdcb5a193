"""Isotropic Gaussian noise."""

from __future__ import annotations

import numpy as np

__all__ = ["gaussian"]


def gaussian(rng: np.random.Generator, size: int | tuple[int, ...], scale: float) -> np.ndarray:
    """Draw i.i.d. N(0, scale^2) noise of the given size.

    Draws are sequential in C order, so ``gaussian(rng, (a + b, d), s)`` equals two
    calls of sizes ``(a, d)`` and ``(b, d)`` stacked: the streaming and the vectorized
    paths of a counter see the same numbers.

    Examples
    --------
    >>> gaussian(np.random.default_rng(0), 3, 2.0).round(3)
    array([ 0.251, -0.264,  1.281])
    """
    out = rng.standard_normal(size)
    out *= scale  # in place: no second array (a counter's run draws T x d at once)
    return out
