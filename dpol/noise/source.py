"""A seeded, checkpointable stream of noise vectors shared by the counters."""

from __future__ import annotations

import copy
import math

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import check_int, check_real, fail
from dpol.noise.discrete import GRID_BITS, grid_spacing
from dpol.noise.kinds import NOISE_KINDS, SECURE_NOISE_KINDS, noise_kind

__all__ = ["NOISE_KINDS", "SECURE_NOISE_KINDS", "NoiseSource"]


class NoiseSource:
    """Rows of i.i.d. noise of one kind and scale, drawn in a fixed order.

    ``draw(a)`` followed by ``draw(b)`` gives exactly the rows of ``draw(a + b)``: the
    contract that lets a vectorized ``run`` reproduce the ``add`` loop bit for bit.
    Secure kinds draw from the OS, so there the two agree in distribution only.

    Parameters
    ----------
    kind : {"gaussian", "laplace", "gamma", "secure", "secure_laplace"}
        ``scale`` is the std, the Laplace scale, or theta of the l2 Gamma mechanism.
        ``"secure"``: g N_Z(0, (scale/g)^2), the discrete Gaussian of std parameter
        ``scale`` on the grid g Z; ``"secure_laplace"``: the discrete Laplace of scale
        ``scale`` on g Z (:mod:`dpol.noise.discrete`, exact, OS randomness).
    dim : int
    scale : float
    seed : None, int, SeedSequence or Generator
        Its entropy spawns two child streams (``spawn_seeds``). Secure kinds ignore it.
    grid : float, optional
        Secure kinds only: the grid g, a power of two <= scale / 2^10 (default
        :func:`~dpol.noise.discrete.grid_spacing`), the one the data were rounded to.

    Examples
    --------
    >>> a = NoiseSource("gaussian", 2, 1.0, seed=0)
    >>> b = NoiseSource("gaussian", 2, 1.0, seed=0)
    >>> bool(np.array_equal(np.vstack([a.draw(1), a.draw(2)]), b.draw(3)))
    True
    >>> s = NoiseSource("secure", 2, 1.0)
    >>> s.grid, bool(np.all(s.draw(3) / s.grid % 1 == 0))
    (0.0009765625, True)
    """

    def __init__(self, kind: str, dim: int, scale: float, seed: object = None, *,
                 grid: float | None = None) -> None:
        self.noise_kind = noise_kind(kind)
        self.kind = self.noise_kind.name
        self.dim = check_int("dim", dim, low=1)
        self.scale = check_real("scale", scale, low=0.0)
        main, radius = spawn_seeds(seed, 2)
        self.secure = self.noise_kind.secure
        if grid is not None and not (self.secure and self.scale > 0.0):
            raise fail("grid", "be None unless the noise is secure with scale > 0", grid)
        self.grid: float | None = None
        if self.secure:
            self._rng = self._radius_rng = None
            if self.scale > 0.0:
                self.grid = grid_spacing(self.scale) if grid is None else self._check_grid(grid)
        else:
            self._rng = np.random.default_rng(main)
            self._radius_rng = np.random.default_rng(radius)

    def _check_grid(self, grid: object) -> float:
        g = check_real("grid", grid, low=0.0, low_open=True)
        if math.frexp(g)[0] != 0.5 or g > self.scale / 2**GRID_BITS:
            raise fail("grid", f"be a power of two <= scale / 2^{GRID_BITS} = "
                       f"{self.scale / 2**GRID_BITS:g}", grid)
        return g

    @property
    def variance(self) -> float:
        """Per-coordinate variance of one row."""
        return self.noise_kind.variance(self.scale, self.dim, self.grid)

    def draw(self, n: int) -> np.ndarray:
        """The next ``n`` rows, shape (n, dim). Zero scale gives exact zeros."""
        if self.scale == 0.0:
            return np.zeros((n, self.dim))
        return self.noise_kind.sample(self._rng, n, self.dim, self.scale,
                                      radius_rng=self._radius_rng, grid=self.grid)

    def get_state(self) -> dict:
        """A deep copy of the generators' states (for checkpointing).

        Secure kinds have no state to save: a restored source continues with fresh OS
        randomness (the same law, other values).
        """
        if self.secure:
            return {"os_randomness": True}
        return {
            "main": copy.deepcopy(self._rng.bit_generator.state),
            "radius": copy.deepcopy(self._radius_rng.bit_generator.state),
        }

    def set_state(self, state: dict) -> None:
        """Restore the states captured by :meth:`get_state`."""
        if self.secure != ("os_randomness" in state):
            raise fail("state", "come from a NoiseSource of the same kind",
                       sorted(state))
        if self.secure:
            return
        # both built before either is replaced: a bad state leaves this source as it was
        self._rng, self._radius_rng = _restored(state["main"]), _restored(state["radius"])


def _restored(state: object) -> np.random.Generator:
    """A Generator in a ``bit_generator.state`` dict's state, of the dict's kind: a counter
    rebuilt from its parameters starts on PCG64, while the saved one may have drawn from
    a Generator of another kind (``spawn_seeds``)."""
    name = state.get("bit_generator") if isinstance(state, dict) else None
    kind = getattr(np.random, str(name), None)
    if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
        raise fail("state", "hold the state of one of numpy's bit generators", name)
    rng = np.random.Generator(kind(0))  # the seed is overwritten at once
    rng.bit_generator.state = copy.deepcopy(state)
    return rng
