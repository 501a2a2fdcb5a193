"""What `dpol run` scores besides regret: the fixed held-out split and the trivial
baselines."""

from __future__ import annotations

import numpy as np
import pytest


def test_run_scores_trivial_baselines_and_split():
    from dpol.experiments.runs.scores import heldout_scores, holdout_split, trivial_rows

    train, test = holdout_split(1000, 0.25)
    assert len(test) == 250 and np.all(np.diff(train) > 0)  # training rows keep their order
    assert not set(train) & set(test) and len(train) + len(test) == 1000
    again = holdout_split(1000, 0.25)
    np.testing.assert_array_equal(again[1], test)  # fixed, whatever else is seeded
    y = np.array([3.0, 5.0, 7.0, 9.0])
    assert heldout_scores(np.full(4, y.mean()), y, False)["heldout_r2"] == 0.0
    rows = trivial_rows(np.ones(3), np.array([1.0, 2.0, 3.0]), y, False,
                        {"model": "predict 0 (trivial)"})
    mean = rows[1]
    assert mean["heldout_mse"] == pytest.approx(np.mean((y - 2.0) ** 2))  # training mean
    assert rows[0]["heldout_mse"] == pytest.approx(np.mean(y**2))
