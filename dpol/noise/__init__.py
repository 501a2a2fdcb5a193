"""Noise samplers and noise kinds (layer L0). Every float sampler takes an
``np.random.Generator``; no global RNG. The secure samplers of :mod:`dpol.noise.discrete`
draw exact discrete noise from the OS. :mod:`dpol.noise.kinds` makes each kind an object
(sampler and noisy release, sensitivity norm, dp-accounting event, grid, what it refuses)
and holds the one table of which counter strategy takes which kind."""

from dpol.noise.discrete import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    grid_spacing,
)
from dpol.noise.gaussian import gaussian
from dpol.noise.kinds import KINDS, STRATEGY_NOISES, NoiseKind, noise_kind, strategy_noises
from dpol.noise.l2_gamma import l2_gamma
from dpol.noise.laplace import laplace
from dpol.noise.source import NOISE_KINDS, SECURE_NOISE_KINDS, NoiseSource

__all__ = [
    "KINDS",
    "NOISE_KINDS",
    "SECURE_NOISE_KINDS",
    "STRATEGY_NOISES",
    "NoiseKind",
    "NoiseSource",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "gaussian",
    "grid_spacing",
    "l2_gamma",
    "laplace",
    "noise_kind",
    "strategy_noises",
]
