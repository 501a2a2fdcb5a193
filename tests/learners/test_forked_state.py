"""A state restored twice is a fork of one noise stream: it warns, and the warning is
right (the two continuations draw the same noise, so their difference carries none)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.adapters import make_learner
from dpol.counters import BinaryTreeCounter
from dpol.errors import ForkedStateWarning


def test_a_learner_state_restored_twice_warns_and_its_difference_is_noise_free():
    learner = make_learner("ridge", 2, horizon=10, epsilon=1.0)  # fresh OS entropy
    learner.learn_one(np.array([0.3, 0.1]), 0.2)
    state = learner.get_state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one restore: the ordinary resume, silent
        a = type(learner).from_state(state)
    with pytest.warns(ForkedStateWarning, match="was restored before"):
        b = type(learner).from_state(state)
    # what the warning is about: both continue one noise stream (equal elements, equal
    # releases), so what one reveals, the other does not average away
    x = np.array([0.5, -0.2])
    a.learn_one(x, 0.4)
    b.learn_one(x, 0.4)
    np.testing.assert_array_equal(a.weights, b.weights)


def test_states_of_other_steps_and_other_learners_do_not_warn():
    learner = make_learner("ridge", 2, horizon=10, epsilon=1.0)
    first = learner.get_state()
    learner.learn_one(np.array([0.3, 0.1]), 0.2)
    later = learner.get_state()
    other = make_learner("ridge", 2, horizon=10, epsilon=1.0).get_state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for state in (first, later, other):
            type(learner).from_state(state)


def test_a_counter_state_restored_twice_warns_and_its_difference_is_noise_free():
    c = BinaryTreeCounter(8, epsilon=1.0, delta=1e-5)  # fresh OS entropy
    c.add([0.5])
    state = c.get_state()
    a = BinaryTreeCounter.from_state(state)
    with pytest.warns(ForkedStateWarning):
        b = BinaryTreeCounter.from_state(state)
    # two neighbouring elements: the difference of the releases is exactly theirs
    assert a.add([0.9])[0] - b.add([-0.2])[0] == pytest.approx(1.1, abs=1e-12)
