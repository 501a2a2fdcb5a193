"""Checkpoints of a counter (get_state / from_state, pickle): a rebuilt counter continues
identically, for every counter and noise kind (tests/counter_cases.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter
from dpol.errors import InvalidInputError

from counter_cases import COUNTERS, assert_same_release, cases_with_noise, in_bound_stream, make

ALL = sorted(COUNTERS)


@pytest.mark.parametrize(("name", "noise"), cases_with_noise(ALL))
def test_state_round_trip_continues_identically(name, noise):
    values = in_bound_stream(40, 2)
    a = make(name, 40, 2, noise=noise, seed=21)
    a.run(values[:13])
    state = a.get_state()
    b = type(a).from_state(state)
    c = pickle.loads(pickle.dumps(a))
    rest_a = a.run(values[13:])
    assert np.array_equal(rest_a, b.run(values[13:]))  # same path, same state: exact
    assert_same_release(name, rest_a, np.stack([c.add(v) for v in values[13:]]))
    ref = make(name, 40, 2, noise=noise, seed=21)
    assert_same_release(name, ref.run(values)[13:], rest_a)


def test_from_state_refuses_a_foreign_state():
    state = BinaryTreeCounter(4, noise_multiplier=1.0).get_state()
    with pytest.raises(InvalidInputError, match="state must come from HonakerTreeCounter"):
        HonakerTreeCounter.from_state(state)


def test_a_state_shares_no_array_with_either_counter():
    # get_state and from_state both copy deeply: writing into a state changes neither
    # the counter it came from nor the counter rebuilt from it
    values = in_bound_stream(8, 2, seed=1)
    a, twin = (BinaryTreeCounter(8, 2, noise_multiplier=1.0, seed=3) for _ in range(2))
    a.run(values[:3])
    twin.run(values[:3])
    state = a.get_state()
    b = BinaryTreeCounter.from_state(state)
    for array in (state["sum"], state["structure"]["level_prefix"]):
        array[...] = 1e9
    expected = twin.run(values[3:])
    assert np.array_equal(a.run(values[3:]), expected)
    assert np.array_equal(b.run(values[3:]), expected)


@pytest.mark.parametrize("seed", [3, None])
def test_a_restore_keeps_whether_the_noise_was_seeded_but_not_the_seed(seed):
    # the rebuilt counter gets seed=None (its generator is restored from the state), yet
    # its guarantee must still say that the original noise came from a seed
    state = BinaryTreeCounter(8, noise_multiplier=1.0, seed=seed).get_state()
    assert state["params"]["seed"] is None
    assert BinaryTreeCounter.from_state(state).privacy.seeded is (seed is not None)
