"""PrivateFTAL: its counter calibrated on the exact gradient sensitivity, and noise_ridge.

The logistic loss's replace-one gradient sensitivity (tests/losses/test_logistic.py checks
the bound itself) is below WDP's 2 L; FTAL must feed exactly that bound to its counter.
noise_ridge adds a proximal term toward the mean of past iterates, weighted by a
high-probability bound on the noise's norm.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpol.accounting.closed_forms import mu_star
from dpol.errors import NonPrivateWarning
from dpol.learners import PrivateFTAL, PrivateOnlineFrankWolfe
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L2Ball, Simplex


def _ftal(**kw):
    kw.setdefault("loss", Regularized(LogisticLoss(), 0.1))
    kw.setdefault("domain", L2Ball(4, 1.0))
    kw.setdefault("horizon", 256)
    kw.setdefault("counter", "tree")
    return PrivateFTAL(4, **kw)


def test_ftal_counter_uses_the_exact_gradient_sensitivity():
    # Catches FTAL calibrating on 2 L (too much noise) or on something below the proven
    # bound (a privacy failure); paper calibration keeps WDP's 2 L.
    m = _ftal(epsilon=1.0, delta=1e-6, seed=0)
    exact = LogisticLoss().gradient_sensitivity(1.0)
    assert m._counter.node_sensitivity == pytest.approx(exact, rel=1e-12)
    assert exact < 2 * m.lipschitz
    # the noise std: sqrt(levels) * node sensitivity / mu*(eps, delta), levels = 9 at T = 256
    assert m._counter.noise_scale == pytest.approx(3.0 * exact / mu_star(1.0, 1e-6), rel=1e-6)
    assert m.privacy.epsilon == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paper = _ftal(epsilon=1.0, delta=1e-6, seed=0, calibration="paper")
    assert paper._counter.node_sensitivity == pytest.approx(2 * paper.lipschitz, rel=1e-12)
    hinge = _ftal(loss=Regularized(HingeLoss(), 0.1), epsilon=1.0, delta=1e-6, seed=0)
    assert hinge._counter.node_sensitivity == pytest.approx(2 * hinge.lipschitz, rel=1e-12)
    # an explicit counter option wins (the caller proves it)
    own = _ftal(epsilon=1.0, delta=1e-6, seed=0, counter_options={"element_sensitivity": 1.2})
    assert own._counter.node_sensitivity == 1.2


def _nonprivate(**kw):
    with pytest.warns(NonPrivateWarning):
        return _ftal(epsilon=math.inf, **kw)


def test_noise_ridge_without_noise_is_plain_ftal():
    # lambda_t = 0 when there is no noise: the ridge must leave FTAL exactly as it is
    rng = np.random.default_rng(3)
    X = rng.normal(size=(256, 4)) / 2
    y = np.sign(X @ [1.0, -1.0, 0.5, 0.0] + 0.1)
    a = _nonprivate().run(X, y).weights
    b = _nonprivate(noise_ridge=True).run(X, y).weights
    # the same leader in another float order: equal up to a few ulps of the iterates
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)


def test_noise_ridge_step_follows_its_formula():
    # one step by hand: w = Proj((lam w_bar - G) / (mu t + lam)), lam = s (sqrt(d) +
    # sqrt(2 ln 20)) / R, G the released data-gradient sum, w_bar the mean of iterates
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 4)) / 2
    y = np.sign(rng.normal(size=40))
    m = _ftal(epsilon=1.0, delta=1e-6, seed=2, noise_ridge=True,
              domain=L2Ball(4, 2.0))
    m.run(X[:39], y[:39])
    w_prev, sum_w = m.weights, m._sum_w.copy()
    released = []
    original = m._counter.add
    m._counter.add = lambda v: released.append(original(v)) or released[-1]
    m.learn_one(X[39], y[39])
    t, mu = 40, 0.1
    s = math.sqrt(m._counter.variance(t))
    lam = s * (2.0 + math.sqrt(2 * math.log(20.0))) / 2.0
    sum_w = sum_w + w_prev
    raw = (lam * sum_w / t - released[0]) / (mu * t + lam)
    expected = raw if np.linalg.norm(raw) <= 2.0 else raw * 2.0 / np.linalg.norm(raw)
    np.testing.assert_allclose(m.weights, expected, rtol=1e-12, atol=1e-15)


def test_noise_ridge_run_equals_the_learn_one_loop_and_round_trips():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(128, 4)) / 2
    y = np.sign(rng.normal(size=128))
    a = _ftal(epsilon=1.0, delta=1e-6, seed=4, noise_ridge=True, counter="blt")
    trace = a.run(X, y).weights
    b = _ftal(epsilon=1.0, delta=1e-6, seed=4, noise_ridge=True, counter="blt")
    loop = []
    for x_t, y_t in zip(X, y, strict=True):
        loop.append(b.weights)
        b.learn_one(x_t, y_t)
    np.testing.assert_array_equal(trace, np.array(loop))
    c = _ftal(epsilon=1.0, delta=1e-6, seed=4, noise_ridge=True, counter="blt")
    c.run(X[:50], y[:50])
    d = PrivateFTAL.from_state(c.get_state())
    np.testing.assert_array_equal(d.run(X[50:], y[50:]).weights, trace[50:])


def test_noise_ridge_shrinks_the_noise_dominated_first_step():
    # After step 1 (w_bar_1 = w_1 = 0 on the centred ball) the ridge step is
    # -(g_1 + n_1) / (mu + lambda_1), lambda_1 = s_1 (sqrt(d) + sqrt(2 ln 20)) / R, so at
    # epsilon = 0.1 (s_1 ~ 100, |g_1| <= 0.73) its norm is R ||n_1|| / (s_1 (2 + 2.448)) up
    # to 1%: R chi_4 / 4.448, whose median is R 1.832 / 4.448 = 0.412 R (chi_4's median
    # 1.8324). Over 400 seeds the sample median has sd about 1.2533 * 0.69 / 4.448 / 20 =
    # 0.0097 R (chi_4's sd 0.69); a 0.035 R tolerance is 3.6 sd. Plain FTAL projects the
    # same step onto the sphere (norm R).
    x = np.array([0.5, 0.0, 0.0, 0.0])
    norms, plain = [], []
    for seed in range(400):
        m = _ftal(epsilon=0.1, delta=1e-6, seed=seed, noise_ridge=True, domain=L2Ball(4, 2.0))
        m.learn_one(x, 1.0)
        norms.append(np.linalg.norm(m.weights))
        if seed < 20:
            p = _ftal(epsilon=0.1, delta=1e-6, seed=seed, domain=L2Ball(4, 2.0))
            p.learn_one(x, 1.0)
            plain.append(np.linalg.norm(p.weights))
    assert np.median(norms) == pytest.approx(2.0 * 1.8324 / (2.0 + math.sqrt(2 * math.log(20))),
                                             abs=0.035 * 2.0)
    np.testing.assert_allclose(plain, 2.0)


def test_noise_ridge_refusals():
    with pytest.raises(ValueError, match="noise_ridge"):
        PrivateFTAL(2, loss=Regularized(LogisticLoss(), 0.1), domain=_Unbounded(),
                    horizon=8, epsilon=1.0, noise_ridge=True)
    # a Frank-Wolfe step moves toward an oracle point: no leader, no noise ridge to take
    with pytest.raises(TypeError, match="noise_ridge"):
        PrivateOnlineFrankWolfe(3, loss=Regularized(SquaredLoss(), 1.0), domain=Simplex(3),
                                horizon=8, epsilon=1.0, noise_ridge=True)


class _Unbounded:
    """A convex set (all of R^d) with a projection and no finite radius."""

    radius = math.inf

    def project(self, w):
        return np.asarray(w, dtype=float)
