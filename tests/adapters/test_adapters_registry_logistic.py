"""The registry's logistic options, and GIGA's own regularisation for them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.adapters.registry import (
    GIGA_LOGISTIC_ALPHA,
    LEARNERS,
    LOGISTIC_ALPHA,
    logistic_options,
    make_learner,
)
from dpol.learners import PrivateGIGA


def test_logistic_options_are_the_igd_entry_defaults_and_hold_the_optimum():
    ours, igd = logistic_options(4), LEARNERS["igd"].defaults(4, 1.0, 1.0)
    assert ours["loss"].alpha == igd["loss"].alpha == LOGISTIC_ALPHA
    assert ours["domain"].radius == igd["domain"].radius
    # (alpha / 2) ||w*||^2 <= f(w*) <= f(0) = ln 2
    assert logistic_options(4, alpha=0.5)["domain"].radius == pytest.approx(
        math.sqrt(2.0 * math.log(2.0) / 0.5))


def test_logistic_giga_warm_up_is_a_few_steps_not_longer_than_small_streams():
    # JKT Alg. 3 releases t_q - 1 = ceil(2 beta^2 / alpha^2) data-independent iterates,
    # beta = 1/4 + alpha: 1,352 at LOGISTIC_ALPHA = 0.01 (more than breast cancer's 455
    # rows); 4 at GIGA_LOGISTIC_ALPHA = 1
    def warmup(alpha):
        m = make_learner("giga", 3, horizon=500, epsilon=1.0, seed=0,
                         options=logistic_options(3, alpha=alpha))
        assert isinstance(m, PrivateGIGA)
        return m.warmup

    assert warmup(LOGISTIC_ALPHA) == 1353
    assert warmup(GIGA_LOGISTIC_ALPHA) == 5
    # so the release after step 5 is the first data-dependent (noised) one
    m = make_learner("giga", 3, horizon=20, epsilon=1.0, seed=0,
                     options=logistic_options(3, alpha=GIGA_LOGISTIC_ALPHA))
    trace = m.run(np.tile([[0.6, 0.0, 0.0]], (20, 1)), np.ones(20))
    assert np.all(trace.weights[:5] == 0.0) and np.all(trace.weights[5:] != 0.0)
    assert [m.noise_std(t) > 0 for t in (4, 5)] == [False, True]

