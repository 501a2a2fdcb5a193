"""prefetch(n): the next n releases' noise drawn at once, consumed by add."""

from __future__ import annotations

import numpy as np
import pytest

from counter_cases import COUNTERS, assert_same_release, make

ALL = sorted(COUNTERS)


@pytest.mark.parametrize("name", ALL)
def test_prefetched_add_loop_is_the_run(name):
    values = np.random.default_rng(1).uniform(-0.4, 0.4, size=(40, 2))
    looped = make(name, 40, 2, seed=5)
    looped.prefetch(40)
    loop = np.stack([looped.add(v) for v in values])
    assert_same_release(name, loop, make(name, 40, 2, seed=5).run(values))


@pytest.mark.parametrize("name", ALL)
def test_a_checkpoint_mid_prefetch_continues_identically(name):
    values = np.random.default_rng(2).uniform(-0.4, 0.4, size=(30, 2))
    c = make(name, 30, 2, seed=7)
    c.add(values[0])
    c.prefetch(20)  # a started stream: drawn ahead where the strategy continues blocks
    head = [c.add(v) for v in values[1:8]]
    clone = type(c).from_state(c.get_state())
    rest = np.stack([c.add(v) for v in values[8:]])
    np.testing.assert_array_equal(np.stack([clone.add(v) for v in values[8:]]), rest)
    whole = make(name, 30, 2, seed=7).run(values)
    assert_same_release(name, np.vstack([np.stack(head), rest]), whole[1:])


def test_run_after_a_partial_prefetch_uses_the_drawn_rows_first():
    values = np.full((16, 1), 0.25)
    c = make("binary", 16, seed=3)
    c.prefetch(10)
    first = [c.add(v) for v in values[:4]]
    later = c.run(values[4:])  # the 6 prefetched rows, then fresh draws
    np.testing.assert_array_equal(np.vstack([np.stack(first), later]),
                                  make("binary", 16, seed=3).run(values))


def test_prefetch_past_the_horizon_is_refused_and_secure_noise_draws_per_step():
    c = make("binary", 8)
    c.add([0.1])
    with pytest.raises(ValueError, match="n must be at most the 7 steps left before "
                                         "horizon=8; got 8"):
        c.prefetch(8)
    assert c._prefetched is None and c.t == 1  # nothing consumed
    secure = make("toeplitz", 8, noise="secure", delta=1e-5)
    secure.prefetch(8)
    assert secure._prefetched is None  # its exact path reads the rounded data
