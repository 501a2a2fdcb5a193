"""PrivateOfflineLearner at zero noise against an independent non-private reference.

With epsilon = inf a private learner must be exactly its clean algorithm. The reference
below shares no code path with dpol (no _linear, no mu_star); OutputPerturbation's:
test_output_perturbation.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from learner_cases import ball_projection, logistic_grad, reference_stream

from dpol.errors import NonPrivateWarning
from dpol.learners.private_offline_learner import PrivateOfflineLearner
from dpol.losses import LogisticLoss

D, T = 3, 30


def _ref_implicit_step(w, x, y, eta, alpha, r):
    """argmin_{|v| <= r} 1/2 |v - w|^2 + eta (logistic(<x, v>, y) + alpha/2 |v|^2).

    Solved by projected gradient descent (the library uses a KKT root find instead). The
    objective is mu-strongly convex and L-smooth with mu = 1 + eta alpha, L = mu + eta
    |x|^2 / 4 (logistic'' <= 1/4), so step 1/L contracts by q = 1 - mu/L < 1 and the
    distance to the minimiser is <= |last move| q / (1 - q); we stop at a move < 1e-15.
    """
    mu = 1.0 + eta * alpha
    L = mu + eta * float(x @ x) / 4.0
    v = w.copy()
    for _ in range(100_000):
        g = (v - w) + eta * (logistic_grad(v, x, y) + alpha * v)
        nxt = ball_projection(v - g / L, r)
        if float(np.linalg.norm(nxt - v)) < 1e-15:
            return nxt
        v = nxt
    raise AssertionError("reference did not converge")


@pytest.mark.parametrize(("radius", "excess"), [(3.0, 1.0), (0.3, 0.02)])
def test_pol_zero_noise_is_averaged_implicit_gd(radius, excess):
    # The docstring (and code) of POL is NOT "release the regularised ERM minimiser": it
    # runs IGD with eta_t = 1/(alpha t) on loss + alpha/2 |w|^2 over the ball of radius
    # x_star_norm, alpha = excess / x_star_norm^2, and releases Proj_C(mean(w_2..w_{T+1}))
    # once, after the last element (0 before). Case 1: the ball is never reached; case 2
    # (small ball) makes the constraint active, exercising the projected branch.
    X, y = reference_stream(1, T)
    with pytest.warns(NonPrivateWarning):
        pol = PrivateOfflineLearner(D, loss=LogisticLoss(), x_star_norm=radius, excess=excess,
                                    horizon=T, epsilon=math.inf, seed=0)
    trace = pol.run(X, y)
    alpha = excess / radius**2
    w, path = np.zeros(D), []
    for t in range(1, T + 1):
        w = _ref_implicit_step(w, X[t - 1], y[t - 1], 1.0 / (alpha * t), alpha, radius)
        path.append(w)
    path = np.array(path)
    active = np.isclose(np.linalg.norm(path, axis=1), radius, rtol=1e-12)
    assert active.any() == (radius < 1.0)  # the case really is (in)active as intended
    # nothing data-dependent before the horizon: every pre-step release is the start 0
    assert np.array_equal(trace.weights, np.zeros((T, D)))
    # Each step is a 1-contraction of w (prox of a convex function), so per-step solver
    # errors (reference ~1e-15, library's root find ROOT_TOL = 1e-14 on the margin, i.e.
    # ~1e-14 on v) add up to < T * 1e-13 at most; 1e-11 leaves a safety factor of ~3.
    np.testing.assert_allclose(trace.final_weights, ball_projection(path.mean(axis=0), radius),
                               rtol=0, atol=1e-11)
    assert pol.privacy.epsilon == math.inf
