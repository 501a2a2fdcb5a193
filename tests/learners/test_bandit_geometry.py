"""ENV's bandit geometry: sphere directions, the one-point estimator, the Frank-Wolfe step.

The estimator's moments and the step's convergence are checked against closed forms
(5 standard errors; Jaggi's bound); the learners that use them: test_bandit.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from learner_cases import bandit_twin as twin
from learner_cases import distance_loss

from dpol.errors import InvalidInputError
from dpol.learners._bandit_geometry import (
    LinearOracleDomain,
    frank_wolfe_step,
    one_point_gradient,
    sample_sphere,
)
from dpol.sets import Box, L2Ball, Simplex


def test_sphere_samples_are_unit_with_isotropic_moments():
    # u uniform on S^(n-1): E u = 0, E u u^T = I/n; Var u_i = 1/n, Var u_i^2 =
    # 3/(n(n+2)) - 1/n^2, Var u_i u_j = 1/(n(n+2)); every mean within 5 standard errors
    n, N = 4, 100_000
    U = sample_sphere(np.random.default_rng(0), N, n)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(np.abs(U.mean(axis=0)) <= 5 * math.sqrt(1 / n / N))
    M = U.T @ U / N
    se_diag = math.sqrt((3 / (n * (n + 2)) - 1 / n**2) / N)
    se_off = math.sqrt(1 / (n * (n + 2)) / N)
    assert np.all(np.abs(np.diag(M) - 1 / n) <= 5 * se_diag)
    assert np.all(np.abs(M[~np.eye(n, dtype=bool)]) <= 5 * se_off)


@pytest.mark.parametrize(("n", "zeta", "seed"), [(3, 0.5, 1), (5, 0.2, 2), (8, 1.0, 3)])
def test_one_point_estimator_is_unbiased_for_linear_losses(n, zeta, seed):
    # f(x) = <theta, x> + b at x: a = f(x). Row (n/zeta)(a + zeta <theta, u>) u has mean theta
    # (E u = 0, E u u^T = I/n) and, with E u_i^4 = 3/(n(n+2)), E u_i^2 u_j^2 = 1/(n(n+2)),
    # E row_i^2 = (n/zeta)^2 a^2 / n + n (||theta||^2 + 2 theta_i^2) / (n + 2). The mean of N
    # rows is within 5 sd_i / sqrt(N) of theta_i (false alarm < 6e-7 per coordinate)...
    rng = np.random.default_rng(seed)
    theta, b, x = rng.normal(size=n), 0.1, rng.uniform(-0.3, 0.3, size=n)
    a, N = theta @ x + b, 200_000
    U = sample_sphere(rng, N, n)
    G = one_point_gradient(theta @ (x + zeta * U).T + b, U, zeta)
    sd = np.sqrt((n / zeta) ** 2 * a**2 / n + n * (theta @ theta + 2 * theta**2) / (n + 2)
                 - theta**2)
    tol = 5 * sd / math.sqrt(N)
    assert np.all(np.abs(G.mean(axis=0) - theta) <= tol)
    # ... and that tolerance detects a 1/n relative bias: the scaling (n+1)/zeta fails it
    assert np.any(np.abs(G.mean(axis=0) * (n + 1) / n - theta) > tol)


def test_one_point_estimator_on_a_quadratic_estimates_the_smoothed_gradient():
    # f(x) = 1/2 ||x||^2: the ball smoothing is f + const, whose gradient is x (ENV Lemma 2.2);
    # row_i = (n/zeta) (1/2 ||x||^2 + zeta <x, u> + zeta^2/2) u_i, E row_i^2 <= 3 (n/zeta)^2
    # ((||x||^2/2 + zeta^2/2)^2 / n + zeta^2 ||x||^2 3 / (n(n+2))): 5 standard errors
    n, zeta, N = 3, 0.4, 200_000
    x = np.array([0.2, -0.5, 0.1])
    U = sample_sphere(np.random.default_rng(4), N, n)
    P = x + zeta * U
    G = one_point_gradient(0.5 * np.einsum("ij,ij->i", P, P), U, zeta)
    bound = 3 * (n / zeta) ** 2 * ((x @ x / 2 + zeta**2 / 2) ** 2 / n
                                   + zeta**2 * (x @ x) * 3 / (n * (n + 2)))
    assert np.all(np.abs(G.mean(axis=0) - x) <= 5 * math.sqrt(bound / N))


@pytest.mark.parametrize("domain", [Box([-1.0, 0.0, 0.0, 0.5], [1.0, 2.0, 0.5, 3.0]),
                                    Simplex(4), L2Ball(4, 2.0)], ids=repr)
def test_frank_wolfe_stays_feasible_and_reaches_the_projection(domain):
    # q(x) = 1/2||x - c||^2 + <y, x> is 1-smooth and 1-strongly convex; Jaggi's bound with
    # curvature C_f <= D^2: q(x_k) - q* <= 2 D^2 / (k + 2), so ||x_k - x*|| <= 2 D/sqrt(k + 2);
    # the FW gap bounds q(x_k) - q* >= ||x_k - x*||^2 / 2
    rng = np.random.default_rng(5)
    c = domain.project(rng.normal(size=4))
    y = 1.5 * rng.normal(size=4)
    target = domain.project(c - y)
    x, D = domain.linear_oracle(np.ones(4)), domain.diameter
    for k in range(1, 301):
        previous = x
        x, gap = frank_wolfe_step(domain.linear_oracle, x, c, y)
        assert gap >= 0.5 * np.linalg.norm(previous - target) ** 2 - 1e-12
        assert domain.contains(x, tol=1e-12)
        assert np.linalg.norm(x - target) <= 2 * D / math.sqrt(k + 2)


def test_frank_wolfe_sign_moves_away_from_the_accumulated_loss():
    # A1: with s~ = e_1 the minimiser of 1/2||x - c||^2 + eta <s~, x> on [0, 1]^3 has x_1 = 0
    # (the printed minus sign would send it to 1, towards high loss)
    box, c = Box(0.0, 1.0, dim=3), np.full(3, 0.5)
    x = c.copy()
    for _ in range(50):
        x, _ = frank_wolfe_step(box.linear_oracle, x, c, 5.0 * np.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(x, [0.0, 0.5, 0.5], atol=1e-12)


def test_linear_oracle_domain_checks_its_oracle():
    dom = LinearOracleDomain(lambda c: np.where(c < 0, 1.0, 0.0)[:2], 3, math.sqrt(3))
    with pytest.raises(InvalidInputError, match=r"oracle\(c\) must return a finite vector"):
        twin(dom, 100, center=np.full(3, 0.5)).run(distance_loss)
    with pytest.raises(InvalidInputError, match="c must contain only finite"):
        LinearOracleDomain(np.sign, 2, 1.0).linear_oracle([np.nan, 0.0])
