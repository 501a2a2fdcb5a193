"""dpol.accounting.guarantee: what a PrivacyGuarantee accepts, what it says of itself, and
its one line of text."""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpol.accounting import PrivacyGuarantee
from dpol.accounting.guarantee import SEEDED
from dpol.errors import InvalidInputError


def test_privacy_guarantee_validation_and_text():
    with pytest.raises(InvalidInputError, match="delta must be < 1"):
        PrivacyGuarantee(1.0, 1.0)
    with pytest.raises(InvalidInputError, match="neighbouring must be one of"):
        PrivacyGuarantee(1.0, 0.0, "bogus")
    assert "window W=8" in str(PrivacyGuarantee(1.0, 1e-5, window=8))


@pytest.mark.parametrize(("keywords", "message"), [
    ({"epsilon": -0.1}, "epsilon must be >= 0.0"),
    ({"epsilon": math.nan}, "epsilon must not be NaN"),
    ({"delta": -1e-9}, "delta must be >= 0.0"),
    ({"window": 0}, "window must be an integer >= 1"),
    ({"window": 8.0}, "window must be an integer"),
    ({"seeded": 1}, "seeded must be True or False"),
])
def test_every_field_is_checked_by_name(keywords, message):
    with pytest.raises(InvalidInputError, match="^" + message):
        PrivacyGuarantee(**{"epsilon": 1.0, **keywords})


def test_what_a_guarantee_says_of_itself():
    g = PrivacyGuarantee(1.0, 1e-5)
    assert (g.is_private, g.is_pure, g.window, g.seeded) == (True, False, None, False)
    assert PrivacyGuarantee(0.5).is_pure and PrivacyGuarantee(0.0).is_private
    assert not PrivacyGuarantee(math.inf).is_private
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.epsilon = 2.0  # a claim is never edited, only derived again


def test_the_text_names_relation_window_unit_and_a_seed_while_private():
    g = PrivacyGuarantee(1.5, 1e-6, "add_remove", window=4, unit="one record", seeded=True)
    assert str(g) == f"(1.5, 1e-06)-DP, add_remove, window W=4, unit: one record; {SEEDED}"
    # no privacy to void: a seed changes nothing worth saying
    assert str(PrivacyGuarantee(math.inf, seeded=True)) == (
        "(inf, 0)-DP, replace_one, unit: one stream element")
