"""make_counter: counter_options a counter does not take get one clear refusal, and the
counters it builds are calibrated like any other.

Every learner builds its counters through :func:`dpol.counters.make_counter`; a keyword
the chosen counter's constructor does not take (``window`` on the binary tree) used to
leak as ``TypeError: Counter.__init__() got an unexpected keyword argument 'window'``.
"""

from __future__ import annotations

import warnings

import pytest

from dpol.adapters import make_learner
from dpol.counters import (
    COUNTER_NAMES,
    ToeplitzCounter,
    WindowTreeCounter,
    make_counter,
    resolve_counter,
)
from dpol.counters.registry import counter_keywords
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners import PrivateBanditFrankWolfe, PrivateOnlineFrankWolfe
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import L2Ball, Simplex
from tests.learner_cases import make

TREE_KEYWORDS = ("padded, bound, noise_multiplier, epsilon, delta, neighbouring, "
                 "calibration, noise, seed, element_sensitivity, participation")
REFUSED = (f"counter_options must hold only keywords BinaryTreeCounter accepts "
           f"({TREE_KEYWORDS}); got ['window']")


def test_make_counter_refuses_a_keyword_the_counter_does_not_take():
    with pytest.raises(InvalidInputError) as info:
        make_counter("tree", 8, 2, noise_multiplier=1.0, window=4)
    assert str(info.value) == REFUSED
    assert info.value.argument == "counter_options"


@pytest.mark.parametrize("name", COUNTER_NAMES)
def test_every_counter_takes_what_counter_keywords_lists_and_refuses_the_rest(name):
    cls = resolve_counter(name)
    takes = counter_keywords(cls)
    assert takes is not None and {"bound", "noise_multiplier", "seed"} <= set(takes)
    assert ("window" in takes) == (cls is WindowTreeCounter)
    with pytest.raises(InvalidInputError, match=r"got \['nope', 'zeta'\]$"):
        make_counter(name, 8, 1, noise_multiplier=1.0, zeta=1, nope=1)


def test_a_window_still_reaches_the_window_counter():
    assert make_counter("window", 8, 1, noise_multiplier=1.0, window=4).window == 4


@pytest.mark.parametrize("name", ["ftal-tree", "ftrl-tree-ridge", "pqftl", "pqftl-honaker",
                                  "incremental-regression",
                                  "projected-incremental-regression"])
def test_learners_refuse_a_window_for_a_counter_without_one(name):
    with pytest.raises(InvalidInputError, match=r"^counter_options must hold only keywords "
                       r"\w+Counter accepts \(.*\); got \['window'\]$"):
        make(name, 16, counter_options={"window": 4})


def test_frank_wolfe_and_the_bandit_refuse_it_too():
    loss = Regularized(SquaredLoss(), 1.0)
    with pytest.raises(InvalidInputError) as info:
        PrivateOnlineFrankWolfe(3, domain=Simplex(3), horizon=16, loss=loss, epsilon=1.0,
                                delta=1e-5, counter="tree", counter_options={"window": 4})
    assert str(info.value) == REFUSED
    with pytest.raises(InvalidInputError) as info:
        PrivateBanditFrankWolfe(L2Ball(2), horizon=64, epsilon=1.0, delta=1e-6,
                                counter_options={"window": 4})
    assert str(info.value) == REFUSED


@pytest.mark.parametrize("name", ["ftal", "ftrl", "pqftl", "ridge", "incremental_regression"])
def test_make_learner_names_counter_options_not_a_type_error(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        with pytest.raises(InvalidInputError) as info:
            make_learner(name, 3, horizon=16, epsilon=1.0, seed=0, counter="tree",
                         options={"counter_options": {"window": 4}})
    assert str(info.value) == REFUSED


@pytest.mark.parametrize("name", ["banded", "dense_mean"])
def test_registry_builds_them_with_calibrated_privacy(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counter = make_counter(name, 64, 3, epsilon=1.0, delta=1e-5, seed=0)
    assert counter.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
    probe = ToeplitzCounter(64, epsilon=1.0, delta=1e-5)  # the same z at (1, 1e-5)
    assert counter.noise_scale / counter.sensitivity == pytest.approx(
        probe.noise_scale / probe.sensitivity, rel=1e-12)
