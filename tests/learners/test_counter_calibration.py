"""gradient_element_sensitivity: a counter is told the loss's exact gradient sensitivity
only where it is below the default (2 L replace-one, L add/remove).

FTAL feeding it to its counter: test_private_ftal.py; the logistic bound itself:
tests/losses/test_logistic.py.
"""

from __future__ import annotations

from dpol.learners._counter_calibration import gradient_element_sensitivity
from dpol.losses import LogisticLoss, SquaredLoss
from dpol.sets import L2Ball


def test_the_exact_sensitivity_only_where_it_is_below_the_default():
    ball, logistic, squared = L2Ball(3), LogisticLoss(), SquaredLoss()
    lip = logistic.lipschitz(ball)  # sigma(1) = 0.731: the default 2 L = 1.462
    exact = logistic.gradient_sensitivity(ball)  # 1.100
    assert gradient_element_sensitivity(logistic, ball, "replace_one", lip) == exact
    # add/remove: the logistic loss proves nothing below L, so the default stays
    assert gradient_element_sensitivity(logistic, ball, "add_remove", lip) is None
    # the squared loss's sensitivity is the triangle inequality, the default itself
    assert gradient_element_sensitivity(squared, ball, "replace_one",
                                        squared.lipschitz(ball)) is None
    # a smaller Lipschitz bound the learner states (2 x 0.5 < 1.100) keeps its default
    assert gradient_element_sensitivity(logistic, ball, "replace_one", 0.5) is None
