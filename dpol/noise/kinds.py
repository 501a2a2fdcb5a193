"""Noise kinds as objects: what a mechanism asks instead of comparing the ``noise`` string.

A kind knows how to draw (``sample``, ``noisy``), its sensitivity's norm, its
dp-accounting events (``dp_event``, ``event``), its grid (none for float noise) and what
it refuses; :func:`dpol.accounting.calibrate` sizes it. :data:`STRATEGY_NOISES` says which
strategy takes which kind; :func:`noise_kind` parses ``noise=``.

Examples
--------
>>> kind = noise_kind("laplace")
>>> kind.norm, kind.approximate, kind.secure_twin
('l1', False, 'secure_laplace')
>>> kind.dp_event(2.0)
LaplaceDpEvent(noise_multiplier=2.0)
>>> noise_kind("secure").dp_event(1.0), noise_kind("gamma").pure_epsilon(0.5)
(ZCDpEvent(rho=0.5, xi=0.0), 2.0)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpol._lazy import scipy_stats
from dpol._validation import check_choice, fail
from dpol.noise._dp_accounting import dp_accounting
from dpol.noise.discrete import (
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_variance,
    grid_release,
    grid_spacing,
)
from dpol.noise.gaussian import gaussian
from dpol.noise.l2_gamma import l2_gamma
from dpol.noise.laplace import laplace

__all__ = [
    "KINDS",
    "NOISE_KINDS",
    "SECURE_NOISE_KINDS",
    "STRATEGY_NOISES",
    "NoiseKind",
    "noise_kind",
    "strategy_noises",
]


class NoiseKind:
    """One kind of noise; subclasses are stateless singletons in :data:`KINDS`.

    Attributes
    ----------
    name : str
        The ``noise=`` string that selects it.
    secure : bool
        Exact discrete noise on a power-of-two grid from OS randomness (never seeded).
    approximate : bool
        (epsilon, delta)-DP (Gaussian kinds, delta > 0); else pure, epsilon = 1 / z.
    norm : {"l2", "l1"}
        The norm of a node's change the scale is relative to (Laplace: l1).
    secure_twin : str or None
        The secure kind with the same law on a grid, if any.
    paper : bool
        Whether a published formula may size it (continuous kinds only).
    """

    name = ""
    secure = False
    approximate = False
    norm = "l2"
    secure_twin: str | None = None
    paper = True

    def l1_factor(self, dim: int) -> float:
        """What one node's l2 sensitivity is multiplied by in this kind's norm (<= sqrt(d))."""
        return math.sqrt(dim) if self.norm == "l1" else 1.0

    def variance(self, scale: float, dim: int, grid: float | None = None) -> float:
        """Per-coordinate variance of one draw of this scale."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator | None, n: int, dim: int, scale: float, *,
               radius_rng: np.random.Generator | None = None,
               grid: float | None = None) -> np.ndarray:
        """``n`` rows of noise of this scale, shape (n, dim), drawn from ``rng`` (float
        kinds; the l2 Gamma mechanism draws radii from ``radius_rng``) or from the OS
        (secure kinds, on the grid ``grid``)."""
        raise NotImplementedError

    def dp_event(self, noise_multiplier: float, tau: float = 0.0) -> dp_accounting.DpEvent:
        """The dp-accounting event of one mechanism run at this noise multiplier,
        relative to sensitivity one in this kind's norm (``tau``: the zCDP slack xi of
        secure Gaussian noise)."""
        if noise_multiplier == 0.0:
            return dp_accounting.NonPrivateDpEvent()
        return self._event(noise_multiplier, tau)

    def _event(self, z: float, tau: float) -> dp_accounting.DpEvent:
        return dp_accounting.UnsupportedDpEvent()

    def event(self, sensitivity: float, scale: float, tau: float = 0.0) -> dp_accounting.DpEvent:
        """The dp-accounting event of one release of noise ``scale`` on a value of
        ``sensitivity`` (in this kind's norm): :meth:`dp_event` at z = scale / sensitivity
        (the discrete Gaussian states its rho = (sensitivity / scale)^2 / 2 directly)."""
        return self.dp_event(scale / sensitivity, tau)

    def composed_event(self, sensitivities: np.ndarray, scales: np.ndarray
                       ) -> dp_accounting.DpEvent:
        """The event of releases i of noise ``scales[i]`` on values of ``sensitivities[i]``,
        composed: equal ones (within 1e-9) as one self-composed event, unequal ones as
        the one event of the same privacy where the kind has a closed form.

        Gaussian mechanisms compose exactly into one of 1/z^2 = sum_i 1/z_i^2 (Dong, Roth,
        Su 2019, Corollary 3.3) and zCDP adds up (Bun, Steinke 2016, Lemma 2.3).

        Examples
        --------
        >>> noise_kind("gaussian").composed_event(np.array([1.0, 1.0]), np.array([2.0, 2.0]))
        SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=2.0), count=2)
        >>> noise_kind("secure").composed_event(np.array([1.0, 1.0]), np.array([1.0, 2.0]))
        ZCDpEvent(rho=0.625, xi=0.0)
        """
        events = [self.event(float(v), float(s)) for v, s in _pairs(sensitivities, scales)]
        return dp_accounting.ComposedDpEvent(events)  # the pure kinds add epsilons

    @staticmethod
    def _merged(values: np.ndarray, additive: bool, make) -> dp_accounting.DpEvent:
        """``make(value)`` of every value composed: equal ones self-composed, else one
        event of their sum (``additive``: zCDP's rho) or of 1/sqrt(sum z^-2) (Gaussian)."""
        n = values.size
        if additive:
            total = float(np.sum(values))
            one, whole = total / n, total
        else:
            total = float(np.sum(values**-2.0))  # mu^2
            one, whole = math.sqrt(n / total), 1.0 / math.sqrt(total)
        if np.all(np.abs(values - one) <= 1e-9 * one):
            return make(one) if n == 1 else dp_accounting.SelfComposedDpEvent(make(one), n)
        return make(whole)

    def check_calibration(self, calibration: str) -> str:
        """``calibration``, or the refusal of a published formula this kind cannot take."""
        if calibration == "paper" and not self.paper:
            raise fail("calibration", f"be 'tight' with noise={self.name!r} (the published "
                       "formulas are for continuous noise)", calibration)
        return calibration

    def grid(self, scale: float, sensitivity: float, dim: int) -> float:
        """The grid a value of l2 ``sensitivity`` in ``dim`` coordinates is rounded to
        before noise of ``scale`` is added: 0.0 (no grid) for float noise."""
        return 0.0

    def grids(self, scales: np.ndarray, sensitivities: np.ndarray, dim: int) -> np.ndarray:
        """:meth:`grid` of every release (arrays of scales and sensitivities)."""
        return np.array([self.grid(s, v, dim) for s, v in _pairs(scales, sensitivities)])

    def noisy(self, value: np.ndarray, scale: object, rng: np.random.Generator | None,
              grid: object = 0.0) -> np.ndarray:
        """``value`` plus one draw of this noise of ``scale`` per coordinate, a fresh array
        (rows of a 2-d ``value``: scales as a column (n, 1), grids (n,)); secure kinds
        round ``value`` to the grid first and draw from the OS (``rng`` unused)."""
        value = np.asarray(value, dtype=np.float64)
        if np.ndim(scale) == 0:
            return value + self.sample(rng, 1, value.size, scale, grid=grid).reshape(
                value.shape)
        return value + np.stack([self.sample(rng, 1, value.shape[1], float(s))[0]
                                 for s in np.ravel(scale)])

    def unit_radius_quantile(self, dim: int, prob: float) -> float | None:
        """The ``prob`` quantile of the l2 norm of one draw at scale 1 where the kind
        draws a radius (the l2 Gamma mechanism: Gamma(dim, 1)); None for the others."""
        return None

    def pure_epsilon(self, noise_multiplier: float) -> float | None:
        """The pure-DP epsilon of this multiplier (None for approximate kinds or z = 0)."""
        if self.approximate or noise_multiplier <= 0.0:
            return None
        return 1.0 / noise_multiplier

    def __repr__(self) -> str:
        return f"noise_kind({self.name!r})"


def _pairs(a: object, b: object) -> zip:
    """(a_i, b_i) of two arrays (or numbers) broadcast to one length."""
    return zip(*np.broadcast_arrays(np.ravel(a), np.ravel(b)), strict=True)


class Gaussian(NoiseKind):
    """i.i.d. N(0, scale^2) (:func:`dpol.noise.gaussian`); exact analytic Gaussian calibration."""

    name, approximate, secure_twin = "gaussian", True, "secure"

    def variance(self, scale, dim, grid=None):
        return scale**2

    def sample(self, rng, n, dim, scale, *, radius_rng=None, grid=None):
        return gaussian(rng, (n, dim), scale)

    def noisy(self, value, scale, rng, grid=0.0):
        # value + scale z, one draw per coordinate in C order (scale: a number or a column)
        return value + scale * rng.standard_normal(np.shape(value))

    def composed_event(self, sensitivities, scales):
        z = np.asarray(scales, dtype=np.float64) / sensitivities
        return self._merged(z, False, dp_accounting.GaussianDpEvent)

    def _event(self, z, tau):
        return dp_accounting.GaussianDpEvent(z)


class Laplace(NoiseKind):
    """i.i.d. Laplace(0, scale) per coordinate (:func:`dpol.noise.laplace`), l1 norm."""

    name, norm, secure_twin = "laplace", "l1", "secure_laplace"

    def variance(self, scale, dim, grid=None):
        return 2.0 * scale**2

    def sample(self, rng, n, dim, scale, *, radius_rng=None, grid=None):
        return laplace(rng, (n, dim), scale)

    def _event(self, z, tau):
        return dp_accounting.LaplaceDpEvent(z)


class L2Gamma(NoiseKind):
    """WDP's l2 Gamma mechanism (:func:`dpol.noise.l2_gamma`): pure DP, no dp-accounting
    event (UnsupportedDpEvent; the guarantee is carried as pure epsilon)."""

    name = "gamma"

    def variance(self, scale, dim, grid=None):
        return (dim + 1) * scale**2

    def sample(self, rng, n, dim, scale, *, radius_rng=None, grid=None):
        return l2_gamma(rng, n, dim, scale, radius_rng=radius_rng)

    def unit_radius_quantile(self, dim, prob):
        return float(scipy_stats.gamma(a=dim).ppf(prob))


class _Discrete(NoiseKind):
    """Exact discrete noise on g Z (:mod:`dpol.noise.discrete`, OS randomness)."""

    secure, paper = True, False

    def _ints(self, units: Fraction, size: int) -> list[int]:
        raise NotImplementedError

    def grid(self, scale, sensitivity, dim):
        # rounding moves an element by <= g sqrt(d) / 2, within 2^-11 of the sensitivity,
        # and g <= scale / 2^10 keeps 2^10 grid steps per noise scale
        return grid_spacing(min(scale, sensitivity / math.sqrt(dim)) if sensitivity > 0.0
                            else scale)

    def noisy(self, value, scale, rng, grid=0.0):
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 2:  # one release per row, each with its scale and grid
            scales, grids = np.ravel(scale), np.ravel(grid)
            return np.stack([self.noisy(v, float(scales[i % scales.size]),
                                        rng, float(grids[i % grids.size]))
                             for i, v in enumerate(value)])
        if scale == 0.0:
            return value + 0.0
        return self._release(value, float(scale), float(grid))

    def _release(self, value: np.ndarray, scale: float, grid: float) -> np.ndarray:
        base = np.rint(value / grid) * grid  # exact: a multiple of the power of two g
        return base + self.sample(None, 1, value.size, scale, grid=grid).reshape(value.shape)

    def sample(self, rng, n, dim, scale, *, radius_rng=None, grid=None):
        units = Fraction(scale) / Fraction(grid)  # exact: the scale in grid steps
        ints = self._ints(units, n * dim)
        # |ints| < 2^53, so float64 holds them exactly; times a power of two: exact
        return np.array(ints, dtype=np.float64).reshape(n, dim) * grid


class DiscreteGaussian(_Discrete):
    """g N_Z(0, (scale/g)^2): (1/(2 z^2))-zCDP (CKS 2020 Theorem 14), with CKS Theorem
    15's slack tau as the zCDP xi; calibrated by dp-accounting's RDP accountant."""

    name, approximate = "secure", True

    def variance(self, scale, dim, grid=None):
        # below scale^2 by a relative 4 pi^2 s^2 e^(-4 pi^2 s^2), s = scale/grid >= 2^10
        # (CKS Proposition 19): exactly scale^2 in float64
        return scale**2

    def _ints(self, units, size):
        return discrete_gaussian(units**2, size)

    def _event(self, z, tau):
        return dp_accounting.ZCDpEvent(0.5 * (1.0 / z) ** 2, tau)

    def event(self, sensitivity, scale, tau=0.0):
        if scale == 0.0:
            return dp_accounting.NonPrivateDpEvent()
        return dp_accounting.ZCDpEvent(0.5 * (sensitivity / scale) ** 2, tau)

    def composed_event(self, sensitivities, scales):
        rho = 0.5 * (sensitivities / np.asarray(scales, dtype=np.float64)) ** 2
        return self._merged(rho, True, dp_accounting.ZCDpEvent)

    def _release(self, value, scale, grid):
        return grid_release(value, scale, grid)  # refuses magnitudes near 2^52 g


class DiscreteLaplace(_Discrete):
    """The discrete Laplace of scale ``scale`` on g Z: pure (1/z)-DP, carried to the RDP
    accountant as (1/(2 z^2))-zCDP (Bun and Steinke 2016, Proposition 1.4)."""

    name, norm = "secure_laplace", "l1"

    def variance(self, scale, dim, grid=None):
        if scale == 0.0:
            return 0.0
        return grid**2 * discrete_laplace_variance(scale / grid)

    def _ints(self, units, size):
        return discrete_laplace(units, size)

    def _event(self, z, tau):
        return dp_accounting.ZCDpEvent(0.5 * (1.0 / z) ** 2, tau)


#: every kind by name, float kinds first
KINDS: dict[str, NoiseKind] = {k.name: k for k in (
    Gaussian(), Laplace(), L2Gamma(), DiscreteGaussian(), DiscreteLaplace())}
#: float noise drawn from numpy generators (seeded, replayable bit for bit)
NOISE_KINDS = tuple(name for name, k in KINDS.items() if not k.secure)
#: exact discrete noise on a power-of-two grid from OS randomness: the secure twins of
#: "gaussian" (discrete Gaussian) and "laplace" (discrete Laplace); never seeded
SECURE_NOISE_KINDS = tuple(name for name, k in KINDS.items() if k.secure)

_ALL = NOISE_KINDS + SECURE_NOISE_KINDS
_GAUSSIAN = ("gaussian", "secure")
#: which counter strategy takes which noise: the one table. Trees take every kind (their
#: releases add node noises with integer weights, or post-process exact grid nodes);
#: the matrix factorizations the Gaussian kinds (secure: post-processing of a grid-rounded
#: encoder), their l1 column norm growing like sqrt(T); the unbounded tree float Gaussian
#: noise only (its strategy's ``refusal`` says why)
STRATEGY_NOISES: dict[str, tuple[str, ...]] = {
    "tree": _ALL,
    "padded_tree": _ALL,
    "honaker": _ALL,
    "window_tree": _ALL,
    "toeplitz": _GAUSSIAN,
    "blt": _GAUSSIAN,
    "unbounded_tree": ("gaussian",),  # secure: see its refusal
    "banded_toeplitz": _GAUSSIAN,
    "dense_mean": _GAUSSIAN,
    "banded_matrix": _GAUSSIAN,
}


def noise_kind(name: object, among: tuple[str, ...] | None = None,
               who: str | None = None) -> NoiseKind:
    """The kind called ``name``, one of ``among`` (default: every kind); the one parser
    of a ``noise=`` argument (``InvalidInputError`` naming ``noise`` otherwise, and
    ``who`` refuses it when given).

    Examples
    --------
    >>> noise_kind("gamma").variance(1.0, 3)  # (d + 1) theta^2
    4.0
    >>> noise_kind("laplace", among=("gaussian", "secure"))
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: noise must be one of 'gaussian', 'secure'; got 'laplace'
    """
    choices = _ALL if among is None else among
    if who is not None and (not isinstance(name, str) or name not in choices):
        raise fail("noise", f"be {' or '.join(map(repr, choices))} for {who}", name)
    return KINDS[check_choice("noise", name, choices)]


def strategy_noises(strategy: str, *, secure: bool | None = None) -> tuple[str, ...]:
    """The kinds a strategy takes (``secure``: only secure or only float kinds).

    Examples
    --------
    >>> strategy_noises("blt"), strategy_noises("tree", secure=False)
    (('gaussian', 'secure'), ('gaussian', 'laplace', 'gamma'))
    """
    kinds = STRATEGY_NOISES[strategy]
    return kinds if secure is None else tuple(k for k in kinds if KINDS[k].secure == secure)
