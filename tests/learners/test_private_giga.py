"""PGIGA without noise is projected OGD after its warm-up (an independent reference).

The sensitivities and the printed constant: tests/learners/test_learner_sensitivity.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from learner_cases import (
    HALF_HINGE,
    ball_projection,
    data_grad,
    nonprivate,
    released_path,
    unit_stream,
)
from test_learner_sensitivity import _ref_giga

from dpol.learners import PrivateGIGA
from dpol.losses import LogisticLoss, Regularized
from dpol.sets import L2Ball


@pytest.mark.parametrize("kind", ["linear", "logistic"])
def test_giga_without_noise_is_projected_ogd(kind):
    # JKT Alg. 3 with its spec 3.2 warm-up: w fixed for t < t_q = ceil(2 L_G^2/alpha^2) + 1,
    # L_G = data smoothness + alpha (hinge X^2 Y^2/h = 1, logistic 1/4), then
    # w <- Proj(w - 2/(alpha t) (grad + alpha w)). The linear case reuses the unused
    # reference of test_learner_sensitivity (|y <w, x>| <= 1/2 < 1 - h: a = -y x).
    T, d, alpha, R = 200, 3, 0.5, 1.0
    rng = np.random.default_rng(3)
    X, y = unit_stream(rng, T, d)
    if kind == "linear":
        y = y / 2
        loss, tq = Regularized(HALF_HINGE, alpha), math.ceil(2 * (1 + alpha) ** 2 / alpha**2) + 1
        expected = _ref_giga(-y[:, None] * X, alpha, R, tq)
    else:
        loss, tq = Regularized(LogisticLoss(), alpha), math.ceil(2 * 0.75**2 / alpha**2) + 1
        expected, w = np.zeros((T + 1, d)), np.zeros(d)
        for t in range(1, T + 1):
            if t >= tq:
                g = data_grad("logistic", w, X[t - 1], y[t - 1]) + alpha * w
                w = ball_projection(w - 2.0 / (alpha * t) * g, R)
            expected[t] = w
    got = released_path(nonprivate(PrivateGIGA, d, loss=loss, domain=L2Ball(d, R), horizon=T), X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert np.ptp(expected[tq:], axis=0).min() > 0.01  # the data moved the iterates
