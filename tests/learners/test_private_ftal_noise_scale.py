"""WDP-COCOP (FTAL): the iterate noise is the counter's release noise at the stated node
sigma, and without noise FTAL is the approximate leader of an independent reference.

The node sigma is recomputed from PrivateFTAL's Privacy section with dp-accounting's
analytic Gaussian, not read from the learner (its sensitivities:
test_learner_sensitivity.py).
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
    window_node_sigma,
)
from test_learner_sensitivity import _chi2_accepts

from dpol.learners import PrivateFTAL
from dpol.losses import LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

EPS, DELTA = 1.0, 1e-5


def _popcount(n: int) -> int:
    return bin(n).count("1")


def _window_nodes(t: int, block: int) -> int:
    """Node noises in the window tree's release at t = (k-1) W' + j (its docstring): the
    prefix nodes of block k over [0, j) and, for k >= 2, the suffix nodes of block k-1
    over [j, W'), i.e. popcount(j) + popcount(W' - j)."""
    k, j = divmod(t - 1, block)
    return _popcount(j + 1) + (_popcount(block - j - 1) if k else 0)


@pytest.mark.parametrize(("window", "block"), [(None, 16), (4, 4)])
def test_ftal_iterate_noise_is_the_counter_release_noise(window, block):
    # Stream x = 0: every data gradient is 0, so the counter releases its noise e_t alone
    # and w_{t+1} = Proj(S_t/t - (e_t + mu S_t)/(mu t)) = Proj(-e_t/(mu t)) whatever the
    # earlier iterates were; the ball of radius 100 is not reached at the t checked
    # (asserted), so e_t = -mu t w_{t+1}, with variance nodes(t) sigma^2 per coordinate.
    # Checked at t = 15 (4 nodes without a window, 3 with W = 4) and t = 16 (1 node);
    # n = 200 seeds x 40 coordinates = 8000 per t, as in the POL test above.
    # Catches a node sigma without sqrt(m) or with the wrong m, a variance used as a std, a
    # wrong sensitivity (2L), noise scaled by 1/t twice, or e_t left out of the leader.
    d, T, N, mu, R = 40, 16, 200, 1.0, 100.0
    Z = np.zeros((T, d))

    def make(seed):
        return PrivateFTAL(d, loss=Regularized(HALF_HINGE, mu), domain=L2Ball(d, R), horizon=T,
                           epsilon=EPS, delta=DELTA, window=window, seed=seed)

    paths = np.stack([released_path(make(s), Z, np.zeros(T)) for s in range(N)])  # (N, T+1, d)
    sigma = window_node_sigma(T, block)
    counter = make(0)._counter
    for t in (15, 16):
        assert np.linalg.norm(paths[:, t], axis=1).max() < R * (1 - 1e-6)  # no projection
        E = -mu * t * paths[:, t, :]
        sd = sigma * math.sqrt(_window_nodes(t, block))
        ratio = float(np.mean(E**2)) / sd**2
        assert _chi2_accepts(E, sd), (t, ratio)
        assert not _chi2_accepts(E, 1.5 * sd) and not _chi2_accepts(E, sd / 1.5), (t, ratio)
        assert counter.variance(t) == pytest.approx(sd**2, rel=1e-9)  # what it states


def _ref_ftal(kind, X, y, mu, R):
    """FTAL leader: argmin_{||w|| <= R} <G_t, w> + mu/2 sum_{s<=t} ||w - w_s||^2 with
    G_t = sum_s grad f_s(w_s) (regulariser included). The objective is
    mu t/2 ||w - (mean_s w_s - G_t/(mu t))||^2 + const: an isotropic quadratic, whose
    minimiser over a ball is the projection of its centre. w_1 = Proj(0) = 0."""
    T, d = X.shape
    out, w, G, S = np.zeros((T + 1, d)), np.zeros(d), np.zeros(d), np.zeros(d)
    for t in range(1, T + 1):
        G += data_grad(kind, w, X[t - 1], y[t - 1]) + mu * w
        S += w
        w = ball_projection(S / t - G / (mu * t), R)
        out[t] = w
    return out


@pytest.mark.parametrize(("kind", "counter"), [("squared", "window"), ("logistic", "tree")])
def test_ftal_without_noise_is_the_approximate_leader(kind, counter):
    T, d, mu, R = 200, 3, 0.5, 0.5
    X, y = unit_stream(np.random.default_rng(4), T, d, "sign" if kind == "logistic" else "real")
    loss = Regularized(SquaredLoss() if kind == "squared" else LogisticLoss(), mu)
    expected = _ref_ftal(kind, X, y, mu, R)
    got = released_path(nonprivate(PrivateFTAL, d, loss=loss, domain=L2Ball(d, R), horizon=T,
                      counter=counter), X, y)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    on_sphere = np.isclose(np.linalg.norm(expected[1:], axis=1), R, rtol=1e-12)
    assert on_sphere.any() and not on_sphere.all()  # the projection is exercised
