"""dpol/evaluation/regret.py: the best fixed point's result, cumulative and average regret
against it, and the input checks of both."""

from __future__ import annotations

import numpy as np
import pytest
from fixed_point_cases import classification, regression, total

from dpol.errors import InvalidInputError
from dpol.evaluation import (
    FixedPointResult,
    average_regret,
    best_fixed_point,
    cumulative_regret,
)
from dpol.learners import PrivateGIGA
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball


def test_result_type_and_default_array():
    X, y = regression(seed=11)
    w = best_fixed_point(SquaredLoss(), X, y)
    info = best_fixed_point(SquaredLoss(), X, y, return_info=True)
    assert isinstance(w, np.ndarray) and isinstance(info, FixedPointResult)
    np.testing.assert_array_equal(w, info.w)


# ------------------------------------------------------------------------------ regret
def test_comparator_against_itself_has_zero_regret():
    X, y = classification(seed=12)
    loss = Regularized(LogisticLoss(), 0.1)
    u = best_fixed_point(loss, X, y, L2Ball(5, 1.0))
    np.testing.assert_array_equal(cumulative_regret(loss.value(u, X, y), loss, X, y, u),
                                  np.zeros(X.shape[0]))
    np.testing.assert_array_equal(average_regret(loss.value(u, X, y), loss, X, y, u),
                                  np.zeros(X.shape[0]))


def test_cumulative_regret_by_hand():
    # f_t(w) = ½(y_t − x_t·w)² + (1/2)·½‖w‖²  (Regularized(SquaredLoss(), 0.5))
    X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    y = np.array([1.0, 0.0, -1.0])
    u = np.array([0.0, 1.0])  # x·u = 0, 2, 1;  ‖u‖² = 1
    # comparator losses: ½·1 + ¼ = 0.75, ½·4 + ¼ = 2.25, ½·4 + ¼ = 2.25
    suffered = np.array([1.0, 2.0, 3.0])
    loss = Regularized(SquaredLoss(), 0.5)
    expected = np.array([0.25, -0.0, 0.75])
    np.testing.assert_allclose(cumulative_regret(suffered, loss, X, y, u), expected, atol=1e-15)
    np.testing.assert_allclose(average_regret(suffered, loss, X, y, u), expected / [1, 2, 3],
                               atol=1e-15)


def test_regret_of_a_trace_matches_the_learner_and_refuses_a_wrong_loss():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(300, 3))
    X /= np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]  # inside x_bound = 1
    y = np.clip(X @ np.array([0.5, -0.3, 0.2]) + 0.05 * rng.normal(size=300), -1, 1)
    loss, domain = Regularized(SquaredLoss(), 1.0), L2Ball(3, 1.0)
    u = best_fixed_point(loss, X, y, domain)
    learner = PrivateGIGA(3, loss=loss, domain=domain, horizon=300, epsilon=1.0, delta=1e-5,
                          seed=0)
    trace = learner.run(X, y, comparator=u)
    np.testing.assert_allclose(cumulative_regret(trace, loss, X, y, u), trace.regret,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(average_regret(trace, loss, X, y, u), trace.average_regret,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(InvalidInputError, match=r"^trace_or_losses must"):
        cumulative_regret(trace, Regularized(SquaredLoss(), 0.5), X, y, u)
    # u beats every point of the ball on the whole stream
    V = rng.normal(size=(200, 3))
    V /= np.maximum(np.linalg.norm(V, axis=1), 1.0)[:, None]
    best = total(loss, u, X, y)
    assert all(total(loss, v, X, y) >= best for v in V)


# ------------------------------------------------------------------------------ errors
X0, Y0 = regression(n=6, d=2, seed=15)
LOSS = SquaredLoss()
U0 = np.zeros(2)
BAD_CALLS = {
    "loss": (lambda: best_fixed_point("squared", X0, Y0), "loss"),
    "X-nan": (lambda: best_fixed_point(LOSS, np.where(X0 > 0, np.nan, X0), Y0), "X"),
    "X-1d": (lambda: best_fixed_point(LOSS, Y0, Y0), "X"),
    "X-ragged": (lambda: best_fixed_point(LOSS, [[1.0], [1.0, 2.0]], Y0), "X"),
    "y-length": (lambda: best_fixed_point(LOSS, X0, Y0[:-1]), "y"),
    "y-inf": (lambda: best_fixed_point(LOSS, X0, np.full(6, np.inf)), "y"),
    "domain-dim": (lambda: best_fixed_point(LOSS, X0, Y0, L2Ball(3)), "domain"),
    "domain-type": (lambda: best_fixed_point(LOSS, X0, Y0, 2.0), "domain"),
    "tol": (lambda: best_fixed_point(LOSS, X0, Y0, tol=0.0), "tol"),
    "max_iter": (lambda: best_fixed_point(LOSS, X0, Y0, max_iter=0), "max_iter"),
    "method": (lambda: best_fixed_point(LOSS, X0, Y0, method="newton"), "method"),
    "closed-form": (lambda: best_fixed_point(LogisticLoss(), X0, np.sign(Y0),
                                             method="closed_form"), "method"),
    "lbfgs-domain": (lambda: best_fixed_point(LOSS, X0, Y0, L2Ball(2), method="lbfgs"),
                     "method"),
    "return_info": (lambda: best_fixed_point(LOSS, X0, Y0, return_info=1), "return_info"),
    "comparator": (lambda: cumulative_regret(np.zeros(6), LOSS, X0, Y0, np.zeros((2, 1))),
                   "comparator"),
    "regret-X": (lambda: cumulative_regret(np.zeros(6), LOSS, X0, Y0, np.zeros(3)), "X"),
    "losses": (lambda: cumulative_regret(np.zeros(5), LOSS, X0, Y0, U0), "trace_or_losses"),
    "losses-nan": (lambda: average_regret(np.full(6, np.nan), LOSS, X0, Y0, U0),
                   "trace_or_losses"),
    "regret-loss": (lambda: cumulative_regret(np.zeros(6), None, X0, Y0, U0), "loss"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_input_names_the_argument(case):
    call, name = BAD_CALLS[case]
    with pytest.raises(InvalidInputError, match=rf"^{name} must .*; got "):
        call()
