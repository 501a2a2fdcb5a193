"""A target epsilon lies in [1e-6, 1e6] (or is inf): beyond, calibration hung for minutes
(1e12) and, below, the derived epsilon rounded to 0, a claim stronger than the truth."""

from __future__ import annotations

import pytest

from dpol.accounting.closed_forms import EPSILON_RANGE
from dpol.adapters.registry import make_learner
from dpol.counters import BinaryTreeCounter
from dpol.errors import InvalidInputError


@pytest.mark.parametrize("epsilon", EPSILON_RANGE)
def test_the_ends_of_the_range_calibrate_and_state_a_positive_epsilon(epsilon):
    m = make_learner("ridge", 2, horizon=50, epsilon=epsilon, seed=0)
    # stated as the target (within the calibrators' tolerance), never rounded to 0
    assert m.privacy.epsilon == pytest.approx(epsilon, rel=1e-3) and m.privacy.epsilon > 0
    c = BinaryTreeCounter(50, epsilon=epsilon, delta=1e-5, seed=0)
    assert c.privacy.epsilon == pytest.approx(epsilon, rel=1e-3)


@pytest.mark.parametrize("epsilon", [1e-300, 1e-50, 9.9e-7, 1.01e6, 1e12, 1e300])
def test_epsilons_beyond_the_range_are_refused_by_name(epsilon):
    with pytest.raises(InvalidInputError, match=r"epsilon must be in \[1e-06, 1e\+06\] "
                       r"\(or inf\)"):
        make_learner("ridge", 2, horizon=50, epsilon=epsilon)
    with pytest.raises(InvalidInputError, match="epsilon must be in"):
        BinaryTreeCounter(50, epsilon=epsilon, delta=1e-5)


def test_the_command_line_names_the_flag(tmp_path):
    testing = pytest.importorskip("typer.testing")
    from dpol.cli import _app

    result = testing.CliRunner().invoke(_app(), ["run", "ridge", "x.csv", "--epsilon",
                                                 "1e300", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "--epsilon must be in [1e-06, 1e+06]" in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()
