"""Exact discrete Gaussian and discrete Laplace samplers on OS randomness (secure noise).

Float samplers leak the data through the low-order bits of ``value + noise`` (Mironov
2012). These follow Canonne, Kamath and Steinke 2020 (CKS), Algorithms 1-3: exact
rationals, coins from ``randrange`` of a cryptographically secure generator, integer
samples that callers scale by a power of two (:func:`grid_spacing`) so sums stay exact in
float64. About 4 x 10^4 samples per second (numpy's float samplers: ~10^8). ``rng``
defaults to :data:`OS_RNG` (``secrets.SystemRandom()``); tests pass ``random.Random``,
never do so in production.
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction
from numbers import Rational, Real

import numpy as np

from dpol._validation import check_int, fail

__all__ = [
    "GRID_BITS",
    "OS_RNG",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_gaussian_tau",
    "discrete_laplace",
    "discrete_laplace_variance",
    "grid_release",
    "grid_spacing",
]

#: secure noise of scale s lives on the grid 2^floor(log2 s) / 2^GRID_BITS: at least
#: 2^10 grid steps per noise scale, so the lattice costs nothing measurable (variance,
#: privacy slack) and |values| up to 2^42 scales stay exact in float64
GRID_BITS = 10

#: the default generator of every sampler here: the operating system's CSPRNG
OS_RNG = secrets.SystemRandom()


def _as_fraction(name: str, value: object) -> Fraction:
    """A positive exact rational: Fractions and ints as given, floats by their exact value."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise fail(name, "be a positive rational or float", value)
    if isinstance(value, Rational):
        frac = Fraction(value.numerator, value.denominator)
    else:
        x = float(value)
        if not math.isfinite(x):
            raise fail(name, "be finite", value)
        frac = Fraction(x)  # the float's exact binary value
    if frac <= 0:
        raise fail(name, "be > 0", value)
    return frac


def _bernoulli_exp_small(num: int, den: int, rng: object) -> bool:
    """Bernoulli(exp(-num/den)) for 0 <= num/den <= 1 (CKS Algorithm 1, first part).

    K counts the successes of coins Bernoulli(gamma/1), Bernoulli(gamma/2), ... until the
    first failure; P[K >= k] = gamma^k / k!, so P[K even] = sum_k (-gamma)^k / k! = e^-gamma.
    """
    k = 1
    while rng.randrange(den * k) < num:  # Bernoulli(gamma / k), exactly
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: object, rng: object = None) -> bool:
    """One exact Bernoulli(exp(-gamma)) coin for a rational gamma >= 0 (CKS Algorithm 1).

    gamma > 1 is split as exp(-1)^floor(gamma) * exp(-(gamma - floor(gamma))), each
    factor an independent coin; the loop stops at the first failure.

    Examples
    --------
    >>> import random
    >>> rng = random.Random(0)
    >>> sum(bernoulli_exp(Fraction(1, 2), rng) for _ in range(1000))  # 1000 e^-1/2 = 607
    602
    """
    if isinstance(gamma, int) and not isinstance(gamma, bool):
        gamma = Fraction(gamma)
    if not isinstance(gamma, Fraction) or gamma < 0:
        raise fail("gamma", "be a non-negative int or Fraction", gamma)
    rng = OS_RNG if rng is None else rng
    num, den = gamma.numerator, gamma.denominator
    while num > den:
        if not _bernoulli_exp_small(1, 1, rng):
            return False
        num -= den
    return _bernoulli_exp_small(num, den, rng)


def _laplace_int(t: int, s: int, rng: object) -> int:
    """Discrete Laplace of scale t/s (t, s positive ints): CKS Algorithm 2.

    U uniform on 0..t-1 kept with probability exp(-U/t) and V ~ Geometric(1 - e^-1) give
    X = U + tV with P[X = x] proportional to exp(-x/t); Y = floor(X/s) is geometric with
    ratio exp(-s/t); a fair sign, rejecting "-0", makes P[Z = z] prop. to exp(-|z| s/t).
    """
    while True:
        u = rng.randrange(t)
        if not _bernoulli_exp_small(u, t, rng):
            continue
        v = 0
        while _bernoulli_exp_small(1, 1, rng):
            v += 1
        y = (u + t * v) // s
        negative = rng.randrange(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace(scale: object, size: int, rng: object = None) -> list[int]:
    """``size`` i.i.d. integers with P[z] proportional to exp(-|z| / scale) (CKS Algorithm 2).

    Parameters
    ----------
    scale : Fraction, int or float
        t > 0, taken as an exact rational (a float by its exact binary value).
    size : int
    rng : object with ``randrange``, optional
        Default: :data:`OS_RNG`, the OS generator.

    Privacy
    -------
    For integer-valued q of l1 sensitivity Delta_1, q(x) + Z is (Delta_1 / scale)-DP: the
    pmfs' log-ratio is at most ||q(x) - q(x')||_1 / scale (CKS Section 1).

    Examples
    --------
    >>> import random
    >>> discrete_laplace(Fraction(3, 2), 6, random.Random(0))
    [0, 3, -2, 3, 0, 4]
    """
    frac = _as_fraction("scale", scale)
    size = check_int("size", size, low=0)
    rng = OS_RNG if rng is None else rng
    return [_laplace_int(frac.numerator, frac.denominator, rng) for _ in range(size)]


def discrete_laplace_variance(scale: float) -> float:
    """Exact variance of the discrete Laplace of scale t: 2q/(1-q)^2, q = exp(-1/t).

    Equal to 1 / (2 sinh^2(1/(2t))) = 2t^2 - 1/6 + O(1/t^2): slightly below the
    continuous 2t^2.

    Examples
    --------
    >>> round(discrete_laplace_variance(1000.0) - 2e6, 4)
    -0.1667
    """
    return 0.5 / math.sinh(0.5 / float(scale)) ** 2


def discrete_gaussian(sigma2: object, size: int, rng: object = None) -> list[int]:
    """``size`` i.i.d. integers with P[z] proportional to exp(-z^2 / (2 sigma2)) (CKS Alg. 3).

    Rejection from the discrete Laplace of scale t = floor(sigma) + 1: a candidate Y is
    kept with probability exp(-(|Y| - sigma2/t)^2 / (2 sigma2)), computed as one exact
    Bernoulli(exp(-gamma)) coin with gamma = (|Y| t d - n)^2 / (2 n t^2 d) for
    sigma2 = n/d. The expected number of candidates per sample is a small constant.

    Parameters
    ----------
    sigma2 : Fraction, int or float
        The variance parameter sigma^2 > 0, taken exactly (a float by its binary value).
        The law's variance is below sigma^2 by a relative 4 pi^2 sigma^2 e^(-4 pi^2
        sigma^2) at most (CKS Proposition 19): zero in float64 for sigma >= 2.
    size : int
    rng : object with ``randrange``, optional
        Default: :data:`OS_RNG`, the OS generator.

    Privacy
    -------
    For integer-valued q of l2 sensitivity Delta_2, q(x) + Z with i.i.d. N_Z(0, sigma2)
    coordinates is (Delta_2^2 / (2 sigma2))-zCDP, the continuous Gaussian's Renyi curve
    (CKS Theorem 14: the two pmfs share their normaliser, and the shifted lattice sum is
    largest unshifted, by Poisson summation; coordinates add). The direct (epsilon,
    delta) bound carries a slack :func:`discrete_gaussian_tau` (CKS Theorem 15).

    Examples
    --------
    >>> import random
    >>> discrete_gaussian(Fraction(9, 4), 6, random.Random(0))
    [-1, 2, -1, 2, 1, 2]
    """
    frac = _as_fraction("sigma2", sigma2)
    size = check_int("size", size, low=0)
    rng = OS_RNG if rng is None else rng
    n, d = frac.numerator, frac.denominator
    t = math.isqrt(n // d) + 1  # floor(sqrt(n/d)) + 1
    out = []
    while len(out) < size:
        y = _laplace_int(t, 1, rng)
        if bernoulli_exp(Fraction((abs(y) * t * d - n) ** 2, 2 * n * t * t * d), rng):
            out.append(y)
    return out


def discrete_gaussian_tau(sigma: float, dim: int) -> float:
    """tau = 10 sum_{k=1}^{dim-1} exp(-2 pi^2 sigma^2 k/(k+1)), CKS Theorem 15's slack.

    An upper bound, 10 (dim - 1) exp(-pi^2 sigma^2) (every k/(k+1) >= 1/2), evaluated in
    log space; sigma in lattice units. It is exactly 0.0 in float64 for sigma >= 9, far
    below the 2^10 of :func:`grid_spacing`.

    Examples
    --------
    >>> discrete_gaussian_tau(1.0, 10) > 0, discrete_gaussian_tau(1024.0, 10**9)
    (True, 0.0)
    """
    dim = check_int("dim", dim, low=1)
    if dim == 1:
        return 0.0
    log_tau = math.log(10.0 * (dim - 1)) - math.pi**2 * float(sigma) ** 2
    return math.exp(log_tau) if log_tau > -745.0 else 0.0


def grid_spacing(scale: float) -> float:
    """The grid of secure noise of scale s: the largest power of two <= s / 2^GRID_BITS.

    A power of two, so that multiples of it add exactly in float64 while their magnitude
    stays below 2^53 times it (2^42 s and more).

    Examples
    --------
    >>> grid_spacing(1.0), grid_spacing(3.0) == 2.0**-9
    (0.0009765625, True)
    """
    if not isinstance(scale, Real) or not math.isfinite(scale) or scale <= 0:
        raise fail("scale", "be a finite real > 0", scale)
    _, exponent = math.frexp(float(scale))  # scale = m 2^e, 0.5 <= m < 1
    return math.ldexp(1.0, exponent - 1 - GRID_BITS)


def grid_release(value: np.ndarray, std: float, grid: float, rng: object = None) -> np.ndarray:
    """round_g(value) + g Y, Y ~ N_Z(0, (std/g)^2 I): one secure Gaussian release on g Z^d.

    Rounding adds at most g sqrt(d) to neighbours' l2 distance (callers add it to the
    sensitivity); the result is exact in float64, refused where magnitudes could reach
    2^52 g.

    Examples
    --------
    >>> import random
    >>> out = grid_release(np.array([0.3, -1.1]), 1.0, 2.0**-10, random.Random(0))
    >>> bool(np.all(out * 2**10 % 1 == 0))
    True
    """
    base = np.rint(np.asarray(value, dtype=np.float64) / grid)
    if float(np.max(np.abs(base), initial=0.0)) + 2.0**20 * std / grid >= 2.0**52:
        raise fail("value", f"stay below 2^52 grid steps of {grid:g} less 2^20 noise scales "
                   f"of {std:g} (float64 sums of grid values stop being exact there)",
                   float(np.max(np.abs(value))))
    sigma2 = Fraction(std / grid) ** 2  # exact: std / grid is a float times 2^k
    units = discrete_gaussian(sigma2, base.size, rng)
    return (base + np.array(units, dtype=np.float64).reshape(base.shape)) * grid
