"""Noise kinds as objects (dpol.noise.kinds) and the one strategy x noise table."""

from __future__ import annotations

import warnings

import dp_accounting
import numpy as np
import pytest

from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.noise import KINDS, NOISE_KINDS, SECURE_NOISE_KINDS, STRATEGY_NOISES, noise_kind

from counter_cases import COUNTERS, horizon_arg, takes_noise


def test_every_kind_states_its_norm_and_event():
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
        # a release of scale 6 on sensitivity 3 is the event at z = 2
        if name != "secure":
            assert kind.event(3.0, 6.0) == kind.dp_event(2.0)
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


def test_the_discrete_gaussian_states_rho_of_a_release():
    # rho = (sensitivity / scale)^2 / 2, with CKS Theorem 15's slack as xi
    assert noise_kind("secure").event(3.0, 6.0, 1e-9) == dp_accounting.ZCDpEvent(0.125, 1e-9)
    assert isinstance(noise_kind("secure").event(3.0, 0.0), dp_accounting.NonPrivateDpEvent)


def test_only_float_kinds_take_a_published_calibration():
    for name, kind in KINDS.items():
        assert kind.check_calibration("tight") == "tight"
        if kind.secure:
            with pytest.raises(InvalidInputError, match=f"calibration must be 'tight' with "
                               f"noise='{name}'.*; got 'paper'"):
                kind.check_calibration("paper")
        else:
            assert kind.check_calibration("paper") == "paper"


def test_grids_of_the_kinds():
    # float noise: no grid; secure: the largest power of two <= min(s, Delta/sqrt(d)) / 2^10
    assert noise_kind("gaussian").grid(1.0, 2.0, 4) == 0.0
    for name in SECURE_NOISE_KINDS:
        kind = noise_kind(name)
        assert kind.grid(1.0, 8.0, 4) == 2.0**-10  # min(1, 8 / 2) = 1
        assert kind.grid(8.0, 2.0, 4) == 2.0**-10  # min(8, 2 / 2) = 1
        assert kind.grid(3.0, 0.0, 4) == 2.0**-9  # no sensitivity: the scale alone
        assert kind.grids(np.array([1.0, 8.0]), np.array([8.0, 2.0]), 4).tolist() == [
            2.0**-10, 2.0**-10]


def test_noisy_releases():
    value = np.array([[0.25, -1.5, 3.0], [1.0, 2.0, -0.5]])
    # Gaussian: value + scale z with z the generator's next standard normals, bit for bit
    got = noise_kind("gaussian").noisy(value, 0.5, np.random.default_rng(4))
    assert np.array_equal(got, value + 0.5 * np.random.default_rng(4).standard_normal((2, 3)))
    column = np.array([[0.5], [2.0]])
    got = noise_kind("gaussian").noisy(value, column, np.random.default_rng(4))
    assert np.array_equal(got, value + column * np.random.default_rng(4).standard_normal((2, 3)))
    # secure: exact multiples of the grid, each row on its own grid; zero scale: the value
    secure = noise_kind("secure")
    out = secure.noisy(value, np.array([1.0, 4.0]), None, np.array([2.0**-10, 2.0**-8]))
    assert np.all(out[0] / 2.0**-10 % 1 == 0) and np.all(out[1] / 2.0**-8 % 1 == 0)
    assert np.array_equal(secure.noisy(value[0], 0.0, None, 2.0**-10), value[0])
    lap = noise_kind("secure_laplace").noisy(value[0], 1.0, None, 2.0**-10)
    assert np.all(lap / 2.0**-10 % 1 == 0)


def test_the_gamma_radius_quantile():
    from scipy import stats

    assert noise_kind("gamma").unit_radius_quantile(3, 0.9) == float(stats.gamma(a=3).ppf(0.9))
    assert noise_kind("gaussian").unit_radius_quantile(3, 0.9) is None


def test_noise_kind_among():
    assert noise_kind("secure", among=("gaussian", "secure")) is KINDS["secure"]
    with pytest.raises(InvalidInputError, match="noise must be one of 'gaussian'; got 'gamma'"):
        noise_kind("gamma", among=("gaussian",))
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian' for Me; got 'gamma'"):
        noise_kind("gamma", among=("gaussian",), who="Me")
