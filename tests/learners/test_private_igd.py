"""PrivateIGD's per-release sensitivity Delta_t = lam / (t + 1), by brute force.

On tiny streams every neighbour that replaces one element by a point of a grid (x on the
unit circle and inside it, y in {-1, 0, 1}) is run without noise, and the largest change
of the clean release after step t, over every position and every replacement, is set
against the declared Delta_t (``sensitivity(t)``, which the tight noise is calibrated
for). It must never exceed it (the bound holds) and, for the hinge loss in its linear
zone, reach it (the bound is attained), i.e. exceed the share t / (t + 1) of JKT Lemma
4's lam / t, the bound the noise used to be calibrated for.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateIGD
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball

T, ALPHA = 4, 1.0
ANGLES = np.linspace(0.0, 2.0 * np.pi, 12, endpoint=False)
GRID = [(r * np.array([np.cos(a), np.sin(a)]), y) for r in (0.0, 0.5, 1.0) for a in ANGLES
        for y in (-1.0, 0.0, 1.0)]
LOSSES = {
    # h small: margins |<w, x>| <= c_t < 1 - h keep the hinge linear, slope exactly 1 = L
    "hinge": (lambda: Regularized(HingeLoss(h=1e-3), ALPHA), L2Ball(2, 1.0)),
    "logistic": (lambda: Regularized(LogisticLoss(), ALPHA), L2Ball(2, 1.0)),
    "logistic-Rd": (lambda: Regularized(LogisticLoss(), ALPHA), None),
    "squared": (lambda: Regularized(SquaredLoss(), ALPHA), L2Ball(2, 0.5)),
}


def _releases(kind: str, X: np.ndarray, y: np.ndarray, epsilon: float = np.inf) -> np.ndarray:
    """w_1..w_{T+1} of the noiseless learner (row t: the release after step t)."""
    make, domain = LOSSES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        trace = PrivateIGD(2, loss=make(), domain=domain, horizon=T, epsilon=epsilon,
                           delta=1e-5).run(X, y)
    return np.vstack([trace.weights, trace.final_weights[None, :]])


def _worst_shares(kind: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """max over positions and grid replacements of ||Delta w_{t+1}|| / Delta_t, t = 1..T."""
    base = _releases(kind, X, y)
    make, domain = LOSSES[kind]
    declared = PrivateIGD(2, loss=make(), domain=domain, horizon=T, epsilon=1.0,
                          delta=1e-5)
    sens = np.array([declared.sensitivity(t) for t in range(1, T + 1)])
    worst = np.zeros(T)
    for tau in range(T):
        for x, v in GRID:
            X2, y2 = X.copy(), y.copy()
            X2[tau], y2[tau] = x, v
            change = np.linalg.norm(_releases(kind, X2, y2) - base, axis=1)[1:]
            worst = np.maximum(worst, change / sens)
    return worst


@pytest.mark.parametrize("kind", list(LOSSES))
def test_no_neighbour_moves_release_t_by_more_than_lam_over_t_plus_1(kind):
    # Catches a declared Delta_t below the real sensitivity (under-noising): e.g. a
    # contraction assumed at the changed step as well, or L from the wrong domain.
    rng = np.random.default_rng(len(kind))
    for _ in range(3):
        X = rng.normal(size=(T, 2))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        y = rng.choice([-1.0, 1.0], size=T)
        assert np.all(_worst_shares(kind, X, y) <= 1.0 + 1e-9)


def test_hinge_neighbours_attain_lam_over_t_plus_1_so_lam_over_t_was_loose():
    # From w_1 = 0, the element x = e_1 with y = +1 or -1 moves the first prox point to
    # +-c_1 e_1 (c_1 = 1/(2 alpha)), a change 2 L c_1 = lam / 2 = Delta_1; later null
    # elements scale it by t/(t+1) exactly. The grid holds that pair, so the worst share
    # is 1 at every t: above t/(t+1), the most lam / t could ever be attained (1/2 at
    # t = 1), so the old calibration over-noised release t by (t+1)/t.
    X, y = np.zeros((T, 2)), np.ones(T)
    X[0] = [1.0, 0.0]
    shares = _worst_shares("hinge", X, y)
    np.testing.assert_allclose(shares, 1.0, rtol=1e-9)
    t = np.arange(1, T + 1)
    assert np.all(shares * t / (t + 1) < 1.0 - 0.19)  # of lam / t: at most 0.8


def test_tight_noise_is_calibrated_for_lam_over_t_plus_1():
    # s_t = z lam / (t + 1), the same z as before: the same (epsilon, delta), less noise
    make, domain = LOSSES["logistic"]
    m = PrivateIGD(2, loss=make(), domain=domain, horizon=T, epsilon=1.0, delta=1e-5)
    t = np.arange(1, T + 1)
    s = np.array([m.noise_std(int(k)) for k in t])
    z = s * (t + 1) / m.lam
    np.testing.assert_allclose(z, z[0], rtol=1e-12)
    assert m.privacy.epsilon == pytest.approx(1.0, rel=1e-9)
