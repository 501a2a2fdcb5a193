"""``dpol audit``'s logic: an under-noised twin audited against the real counter's claim,
and refusals before any run."""

from __future__ import annotations

import re

import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.audit_run import audit_configuration


def test_the_twin_is_audited_against_the_claim_of_the_real_counter():
    # half the noise and the claim of the real counter, epsilon = 1: what an audit must
    # be able to fail (200 runs are too few to fail it; tests/cli/test_cli_privacy.py
    # runs 1e5 and sees the violation)
    twin = audit_configuration(counter="binary_tree", runs=200, noise_factor=0.5)
    assert twin.claimed_epsilon == 1.0 and twin.n_runs == (200, 200)
    assert twin.name == "BinaryTreeCounter"


@pytest.mark.parametrize(("kwargs", "says"), [
    ({}, "counter / learner must be given exactly one of the two; got (None, None)"),
    ({"counter": "binary_tree", "learner": "pqftl"}, "counter / learner must be given"),
    ({"learner": "pqftl", "noise_factor": 0.5}, "noise_factor must be 1 for a learner"),
    ({"counter": "binary_tree", "window": 4},
     "window must be given only for the window counter; got 4"),
    ({"counter": "binary_tree", "noise_factor": 0.0}, "noise_factor must be > 0.0; got 0.0"),
    ({"counter": "binary_tree", "runs": 10}, "runs must be an integer >= 20; got 10"),
])
def test_refusals_name_the_argument(kwargs, says):
    with pytest.raises(InvalidInputError, match="^" + re.escape(says)):
        audit_configuration(**kwargs)
