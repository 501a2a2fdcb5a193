"""Checkpointable: a state is a deep copy, a restore continues exactly without __init__,
and a state of another class is refused by name.

Every learner through it: test_learners.py (checkpoint mid-stream); a second restore of
one state: test_forked_state.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.learners._checkpoint import Checkpointable


class _Walk(Checkpointable):
    inits = 0

    def __init__(self, seed):
        type(self).inits += 1
        self.rng, self.path = np.random.default_rng(seed), [0.0]

    def step(self):
        self.path.append(self.path[-1] + float(self.rng.normal()))
        return self.path[-1]


def test_a_state_is_a_deep_copy_and_a_restore_continues_exactly():
    walk = _Walk(3)
    walk.step()
    state = walk.get_state()
    expected = [walk.step() for _ in range(3)]  # the original moves on after get_state
    assert len(state["state"]["path"]) == 2  # ... and the state does not
    inits = _Walk.inits
    restored = _Walk.from_state(state)
    assert _Walk.inits == inits  # rebuilt from the state alone
    assert [restored.step() for _ in range(3)] == expected  # the same draws, bit for bit
    assert restored.rng is not walk.rng and restored.path is not walk.path


def test_a_state_of_another_class_or_no_state_is_refused_by_name():
    class Other(Checkpointable):
        pass

    with pytest.raises(InvalidInputError,
                       match=r"^state must come from Other\.get_state\(\); got '_Walk'"):
        Other.from_state(_Walk(0).get_state())
    with pytest.raises(InvalidInputError, match=r"^state must come from _Walk\.get_state"):
        _Walk.from_state([1, 2])
