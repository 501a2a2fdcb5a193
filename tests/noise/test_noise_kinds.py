"""Noise kinds as objects (dpol.noise.kinds) and the one strategy x noise table."""

from __future__ import annotations

import warnings

import dp_accounting
import numpy as np
import pytest

from dpol.accounting import calibration
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.noise import KINDS, NOISE_KINDS, SECURE_NOISE_KINDS, STRATEGY_NOISES, noise_kind

from counter_cases import COUNTERS, horizon_arg, takes_noise


def test_every_kind_states_its_norm_event_and_calibration():
    expected = {  # name: (norm, approximate, event type at z = 2)
        "gaussian": ("l2", True, dp_accounting.GaussianDpEvent),
        "laplace": ("l1", False, dp_accounting.LaplaceDpEvent),
        "gamma": ("l2", False, dp_accounting.UnsupportedDpEvent),
        "secure": ("l2", True, dp_accounting.ZCDpEvent),
        "secure_laplace": ("l1", False, dp_accounting.ZCDpEvent),
    }
    assert set(KINDS) == set(expected) == set(NOISE_KINDS + SECURE_NOISE_KINDS)
    for name, (norm, approximate, event) in expected.items():
        kind = noise_kind(name)
        assert (kind.norm, kind.approximate) == (norm, approximate)
        assert type(kind.dp_event(2.0)) is event
        assert isinstance(kind.dp_event(0.0), dp_accounting.NonPrivateDpEvent)
        assert kind.pure_epsilon(2.0) == (None if approximate else 0.5)
        assert callable(getattr(calibration, kind.calibration))
    assert noise_kind("secure").dp_event(2.0, 1e-9) == dp_accounting.ZCDpEvent(0.125, 1e-9)
    assert noise_kind("laplace").l1_factor(4) == 2.0 and noise_kind("gamma").l1_factor(4) == 1.0
    with pytest.raises(InvalidInputError, match="noise must be one of"):
        noise_kind("uniform")


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_counters_take_exactly_the_kinds_of_the_table(name):
    cls, extra = COUNTERS[name]
    takes = cls.supported_noises()
    assert takes == STRATEGY_NOISES[cls._strategy_class.name]
    for kind in KINDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonPrivateWarning)
            horizon = horizon_arg(name, 16)
            if takes_noise(name, kind):
                c = cls(horizon, 2, noise=kind, noise_multiplier=1.0, delta=1e-5, **extra)
                assert c.noise_kind is KINDS[kind]
                assert c.run(np.zeros((4, 2))).shape == (4, 2)
            else:  # the table's refusal, or the endless BLT's of secure noise
                with pytest.raises(InvalidInputError, match=f"noise must (not )?be .*; got "
                                   f"'{kind}'"):
                    cls(horizon, 2, noise=kind, noise_multiplier=1.0, delta=1e-5, **extra)
