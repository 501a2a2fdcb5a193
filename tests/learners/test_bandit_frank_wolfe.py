"""BanditFrankWolfe, the non-private twin: draw for draw PrivateBanditFrankWolfe at
epsilon = inf, with exact batch sums and no NonPrivateWarning (non-private by name)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from learner_cases import bandit_private as private
from learner_cases import bandit_twin as twin
from learner_cases import distance_loss

from dpol.errors import NonPrivateWarning
from dpol.learners._bandit_geometry import (
    one_point_gradient,
)
from dpol.sets import Box


def test_epsilon_inf_is_exactly_the_non_private_twin():
    T, dom = 200, Box(0.0, 1.0, dim=3)
    with pytest.warns(NonPrivateWarning):
        p = private(dom, T, epsilon=math.inf, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = twin(dom, T, seed=5)  # non-private by name: no warning
    tp, tq = p.run(distance_loss), q.run(distance_loss)
    for field in ("points", "iterates", "losses", "noisy_sums"):
        np.testing.assert_array_equal(getattr(tp, field), getattr(tq, field))
    assert p.privacy.epsilon == q.privacy.epsilon == math.inf
    # the twin's released sums are the exact prefix sums of the batch estimates
    u = (tq.points - tq.iterates) / q.zeta
    rows = one_point_gradient(np.clip(tq.losses, -q.loss_bound, q.loss_bound), u, q.zeta)
    K = q.batch_size
    batch = np.array([rows[i:i + K].sum(axis=0) for i in range(0, T, K)])
    np.testing.assert_allclose(tq.noisy_sums, np.cumsum(batch, axis=0)[:-1], rtol=1e-10,
                               atol=1e-10)
