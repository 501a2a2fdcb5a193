"""dpol.accounting.mechanism: the shared mechanism arguments as one object, their checks,
their equality, and how they merge with a learner's keywords. (Learners built from a
Mechanism are tested in tests/learners/test_api.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.accounting import Mechanism
from dpol.accounting.mechanism import MECHANISM_FIELDS, merge_mechanism
from dpol.errors import InvalidInputError


@pytest.mark.parametrize(("keywords", "message"), [
    ({"epsilon": 0.0}, "epsilon must be > 0.0"),
    ({"epsilon": "1"}, "epsilon must be a real number"),
    ({"delta": 1.0}, "delta must be < 1.0"),
    ({"calibration": "loose"}, "calibration must be one of"),
    ({"counter_options": [("window", 4)]}, "counter_options must be a mapping"),
])
def test_every_shared_field_is_checked_by_name(keywords, message):
    with pytest.raises(InvalidInputError, match="^" + message):
        Mechanism(**{"epsilon": 1.0, **keywords})


def test_fields_left_none_are_the_learners_to_choose():
    assert MECHANISM_FIELDS == ("epsilon", "delta", "neighbouring", "calibration", "noise",
                                "counter", "counter_options", "seed")
    assert Mechanism(math.inf).keywords() == {"epsilon": math.inf}  # no noise: allowed here
    # noise and counter are checked by the learner that takes them, not here
    assert Mechanism(1.0, noise="any", counter="any").keywords()["noise"] == "any"


def test_counter_options_are_a_read_only_copy_and_come_back_as_a_dict():
    options = {"window": 4}
    spec = Mechanism(1.0, counter_options=options)
    options["window"] = 8  # the caller's dict changes later: the mechanism does not
    assert spec.counter_options["window"] == 4
    out = spec.keywords()["counter_options"]
    assert type(out) is dict and out == {"window": 4}
    out["window"] = 16  # a fresh dict each time
    assert spec.keywords()["counter_options"] == {"window": 4}


def test_equality_is_field_by_field():
    assert Mechanism(1.0, counter_options={"w": 1}) == Mechanism(1.0, counter_options={"w": 1})
    assert Mechanism(1.0, delta=1e-6) != Mechanism(1.0, delta=1e-5)
    assert Mechanism(1.0, seed=1) != Mechanism(1.0, seed=1.0)  # another kind of value
    # a seed that has no single truth value (an array) equals only itself
    seed = np.arange(3)
    assert Mechanism(1.0, seed=seed) == Mechanism(1.0, seed=seed)
    assert Mechanism(1.0, seed=seed) != Mechanism(1.0, seed=np.arange(3))
    assert Mechanism(1.0) != {"epsilon": 1.0}


def test_merge_adds_the_mechanism_to_the_keywords_where_they_agree():
    spec = Mechanism(1.0, delta=1e-6, noise="secure")
    given = {"delta": 1e-6, "noise": None, "alpha": 2.0}
    assert merge_mechanism(spec, given, None, "M") == {
        "delta": 1e-6, "noise": "secure", "alpha": 2.0, "epsilon": 1.0}
    assert given == {"delta": 1e-6, "noise": None, "alpha": 2.0}  # not modified
    with pytest.raises(InvalidInputError, match=r"^delta must be given once: mechanism says "
                       r"1e-06, the keyword 1e-05; got 1e-05"):
        merge_mechanism(spec, {"delta": 1e-5}, None, "M")


def test_merge_refuses_what_the_owner_does_not_take_or_no_mechanism():
    with pytest.raises(InvalidInputError, match=r"^mechanism must not set noise: M takes no "
                       r"noise; got 'secure'"):
        merge_mechanism(Mechanism(1.0, noise="secure"), {}, {"epsilon", "delta"}, "M")
    assert merge_mechanism(Mechanism(1.0), {}, {"epsilon"}, "M") == {"epsilon": 1.0}
    with pytest.raises(InvalidInputError, match=r"^mechanism must be a dpol\.accounting\."
                       "Mechanism; got"):
        merge_mechanism({"epsilon": 1.0}, {}, None, "M")


def test_a_mechanism_is_not_hashable_whatever_it_holds():
    # its counter options and seeds need not hash: unhashable always, not only when they
    # are set (a dict key or set member that worked would break on the next value)
    for mechanism in (Mechanism(1.0), Mechanism(1.0, counter_options={"levels": 3})):
        with pytest.raises(TypeError, match="unhashable"):
            hash(mechanism)
