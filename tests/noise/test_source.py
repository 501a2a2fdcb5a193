"""NoiseSource (dpol.noise.source): draws that concatenate across calls (the streaming ==
vectorized contract), its seeds and states, its variance, its secure kinds' grid.

Exact checks (bit-for-bit draws, exact zeros, stated variances, grid multiples); the
samplers' laws are tested in test_noise.py and test_discrete.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.noise import NOISE_KINDS, NoiseSource
from dpol.noise.discrete import grid_spacing


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_draws_concatenate_across_calls(kind):
    # the contract the counters' run == add loop rests on
    a, b = NoiseSource(kind, 3, 0.7, seed=5), NoiseSource(kind, 3, 0.7, seed=5)
    pieces = np.vstack([a.draw(1), a.draw(0), a.draw(4), a.draw(2)])
    assert np.array_equal(pieces, b.draw(7))


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_state_round_trip(kind):
    a = NoiseSource(kind, 2, 1.0, seed=1)
    a.draw(3)
    state = a.get_state()
    first = a.draw(5)
    a.set_state(state)
    assert np.array_equal(first, a.draw(5))


def test_seed_forms_agree_and_bad_seed_is_refused():
    ref = NoiseSource("gaussian", 2, 1.0, seed=9).draw(3)
    assert np.array_equal(NoiseSource("gaussian", 2, 1.0, np.random.SeedSequence(9)).draw(3), ref)
    assert np.array_equal(NoiseSource("gaussian", 2, 1.0, np.random.default_rng(9)).draw(3), ref)
    for bad in (-1, "x", 1.5, True):
        with pytest.raises(InvalidInputError, match="seed must be"):
            NoiseSource("gaussian", 2, 1.0, seed=bad)


def test_a_generator_seed_gives_children_of_its_kind():
    # a PCG64 Generator draws what its seed sequence's default_rng children draw (the
    # streams of every earlier release); an SFC64 one draws from SFC64 children
    children = np.random.SeedSequence(9).spawn(2)
    want = {"PCG64": np.random.default_rng(children[0]).standard_normal((3, 2)),
            "SFC64": np.random.Generator(np.random.SFC64(children[0])).standard_normal((3, 2))}
    for kind, draws in want.items():
        gen = np.random.Generator(getattr(np.random, kind)(9))
        assert np.array_equal(NoiseSource("gaussian", 2, 1.0, seed=gen).draw(3), draws)


def test_state_of_another_generator_kind_is_restored_and_a_bad_one_refused():
    sfc = NoiseSource("gaussian", 2, 1.0, seed=np.random.Generator(np.random.SFC64(3)))
    sfc.draw(2)
    state = sfc.get_state()
    pcg = NoiseSource("gaussian", 2, 1.0, seed=0)  # a from_state rebuild starts on PCG64
    pcg.set_state(state)
    assert np.array_equal(pcg.draw(4), sfc.draw(4))
    twin = NoiseSource("gaussian", 2, 1.0, seed=1)
    twin.set_state(pcg.get_state())
    for bad in ({**state, "radius": {"bit_generator": "os"}}, {**state, "main": 3}):
        with pytest.raises(InvalidInputError, match="state must hold the state of one of"):
            pcg.set_state(bad)
    assert np.array_equal(pcg.draw(3), twin.draw(3))  # nothing was replaced


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_zero_scale_is_exactly_zero(kind):
    assert not NoiseSource(kind, 4, 0.0, seed=0).draw(3).any()


@pytest.mark.parametrize(("kind", "expected"), [("gaussian", 4.0), ("laplace", 8.0),
                                                ("gamma", 4 * 4.0)])
def test_declared_variance(kind, expected):
    assert NoiseSource(kind, 3, 2.0).variance == expected


def test_noise_source_validates_arguments():
    with pytest.raises(InvalidInputError, match="noise must be one of"):
        NoiseSource("uniform", 2, 1.0)
    with pytest.raises(InvalidInputError, match="scale must be >= 0"):
        NoiseSource("gaussian", 2, -1.0)
    with pytest.raises(InvalidInputError, match="dim must be an integer >= 1"):
        NoiseSource("gaussian", 0, 1.0)



def test_secure_sources_ignore_seeds_but_validate_them():
    a = NoiseSource("secure", 3, 1.0, seed=0).draw(2)
    b = NoiseSource("secure", 3, 1.0, seed=0).draw(2)
    # P[equal] <= (max pmf)^6 ~ (1 / (2^10 sqrt(2 pi)))^6 < 1e-20: never by chance
    assert not np.array_equal(a, b)
    with pytest.raises(InvalidInputError, match="seed must be"):
        NoiseSource("secure", 3, 1.0, seed=-1)


def test_secure_source_grid_and_state():
    s = NoiseSource("secure_laplace", 2, 3.0)
    assert s.grid == grid_spacing(3.0) == 2.0**-9
    assert s.variance == pytest.approx(2 * 3.0**2, rel=1e-7)  # 2 b^2 - g^2/6
    assert np.all(s.draw(5) / s.grid % 1 == 0)
    s.set_state(s.get_state())  # nothing to restore: fresh OS randomness continues
    with pytest.raises(InvalidInputError, match="state must"):
        s.set_state(NoiseSource("gaussian", 2, 3.0, seed=0).get_state())
    for bad in (3e-3, 2.0**-8, -1.0):  # not a power of two; too coarse for scale 3; negative
        with pytest.raises(InvalidInputError, match="grid must"):
            NoiseSource("secure", 2, 3.0, grid=bad)
    with pytest.raises(InvalidInputError, match="grid must be None"):
        NoiseSource("gaussian", 2, 3.0, grid=2.0**-10)
    assert not NoiseSource("secure", 2, 0.0).draw(3).any()
