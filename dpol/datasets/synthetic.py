"""Seeded synthetic streams, normalised to the bounds the privacy proofs assume."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dpol._seeding import resolve_rng
from dpol._validation import check_int, check_real

__all__ = ["Stream", "linear_regression_stream", "logistic_stream"]


@dataclass(frozen=True)
class Stream:
    """A data stream with the normalisation that was applied to it.

    Attributes
    ----------
    X : array (T, d)
        Rows with ||x|| <= x_bound.
    y : array (T,)
        Labels with |y| <= y_bound (or +-1 for classification).
    name : str
    normalization : str
        What was done to the raw data, for reports.
    truth : array (d,) or None
        The generating parameter of a synthetic stream.
    n_clipped : int
        Rows that clipping to the declared bounds changed while the stream was built.

    Examples
    --------
    >>> s = Stream(np.eye(4, 2), np.array([1.0, -1.0, 1.0, -1.0]), "toy", "none")
    >>> train, test = s.split(0.5, seed=0)
    >>> train.X.shape, test.name
    ((2, 2), 'toy (held out)')
    """

    X: np.ndarray
    y: np.ndarray
    name: str
    normalization: str
    truth: np.ndarray | None = field(default=None)
    n_clipped: int = 0

    def split(self, test_fraction: float, seed: object = 0) -> tuple[Stream, Stream]:
        """A seeded random (stream, held-out) split."""
        rng = resolve_rng(seed)
        order = rng.permutation(len(self.y))
        n_test = round(check_real("test_fraction", test_fraction, low=0.0, high=1.0) * len(self.y))
        test, train = order[:n_test], order[n_test:]
        return (Stream(self.X[train], self.y[train], self.name, self.normalization, self.truth),
                Stream(self.X[test], self.y[test], self.name + " (held out)",
                       self.normalization, self.truth))


def linear_regression_stream(horizon: int, dim: int = 10, *, noise_std: float = 0.01,
                             seed: object = None) -> Stream:
    """JKT Appendix G.1 synthetic regression, with the protocol of docs/errata.md, JKT-7.

    x* ~ N(0, I) normalised to norm 1; g_t ~ N(0, I) normalised to norm 1;
    y_t = <g_t, x*> + N(0, noise_std^2), clipped to [-1, 1] (R = 1).

    Examples
    --------
    >>> s = linear_regression_stream(100, 3, seed=0)
    >>> s.X.shape, bool(np.all(np.abs(s.y) <= 1))
    ((100, 3), True)
    """
    horizon, dim = check_int("horizon", horizon, low=1), check_int("dim", dim, low=1)
    noise_std = check_real("noise_std", noise_std, low=0.0)
    rng = resolve_rng(seed)
    truth = rng.normal(size=dim)
    truth /= np.linalg.norm(truth)
    X = rng.normal(size=(horizon, dim))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ truth + noise_std * rng.normal(size=horizon), -1.0, 1.0)
    return Stream(X, y, f"synthetic linear regression (d={dim})",
                  f"rows of N(0, I) scaled to norm 1; y = <x, x*> + N(0, {noise_std:g}^2) "
                  "clipped to [-1, 1]; ||x*|| = 1", truth)


def logistic_stream(horizon: int, dim: int = 54, *, label_noise: float = 0.1,
                    seed: object = None) -> Stream:
    """Planted-separator classification stream (Covertype's stand-in: docs/errata.md, JKT-7).

    x_t ~ N(0, I) normalised to norm 1, y_t = sign(<x_t, w*>) flipped with probability
    ``label_noise``.

    Examples
    --------
    >>> s = logistic_stream(50, 4, seed=1)
    >>> sorted(set(s.y.tolist()))
    [-1.0, 1.0]
    """
    horizon, dim = check_int("horizon", horizon, low=1), check_int("dim", dim, low=1)
    label_noise = check_real("label_noise", label_noise, low=0.0, high=0.5)
    rng = resolve_rng(seed)
    truth = rng.normal(size=dim)
    truth /= np.linalg.norm(truth)
    X = rng.normal(size=(horizon, dim))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ truth >= 0, 1.0, -1.0)
    flip = rng.random(horizon) < label_noise
    y[flip] = -y[flip]
    return Stream(X, y, f"synthetic logistic (d={dim}, {label_noise:.0%} label noise)",
                  "rows of N(0, I) scaled to norm 1; labels +-1", truth)
