"""Privacy of a counter: calibration from epsilon or a noise multiplier, the node
sensitivity and the reference of pure noise, for every counter (tests/counter_cases.py)."""

from __future__ import annotations

import pytest

from dpol.counters import BinaryTreeCounter
from dpol.errors import InvalidInputError, NonPrivateWarning

from counter_cases import COUNTERS, make

ALL = sorted(COUNTERS)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"noise_multiplier": 1.0, "epsilon": 1.0}, "exactly one"),
        ({}, "exactly one"),
        ({"epsilon": 1.0}, "delta must be > 0 for Gaussian"),
        ({"epsilon": -1.0, "delta": 1e-5}, "epsilon must be > 0"),
        ({"epsilon": float("nan"), "delta": 1e-5}, "epsilon must not be NaN"),
        ({"noise_multiplier": -1.0}, "noise_multiplier must be >= 0"),
        ({"noise_multiplier": 1.0, "calibration": "paper"}, "calibration must be 'tight' when"),
    ],
)
def test_calibration_errors_name_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        BinaryTreeCounter(8, **kwargs)


@pytest.mark.parametrize("name", ALL)
def test_noise_multiplier_is_public_and_resolved(name):
    calibrated = make(name, 16, epsilon=1.0, delta=1e-5)
    given = make(name, 16, noise_multiplier=calibrated.noise_multiplier)
    assert isinstance(calibrated.noise_multiplier, float) and calibrated.noise_multiplier > 0
    assert given.noise_scale == calibrated.noise_scale
    with pytest.warns(NonPrivateWarning):
        assert make(name, 16, epsilon=float("inf")).noise_multiplier == 0.0
    clone = type(calibrated).from_state(calibrated.get_state())  # rebuilt from epsilon
    assert clone.noise_multiplier == calibrated.noise_multiplier and clone.epsilon == 1.0


def test_node_sensitivity_and_what_pure_noise_is_relative_to():
    # T = 8: one element lies in 4 tree levels. Gaussian noise scales the l2 sensitivity
    # node_sensitivity * sqrt(4); pure noise the sum over the levels, times sqrt(dim) for
    # Laplace (an l2 ball of radius r lies in the l1 ball of radius sqrt(d) r), times 1
    # for the l2 Gamma mechanism. Products of small powers of two and 1.2: exact but for
    # one rounding, so rel=1e-15
    assert BinaryTreeCounter(8, bound=0.5, noise_multiplier=1.0).node_sensitivity == 1.0
    assert BinaryTreeCounter(8, bound=0.5, noise_multiplier=1.0,
                             neighbouring="add_remove").node_sensitivity == 0.5
    own = BinaryTreeCounter(8, 4, noise_multiplier=0.5, element_sensitivity=1.2)
    assert own.node_sensitivity == 1.2
    assert own.sensitivity == pytest.approx(1.2 * 2, rel=1e-15)
    assert own.noise_scale == pytest.approx(0.5 * 1.2 * 2, rel=1e-15)
    laplace = BinaryTreeCounter(8, 4, noise_multiplier=0.5, noise="laplace",
                                element_sensitivity=1.2)
    assert laplace.noise_scale == pytest.approx(0.5 * 4 * 2 * 1.2, rel=1e-15)
    gamma = BinaryTreeCounter(8, 4, noise_multiplier=0.5, noise="gamma")
    assert gamma.noise_scale == pytest.approx(0.5 * 4 * 2.0, rel=1e-15)
    with pytest.raises(InvalidInputError, match="element_sensitivity must be"):
        BinaryTreeCounter(8, noise_multiplier=1.0, element_sensitivity=2.5)  # above 2 bound
