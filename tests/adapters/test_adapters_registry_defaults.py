"""The default learners' counter: BLT, the binary tree under the paper calibration."""

from __future__ import annotations

import pytest

from dpol.adapters.registry import LEARNERS, make_learner


@pytest.mark.parametrize("name", ["ridge", "ridge_classifier"])
def test_default_learners_sum_with_blt_and_the_tree_under_paper_calibration(name):
    # BLT by measurement (docs/benchmarks/utility.md); the paper calibration's formulas
    # are the binary tree's, so it keeps the tree; a counter given always wins
    tight = make_learner(name, 3, horizon=64, epsilon=1.0, seed=0)
    paper = make_learner(name, 3, horizon=64, epsilon=1.0, seed=0, calibration="paper")
    given = make_learner(name, 3, horizon=64, epsilon=1.0, seed=0, counter="honaker_tree")
    assert (tight.counter, paper.counter, given.counter) == ("blt", "binary_tree",
                                                             "honaker_tree")
    assert [LEARNERS[name].counter_for(c) for c in ("tight", "paper")] == ["blt",
                                                                           "binary_tree"]
    # the paper-faithful entry keeps the paper's counter either way, by its canonical name
    pqftl = make_learner("pqftl", 3, horizon=64, epsilon=1.0, seed=0)
    assert pqftl.counter == "binary_tree"
