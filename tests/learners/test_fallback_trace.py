"""The trace of the rows the trivial fallback's learner did not learn, and two parts
of a stream joined into one trace."""

from __future__ import annotations

import numpy as np
from fallback_cases import inner as _inner
from fallback_cases import stream as _stream

from dpol.learners import PrivateKernelRegression
from dpol.learners._fallback_trace import idle_trace, joined, linear_trace
from dpol.learners.intercept import WithIntercept
from dpol.learners.trivial_fallback import WithTrivialFallback


def test_a_wrapped_learner_states_its_idle_rows_in_its_own_coordinates():
    # an intercept lifts rows to d + 1: the idle trace and the regret live there
    X, y = _stream(n=60)
    inner = WithIntercept(_inner(dim=4, horizon=60), intercept_scaling=0.35)
    m = WithTrivialFallback(inner, prior_multiplier=2.0, gate_multiplier=3.0, seed=0,
                            learner_from=15)
    trace = m.run(X, y, comparator=np.zeros(4))
    assert trace.weights.shape == (60, 4) and trace.regret.shape == (60,)
    assert np.all(trace.regret[:15] == 0.0)  # w0 = 0 is the comparator there


def test_the_idle_trace_states_the_first_iterate_and_its_losses():
    # ridge on +-1 labels at w0 = 0: every loss is (0 - y)^2 / 2 = 1/2; against a
    # comparator u its regret sums loss(w0) - loss(u), loss(u) = (x . u - y)^2 / 2 +
    # alpha / 2 ||u||^2 (alpha = 0.01: 0.005 for u = e_1), row by row
    X, y = _stream(n=20)
    m = _inner(horizon=20)
    u = np.array([1.0, 0.0, 0.0])
    t = idle_trace(m, X, y, comparator=u)
    assert np.allclose(t.losses, 0.5) and m.t_ == 0 and t.n_clipped == 0
    np.testing.assert_allclose(t.regret, np.cumsum(0.5 - 0.5 * (X @ u - y) ** 2 - 0.005))


def test_joined_parts_give_one_trace_whose_regret_continues():
    X, y = _stream(n=20)
    m = _inner(horizon=20)
    u = np.zeros(3)
    first = idle_trace(m, X[:5], y[:5], comparator=u)
    then = m.run(X[5:], y[5:], comparator=u)
    whole = joined(first, then)
    assert whole.weights.shape == (20, 3) and whole.losses.shape == (20,)
    np.testing.assert_allclose(whole.regret[5:], then.regret + first.regret[-1])
    assert whole.final_weights is then.final_weights and whole.model_predictions is None


def test_only_a_linear_model_has_a_linear_trace():
    assert linear_trace(WithIntercept(_inner(dim=4, horizon=8), intercept_scaling=0.35))
    assert not linear_trace(PrivateKernelRegression(2, horizon=8, epsilon=1.0, seed=0))
