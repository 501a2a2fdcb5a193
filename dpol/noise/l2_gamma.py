"""The l2 "Gamma mechanism" of WDP (Lemma 1): density proportional to exp(-||n||_2 / theta)."""

from __future__ import annotations

import numpy as np

__all__ = ["l2_gamma"]


def l2_gamma(
    rng: np.random.Generator,
    n: int,
    dim: int,
    theta: float,
    *,
    radius_rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Draw ``n`` vectors in R^dim with density proportional to exp(-||x||_2 / theta).

    Radius Gamma(shape=dim, scale=theta), direction uniform on the sphere: per-coordinate
    variance ``(dim + 1) theta^2`` (WDP Proposition A1; docs/errata.md, WDP-3). Directions
    from ``rng``, radii from ``radius_rng`` (default ``rng``); with two generators, draws
    of sizes a and b concatenate to one of a + b (streaming == vectorized).

    Examples
    --------
    >>> x = l2_gamma(np.random.default_rng(0), 2, 3, 1.0)
    >>> x.shape
    (2, 3)
    """
    radius_rng = rng if radius_rng is None else radius_rng
    direction = rng.standard_normal((n, dim))
    norms = np.linalg.norm(direction, axis=1)
    norms[norms == 0.0] = 1.0  # probability zero; keeps the draw finite
    radius = radius_rng.gamma(shape=dim, scale=theta, size=n) if theta > 0 else np.zeros(n)
    return direction * (radius / norms)[:, None]
