"""BanditTrace: the frozen record of a bandit run, one row per round, regret when asked."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from learner_cases import bandit_private as private
from learner_cases import distance_loss

from dpol.sets import Box


def test_trace_is_frozen_with_a_row_per_round_and_no_regret_without_comparator():
    learner = private(Box(0.0, 1.0, dim=2), 20, seed=0)  # K = 5: 4 batches, 3 released sums
    trace = learner.run(distance_loss)
    assert trace.points.shape == trace.iterates.shape == (20, 2)
    assert trace.losses.shape == (20,) and trace.noisy_sums.shape == (3, 2)
    assert trace.regret is None and trace.comparator is None
    assert trace.privacy == learner.privacy and trace.n_clipped == learner.n_clipped_
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.points = trace.points[:1]


def test_regret_is_cumulative_against_the_comparator_from_where_the_run_starts():
    learner = private(Box(0.0, 1.0, dim=2), 20, seed=0)
    learner.run(distance_loss, 7)  # a second run's rounds are 7..19
    u = np.array([0.3, 0.3])
    trace = learner.run(distance_loss, comparator=u)
    ref = distance_loss(np.tile(u, (13, 1)), np.arange(7, 20))
    # the same subtraction and cumsum in the same order: equal to rounding
    np.testing.assert_allclose(trace.regret, np.cumsum(trace.losses - ref), rtol=1e-12)
    np.testing.assert_array_equal(trace.comparator, u)
