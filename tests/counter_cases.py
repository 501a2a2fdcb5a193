"""One registry of counter configurations, shared by every contract test.

A new counter joins every contract test by adding a factory here. Counters of endless
streams (``horizon=None``, :data:`UNBOUNDED`) join too: :func:`make` builds them without a
horizon and the test's ``horizon`` becomes the length of the stream it feeds them; a test
of the horizon itself skips them, saying why.
"""

from __future__ import annotations

import warnings

from dpol.counters import (
    BandedMatrixCounter,
    BandedToeplitzCounter,
    BinaryTreeCounter,
    BltCounter,
    DenseMeanCounter,
    HonakerTreeCounter,
    ToeplitzCounter,
    UnboundedTreeCounter,
    WindowTreeCounter,
)
from dpol.counters.strategies.blt_optimizer import optimal_blt_parameters
from dpol.errors import NonPrivateWarning
from dpol.noise.kinds import NOISE_KINDS

#: BLT parameters of the endless BLT, optimized for a short design horizon (2^2), so that
#: the first 16 steps hold 98.8% of the norm of its first column (the audit sees them)
UNBOUNDED_THETAS, UNBOUNDED_OMEGAS = optimal_blt_parameters(2**2)

#: name -> (class, extra constructor keywords)
COUNTERS = {
    "binary": (BinaryTreeCounter, {}),
    "binary-padded": (BinaryTreeCounter, {"padded": True}),
    "honaker": (HonakerTreeCounter, {}),
    "window-1": (WindowTreeCounter, {"window": 1}),
    "window-4": (WindowTreeCounter, {"window": 4}),
    "window-5": (WindowTreeCounter, {"window": 5}),
    "window-big": (WindowTreeCounter, {"window": 1024}),
    "toeplitz": (ToeplitzCounter, {}),
    "blt": (BltCounter, {}),
    "blt-mean": (BltCounter, {"objective": "mean"}),
    "banded-4": (BandedToeplitzCounter, {"bands": 4}),
    "banded-mean": (BandedToeplitzCounter, {"bands": 3, "objective": "mean"}),
    "dense-mean": (DenseMeanCounter, {}),
    "banded-matrix": (BandedMatrixCounter, {"bands": 3}),
    "unbounded-tree": (UnboundedTreeCounter, {}),
    "blt-unbounded": (BltCounter, {"thetas": UNBOUNDED_THETAS, "omegas": UNBOUNDED_OMEGAS}),
}
#: the configurations built with ``horizon=None`` (endless streams)
UNBOUNDED = frozenset({"unbounded-tree", "blt-unbounded"})
#: the reason a test of the horizon itself gives when it skips them
NO_HORIZON = "an endless counter (horizon=None) has no horizon to test"

#: the float (seeded) noise kinds
NOISES = NOISE_KINDS

#: BLT (thetas, omegas) given by hand: two spread buffers, and three crowding near 1 (where
#: an expanded-polynomial lfilter loses digits); stability sums 0.4 and 0.95
BLT_GIVEN = [
    ([0.5, 0.95], [-0.1, -0.01]),
    ([0.99, 0.995, 0.999], [-0.003, -0.002, -0.00025]),
]


def noises(name: str) -> tuple[str, ...]:
    """Float noise kinds a registered counter takes: the code's own table
    (:data:`dpol.noise.kinds.STRATEGY_NOISES`, through ``Counter.supported_noises``)."""
    return COUNTERS[name][0].supported_noises(secure=False)


def horizon_arg(name: str, horizon: int) -> int | None:
    """The ``horizon`` argument of a configuration: None for an endless counter (the
    test's horizon is then only the length of the stream it feeds)."""
    return None if name in UNBOUNDED else horizon


def takes_noise(name: str, noise: str) -> bool:
    """Whether a configuration takes ``noise``: its class's row of the table, except
    that an endless BLT refuses secure noise (its secure mode keeps every element)."""
    cls = COUNTERS[name][0]
    secure = noise in cls.supported_noises(secure=True)
    return noise in cls.supported_noises() and not (secure and name == "blt-unbounded")


def cases_with_noise(names) -> list[tuple[str, str]]:
    """(counter, noise) pairs for parametrizing over every supported combination."""
    return [(n, k) for n in names for k in noises(n)]


def in_bound_stream(horizon: int, dim: int, seed: int = 0):
    """Elements of l2 norm < 1, so that no clipping happens."""
    import numpy as np

    rng = np.random.default_rng(seed)
    v = rng.normal(size=(horizon, dim))
    return 0.9 * v / np.maximum(1.0, np.linalg.norm(v, axis=1, keepdims=True))


def assert_same_release(name: str, a, b) -> None:
    """run vs add: bit for bit where the counter replays exactly, else to rounding.

    An FFT convolution and a direct dot product of the same draws differ by a few ulps of
    the largest term: relative 1e-12 of the noise scale is ~1e3 ulps of slack.
    """
    import numpy as np

    if "bit_identical_run" in COUNTERS[name][0].tags:
        assert np.array_equal(a, b)
    else:
        scale = max(1.0, float(np.max(np.abs(b))))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale)


def make(name: str, horizon: int, dim: int = 1, **kwargs):
    """Build a registered counter; ``noise_multiplier=1`` unless told otherwise."""
    cls, extra = COUNTERS[name]
    if "epsilon" not in kwargs:
        kwargs.setdefault("noise_multiplier", 1.0)
    with warnings.catch_warnings():
        if kwargs.get("noise_multiplier") == 0.0:
            warnings.simplefilter("ignore", NonPrivateWarning)
        return cls(horizon_arg(name, horizon), dim, **extra, **kwargs)


def brute_force_sensitivity(counter, horizon: int, neighbouring: str) -> float:
    """Largest encoder change over all streams in {-1, 0, 1}^T and every single change
    (replace-one: to any other value; add/remove: to 0), via ``node_values``."""
    import itertools

    import numpy as np

    best = 0.0
    for stream in itertools.product((-1.0, 0.0, 1.0), repeat=horizon):
        base = counter.node_values(np.array(stream))
        for i in range(horizon):
            for new in ((-1.0, 0.0, 1.0) if neighbouring == "replace_one" else (0.0,)):
                changed = np.array(stream)
                changed[i] = new
                best = max(best, float(np.linalg.norm(counter.node_values(changed) - base)))
    return best
