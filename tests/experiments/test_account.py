"""What a configuration implies (``dpol account``'s logic): the noise line of every kind
of learner, the window counter's default window, a paper row where no paper publishes a
calibration, and refusals that name the argument."""

from __future__ import annotations

import math

import pytest

from dpol.adapters.registry import make_learner
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.experiments.account import account_counter, account_learner, describe_noise


@pytest.mark.parametrize(("learner", "says"), [
    ("pqftl", "BinaryTreeCounter (gaussian): noise multiplier"),  # a counter's noise
    ("kernel", "Gaussian noise on each release, std"),  # a scale per release
    ("pol", "one Gaussian release at the horizon, std"),  # one release, after the stream
])
def test_each_kind_of_noise_is_described_by_its_source(learner, says):
    model = make_learner(learner, 3, horizon=100, epsilon=1.0, seed=0)
    assert describe_noise(model).startswith(says)


def test_a_learner_without_noise_says_so():
    with pytest.warns(NonPrivateWarning):
        model = make_learner("igd", 3, horizon=100, epsilon=math.inf, seed=0)
    assert describe_noise(model) == "none (not private)"


def test_the_window_counter_defaults_its_window_to_the_horizon():
    # W = T covers every release: the guarantee is full DP, with no window in it
    tight, _ = account_counter("window_tree", epsilon=1.0, delta=1e-5, horizon=16)
    assert tight["guarantee"] == "(1, 1e-05)-DP, replace_one, unit: one stream element"
    assert tight["real_epsilon"] == pytest.approx(1.0)


def test_a_configuration_no_paper_calibrates_gets_a_paper_row_saying_why():
    tight, paper = account_counter("honaker_tree", epsilon=1.0, delta=1e-5, horizon=16)
    assert tight["real_epsilon"] == pytest.approx(1.0)
    assert math.isnan(paper["real_epsilon"]) and math.isnan(paper["noise_scale"])
    assert paper["note"].startswith("no published calibration: calibration must be 'tight'")


def test_the_learner_rows_carry_both_calibrations():
    rows = account_learner("pqftl", epsilon=1.0, delta=1e-5, horizon=64, dim=2)
    assert [r["calibration"] for r in rows] == ["tight", "paper"]
    assert rows[0]["real_epsilon"] == pytest.approx(1.0)
    assert all(r["noise"].startswith("BinaryTreeCounter") for r in rows)


@pytest.mark.parametrize(("bad", "says"), [
    ({"horizon": 0}, "horizon must be an integer >= 1; got 0"),
    ({"epsilon": math.inf}, "epsilon must be finite; got inf"),
    ({"window": 0}, "window must be an integer >= 1; got 0"),
])
def test_refusals_name_the_argument(bad, says):
    args = {"epsilon": 1.0, "delta": 1e-5, "horizon": 16, **bad}
    with pytest.raises(InvalidInputError, match=f"^{says}$"):
        account_counter("window_tree", **args)
