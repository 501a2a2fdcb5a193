"""dpol/evaluation/_fixed_point_solvers.py: the best fixed point by closed forms, by the
iterative solvers (FISTA, L-BFGS, Frank-Wolfe certificates) and against SLSQP."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixed_point_cases import classification, regression, total, total_grad
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from dpol.errors import NumericalWarning
from dpol.evaluation import best_fixed_point
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import Box, L1Ball, L2Ball, Simplex


def slsqp(loss, X, y, w0, constraints, bounds=None):
    """An independent reference: SLSQP on the mean objective, from a feasible start."""
    n = X.shape[0]
    res = minimize(lambda w: total(loss, w, X, y) / n, w0,
                   jac=lambda w: total_grad(loss, w, X, y) / n, method="SLSQP",
                   constraints=constraints, bounds=bounds, options={"ftol": 1e-14, "maxiter": 1000})
    assert res.success, res.message
    return res.x


def ball_constraint(radius):
    return [{"type": "ineq", "fun": lambda w: radius**2 - w @ w, "jac": lambda w: -2.0 * w}]


def simplex_constraint():
    return [{"type": "eq", "fun": lambda w: np.sum(w) - 1.0,
             "jac": lambda w: np.ones_like(w)}]


# ------------------------------------------------------------------ quadratic closed forms
@pytest.mark.parametrize("alpha", [0.0, 0.05, 1.0])
@pytest.mark.parametrize("method", ["lbfgs", "fista"])
def test_ridge_closed_form_equals_iterative_solvers(alpha, method):
    X, y = regression(seed=1)
    n, d = X.shape
    loss = Regularized(SquaredLoss(), alpha) if alpha else SquaredLoss()
    exact = best_fixed_point(loss, X, y, return_info=True)
    assert exact.method == ("ridge" if alpha else "lstsq")
    # the normal equations, solved independently
    ref = np.linalg.solve(X.T @ X + n * alpha * np.eye(d), X.T @ y)
    np.testing.assert_allclose(exact.w, ref, rtol=0, atol=1e-12)
    iterative = best_fixed_point(loss, X, y, method=method, return_info=True)
    assert iterative.converged and iterative.grad_mapping_norm <= 1e-10
    np.testing.assert_allclose(iterative.w, exact.w, rtol=0, atol=1e-8)
    assert iterative.objective >= exact.objective - 1e-12 * exact.objective
    assert exact.objective == pytest.approx(total(loss, exact.w, X, y), rel=1e-13)


def test_least_squares_rank_deficient_is_minimum_norm():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4, 7))  # n < d: many interpolating solutions
    y = rng.normal(size=4)
    w = best_fixed_point(SquaredLoss(), X, y)
    np.testing.assert_allclose(w, np.linalg.pinv(X) @ y, atol=1e-12)
    np.testing.assert_allclose(X @ w, y, atol=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 0.1])
def test_quadratic_on_l2ball_matches_slsqp_and_lies_on_the_sphere(alpha):
    X, y = regression(seed=3, scale=3.0)
    loss = Regularized(SquaredLoss(), alpha) if alpha else SquaredLoss()
    radius = 1.0
    free = best_fixed_point(loss, X, y)
    assert np.linalg.norm(free) > 1.5 * radius  # the constraint must bind
    res = best_fixed_point(loss, X, y, L2Ball(5, radius), return_info=True)
    assert res.method == "ridge-l2ball"
    assert np.linalg.norm(res.w) == pytest.approx(radius, abs=1e-12)
    ref = slsqp(loss, X, y, np.zeros(5), ball_constraint(radius))
    f_ref = total(loss, ref, X, y)
    assert res.objective == pytest.approx(f_ref, rel=1e-8)
    assert res.objective <= f_ref * (1 + 1e-12)  # never worse than the reference
    np.testing.assert_allclose(res.w, ref, atol=1e-5)
    # KKT: ∇F(w) = −ν·w with ν > 0
    g = total_grad(loss, res.w, X, y)
    nu = -float(g @ res.w) / radius**2
    assert nu > 0
    np.testing.assert_allclose(g, -nu * res.w, atol=1e-9 * np.linalg.norm(g))
    # projected FISTA agrees with the secular-equation solution
    fista = best_fixed_point(loss, X, y, L2Ball(5, radius), method="fista")
    np.testing.assert_allclose(fista, res.w, atol=1e-8)


def test_quadratic_on_large_l2ball_is_the_unconstrained_solution():
    X, y = regression(seed=4, scale=1.0)
    loss = Regularized(SquaredLoss(), 0.2)
    free = best_fixed_point(loss, X, y)
    boxed = best_fixed_point(loss, X, y, L2Ball(5, 10.0))
    np.testing.assert_array_equal(boxed, free)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), radius=st.floats(0.01, 5.0),
       alpha=st.sampled_from([0.0, 1e-3, 0.5]), n=st.integers(1, 12))
def test_l2ball_closed_form_satisfies_kkt(seed, radius, alpha, n):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = rng.normal(size=n) * 3.0
    loss = Regularized(SquaredLoss(), alpha) if alpha else SquaredLoss()
    res = best_fixed_point(loss, X, y, L2Ball(4, radius), return_info=True)
    norm = np.linalg.norm(res.w)
    g = total_grad(loss, res.w, X, y)
    scale = np.linalg.norm(X.T @ y) + 1e-300
    assert norm <= radius * (1 + 1e-12)
    if norm < radius * (1 - 1e-9):  # interior: stationary
        assert np.linalg.norm(g) <= 1e-9 * scale
    else:  # boundary: ∇F = −ν w, ν >= 0
        nu = -float(g @ res.w) / norm**2
        assert nu >= -1e-9 * scale / radius
        assert np.linalg.norm(g + nu * res.w) <= 1e-9 * scale
    assert 0 <= res.suboptimality_bound <= 1e-8 * (1 + res.objective)


# ------------------------------------------------------------------- iterative solvers
@pytest.mark.parametrize("loss", [LogisticLoss(), Regularized(LogisticLoss(), 0.01)],
                         ids=["logistic", "ridge-logistic"])
def test_logistic_on_l2ball_variational_inequality_and_slsqp(loss):
    X, y = classification(seed=5, flip=0.0)  # separable: the unconstrained norm is large
    radius = 2.0
    res = best_fixed_point(loss, X, y, L2Ball(5, radius), return_info=True)
    assert res.method == "fista" and res.converged
    assert np.linalg.norm(res.w) == pytest.approx(radius, rel=1e-9)  # constraint binds
    # variational inequality <∇F(w*), v − w*> >= 0 on the ball (mean objective)
    g = total_grad(loss, res.w, X, y) / X.shape[0]
    rng = np.random.default_rng(6)
    V = rng.normal(size=(2000, 5))
    V *= (radius * rng.random(2000) ** 0.2 / np.linalg.norm(V, axis=1))[:, None]
    V[:1000] *= radius / np.linalg.norm(V[:1000], axis=1)[:, None]  # half on the sphere
    assert np.min((V - res.w) @ g) >= -1e-9
    ref = slsqp(loss, X, y, np.zeros(5), ball_constraint(radius))
    assert res.objective == pytest.approx(total(loss, ref, X, y), rel=1e-8)
    assert res.suboptimality_bound <= 1e-7


@pytest.mark.parametrize("loss", [SquaredLoss(), LogisticLoss(), HingeLoss(h=0.5)],
                         ids=["squared", "logistic", "hinge"])
def test_simplex_domain_matches_slsqp(loss):
    if isinstance(loss, SquaredLoss):
        X, y = regression(seed=7, scale=1.0)
    else:
        X, y = classification(seed=7)
    res = best_fixed_point(loss, X, y, Simplex(5), return_info=True)
    assert res.converged and Simplex(5).contains(res.w, tol=1e-12)
    ref = slsqp(loss, X, y, np.full(5, 0.2), simplex_constraint(), bounds=[(0, None)] * 5)
    f_ref = total(loss, ref, X, y)
    assert res.objective == pytest.approx(f_ref, rel=1e-8)
    assert res.objective <= f_ref + 1e-12 * abs(f_ref)
    # the certificate bounds the gap to the reference minimum
    assert res.objective - f_ref <= res.suboptimality_bound + 1e-12 * abs(f_ref)


def test_box_domain_matches_bounded_lbfgs():
    X, y = classification(seed=8, flip=0.0)
    loss = LogisticLoss()
    res = best_fixed_point(loss, X, y, Box(-0.5 * np.ones(5), 0.5 * np.ones(5)),
                           return_info=True)
    ref = minimize(lambda w: total(loss, w, X, y), np.zeros(5),
                   jac=lambda w: total_grad(loss, w, X, y), method="L-BFGS-B",
                   bounds=[(-0.5, 0.5)] * 5, options={"ftol": 1e-15, "gtol": 1e-12})
    assert res.objective == pytest.approx(ref.fun, rel=1e-8)
    assert res.objective <= ref.fun * (1 + 1e-12)


def test_unconstrained_logistic_lbfgs_equals_fista():
    X, y = classification(seed=9)
    loss = Regularized(LogisticLoss(), 0.01)
    a = best_fixed_point(loss, X, y, return_info=True)
    b = best_fixed_point(loss, X, y, method="fista", return_info=True)
    assert a.method.startswith("lbfgs") and a.converged and b.converged
    np.testing.assert_allclose(np.linalg.norm(total_grad(loss, a.w, X, y)) / X.shape[0], 0,
                               atol=1e-10)
    # both are within tol/μ = 1e-8 of the minimiser
    np.testing.assert_allclose(a.w, b.w, atol=2e-8)


def test_ill_conditioned_ball_problem_is_solved_through_lbfgs_without_a_warning():
    # features on scales 0.01 to 2000 with ridge 0.01: L / mu ~ 1e8, where FISTA's 10,000 steps
    # stopped far from tol (`dpol run igd` on raw breast cancer warned "raise max_iter");
    # the unconstrained L-BFGS minimiser lies inside the ball, so it is the ball's
    X, y = classification(seed=11, flip=0.1)
    X = X * np.array([0.01, 0.1, 1.0, 100.0, 2000.0])  # columns on scales far apart
    loss = Regularized(LogisticLoss(x_bound=2000.0), 0.01)
    ball = L2Ball(5, 50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        res = best_fixed_point(loss, X, y, ball, return_info=True)
    assert res.method == "lbfgs+fista" and res.converged
    assert res.suboptimality_bound <= len(y) * 1e-10  # certified on the summed objective
    with pytest.warns(NumericalWarning, match="max_iter"):  # FISTA alone does not get there
        slow = best_fixed_point(loss, X, y, ball, method="fista", return_info=True)
    assert res.objective <= slow.objective


@pytest.mark.parametrize("domain", [None, L1Ball(5, 50.0)], ids=["Rd", "l1ball"])
def test_budget_exhausted_warns_and_certificate_still_holds(domain):
    X, y = classification(seed=10)
    loss = Regularized(LogisticLoss(), 0.001)
    ref = best_fixed_point(loss, X, y, domain, return_info=True)
    method = "lbfgs" if domain is None else "fista"
    with pytest.warns(NumericalWarning, match="max_iter"):
        rough = best_fixed_point(loss, X, y, domain, max_iter=2, method=method,
                                 return_info=True)
    assert not rough.converged and rough.grad_mapping_norm > 1e-10
    gap = rough.objective - ref.objective
    assert gap > 1e-6  # really unconverged
    assert ref.objective - total(loss, ref.w, X, y) == pytest.approx(0, abs=1e-9)
    assert gap <= rough.suboptimality_bound * (1 + 1e-9)


def test_data_outside_the_declared_bounds_are_handled_by_backtracking():
    # labels ±3 with y_bound = 1: the declared smoothness underestimates the curvature 9x
    X, y = classification(seed=16, flip=0.0)
    y = 3.0 * y
    loss = LogisticLoss()
    res = best_fixed_point(loss, X, y, L2Ball(5, 3.0), return_info=True)
    assert res.converged
    ref = slsqp(loss, X, y, np.zeros(5), ball_constraint(3.0))
    assert res.objective == pytest.approx(total(loss, ref, X, y), rel=1e-8)


@pytest.mark.parametrize("domain", [Simplex(5), L2Ball(5, 2.0)], ids=["simplex", "l2ball"])
def test_frank_wolfe_certificate_bounds_the_gap_without_strong_convexity(domain):
    X, y = classification(seed=17, flip=0.0)
    loss = LogisticLoss()  # μ = 0: only the Frank–Wolfe gap certifies
    ref = best_fixed_point(loss, X, y, domain, return_info=True)
    with pytest.warns(NumericalWarning):
        rough = best_fixed_point(loss, X, y, domain, max_iter=1, return_info=True)
    gap = rough.objective - ref.objective
    assert gap > 1e-6
    assert gap <= rough.suboptimality_bound <= 100 * gap  # valid, and not vacuous
    assert ref.suboptimality_bound <= 1e-7


@pytest.mark.parametrize("domain", [None, L2Ball(5, 50.0)], ids=["Rd", "l2ball"])
def test_strong_convexity_certificate_is_valid_and_tight(domain):
    # Hessian ≈ α·I (tiny X): the bound ‖∇F‖²/(2μ) is then nearly the true gap
    rng = np.random.default_rng(18)
    X, y = 1e-3 * rng.normal(size=(50, 5)), rng.normal(size=50)
    loss = Regularized(SquaredLoss(), 1e-4)
    ref = best_fixed_point(loss, X, y, domain, return_info=True)
    with pytest.warns(NumericalWarning):
        rough = best_fixed_point(loss, X, y, domain, method="fista", max_iter=1,
                                 return_info=True)
    gap = rough.objective - ref.objective
    assert gap > 1e-9
    assert gap <= rough.suboptimality_bound <= 1.5 * gap


def test_no_minimiser_is_stationary_but_not_certified():
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, -1.0])  # separable: the logistic loss has no minimiser on R^2
    res = best_fixed_point(LogisticLoss(), X, y, return_info=True)
    assert res.converged and res.objective < 1e-9  # near the infimum 0, far out
    assert np.linalg.norm(res.w) > 15.0
    assert res.suboptimality_bound == np.inf  # nothing certifies it on R^d
