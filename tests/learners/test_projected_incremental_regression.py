"""ProjectedIncrementalRegression (PrivIncReg2): what its noise protects, end to end.

Paired runs on neighbouring streams with the same seed (same public Phi, same tree noise):
the rows fed to the two trees, the stacked (vec(u u^T), y u) with u the norm-preserving
projection of x, move by at most the element sensitivity the noise is calibrated to, and
the node vectors by it times sqrt(K) (an audit of a privacy gap, KNJ); its features,
projection, lifting and m-dimensional gradient error. The contracts it runs through with
the other KNJ learners: test_private_incremental_regression.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from test_private_incremental_regression import INF, bounded, stream

from dpol.accounting import mu_star
from dpol.errors import InvalidInputError, NonPrivateWarning, NumericalWarning
from dpol.evaluation.excess_risk import excess_empirical_risk, released_models
from dpol.learners.private_incremental_regression import PrivateIncrementalRegression
from dpol.learners.projected_incremental_regression import ProjectedIncrementalRegression
from dpol.sets import Box, L1Ball, L2Ball

EPS, DELTA = 1.0, 1e-5


D, M, T1 = 4, 2, 4  # d, m = projection_dim, horizon (K = 3 tree levels)


def _reg2(xb, yb, seed=7):
    return ProjectedIncrementalRegression(D, domain=L2Ball(D), horizon=T1, epsilon=EPS,
                                          delta=DELTA, projection_dim=M, solver="surrogate",
                                          max_iter=2, x_bound=xb, y_bound=yb, seed=seed)


def _fed_and_released(xb, yb, X, y):
    """Rows fed to the two trees (stacked per step) and the released sums after each step."""
    m = _reg2(xb, yb)
    rows = ([], [])
    for k, counter in enumerate(m.counters):
        def spy(values, k=k, run=counter.run):
            rows[k].append(np.array(values))
            return run(values)
        counter.run = spy  # instance attribute: the learner looks it up on the counter
    sums = []
    for t in range(T1):
        m.learn_one(X[t], y[t])
        sums.append(np.concatenate([a.ravel() for a in m.released_sums()]))
    return m, np.hstack([np.vstack(rows[0]), np.vstack(rows[1])]), np.array(sums)


def _pair_ratios(xb, yb, X, y, X2, y2, i):
    """(element, node, Q-part, q-part) moves of one neighbouring pair over their bounds."""
    m, fed, sums = _fed_and_released(xb, yb, X, y)
    _, fed2, sums2 = _fed_and_released(xb, yb, X2, y2)
    tree = m.counters[0]
    # the stacked-element sensitivity s the noise protects: sigma = s sqrt(K) / mu*
    s = tree.noise_scale * mu_star(EPS, DELTA) / math.sqrt(tree.levels)
    diff = fed - fed2
    moved = np.linalg.norm(diff, axis=1)
    assert np.all(np.delete(moved, i) == 0.0)  # only the replaced element's row changes
    # same seed: the noise coincides, so the releases differ by the element change from i on
    np.testing.assert_allclose(sums - sums2, np.cumsum(diff, axis=0), rtol=0, atol=1e-9)
    nodes = [np.hstack([tree.node_values(f[:, :M * M]), tree.node_values(f[:, M * M:])])
             for f in (fed, fed2)]
    node_moved = float(np.linalg.norm(nodes[0] - nodes[1]))
    part_q, part_y = np.linalg.norm(diff[i, :M * M]), np.linalg.norm(diff[i, M * M:])
    return np.array([moved[i] / s, node_moved / (s * math.sqrt(tree.levels)),
                     part_q / (math.sqrt(2) * xb**2), part_y / (2 * xb * yb)]), s


def _joint_formula(xb, yb):
    """Privacy of PrivateIncrementalRegression (which PrivIncReg2 inherits on m dims)."""
    x2, y2 = xb * xb, yb * yb
    return math.sqrt(2 * x2 * x2 + 2 * x2 * y2 + y2 * y2 / 2) if y2 <= 2 * x2 else 2 * xb * yb


@pytest.mark.parametrize("xb, yb", [(1.0, 1.0), (0.7, 0.4), (0.5, 3.0)])
def test_reg2_projected_statistics_move_by_at_most_the_stated_sensitivity(xb, yb):
    # Random search: 25 neighbouring pairs at random positions (norms up to the bound, a
    # third on it, extreme labels half the time). Adversarial search: Phi is public, so an
    # adversary can aim u = X v / ||v|| at any v in R^m through x = Phi^+ v (Phi Phi^+ = I);
    # with the change at position 1 (it lies in all K nodes of T = 4) over a 5-degree grid
    # of angles between v and v' and y = Y = -y'. The maximiser <u, u'> = Y^2/2 (or u = u'
    # when Y^2 > 2 X^2) is on or within 2.5 degrees of the grid: ratio >= 0.99.
    rng = np.random.default_rng(int(100 * xb + 10 * yb))

    def draw(n):
        x = rng.normal(size=(n, D))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        r = np.where(rng.random(n) < 1 / 3, 1.0, rng.random(n))
        lab = np.where(rng.random(n) < 0.5, rng.choice([-1.0, 1.0], n), rng.uniform(-1, 1, n))
        return x * (r * xb)[:, None], lab * yb

    worst = np.zeros(4)
    for _ in range(25):
        X, y = draw(T1)
        i = int(rng.integers(T1))
        X2, y2 = X.copy(), y.copy()
        X2[i:i + 1], y2[i:i + 1] = draw(1)
        ratios, s = _pair_ratios(xb, yb, X, y, X2, y2, i)
        worst = np.maximum(worst, ratios)
    assert np.all(worst <= 1 + 1e-12), worst
    pinv = np.linalg.pinv(_reg2(xb, yb).projection)  # same seed: the learners' Phi
    X, y = draw(T1)
    best = np.zeros(4)
    for phi in np.radians(np.arange(0, 181, 5)):
        X2, y2 = X.copy(), y.copy()
        for Z, lab, v in ((X, y, [1.0, 0.0]), (X2, y2, [math.cos(phi), math.sin(phi)])):
            x = pinv @ np.array(v)
            Z[0], lab[0] = xb * x / np.linalg.norm(x), yb if Z is X else -yb
        ratios, s = _pair_ratios(xb, yb, X, y, X2, y2, 0)
        assert np.all(ratios <= 1 + 1e-12), (phi, ratios)
        best = np.maximum(best, ratios)
    # element and node-vector bounds nearly attained; so are the two parts' own bounds
    # (sqrt(2) X^2 at u _|_ u', 2 X Y at u = u', y = -y')
    assert np.all(best >= 0.99), best
    assert s == pytest.approx(_joint_formula(xb, yb), rel=1e-9)  # independent of the object


# ----------------------------------------------------- arguments, features, lifting
@pytest.mark.parametrize("kwargs, match", [
    ({"domain": Box(-1, 1, dim=4)}, "domain must be an L1Ball, Simplex, L2Ball or ConvexHull"),
    ({"projection_dim": 0}, "projection_dim must be an integer >= 1"),
    ({"lift": "magic"}, "lift must be one of 'gauge', 'preimage'"),
    ({"inner_iter": 0}, "inner_iter must be an integer >= 1"),
    ({"projection_dim": None, "horizon": 3}, "horizon must exceed the Gaussian width"),
])
def test_reg2_constructor_refuses_bad_arguments(kwargs, match):
    args = {"domain": L1Ball(4), "horizon": 16, "epsilon": 1.0, "delta": DELTA,
            "projection_dim": 2, **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        ProjectedIncrementalRegression(4, **args)


def test_reg2_warns_when_the_projection_cannot_reduce_the_dimension():
    with pytest.warns(NumericalWarning, match="m = 9 >= d = 4"):
        m = ProjectedIncrementalRegression(4, domain=L1Ball(4), horizon=16, epsilon=1.0,
                                           delta=DELTA, projection_dim=9)
    assert m.feature_dim == 4


def test_reg2_features_keep_the_norm_and_projection_is_public_and_data_independent():
    d, m_dim = 40, 6
    a = ProjectedIncrementalRegression(d, domain=L1Ball(d), horizon=50, epsilon=1.0,
                                       delta=DELTA, projection_dim=m_dim, seed=3)
    X = np.random.default_rng(0).normal(size=(50, d)) / 8
    X[7] = 0.0
    U = a._features(X)
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), np.linalg.norm(X, axis=1),
                               rtol=1e-12, atol=0)
    b = ProjectedIncrementalRegression(d, domain=L1Ball(d), horizon=50, epsilon=1.0,
                                       delta=DELTA, projection_dim=m_dim, seed=3)
    b.run(X, np.zeros(50))
    np.testing.assert_array_equal(a.projection, b.projection)  # same seed, any stream
    assert not a.projection.flags.writeable
    # entries N(0, 1/m): m * mean square ~ chi2(md)/(md), 240 entries: 1 +- 0.4 (a = 1e-4)
    ratio = m_dim * float(np.mean(a.projection**2))
    n = a.projection.size
    assert stats.chi2.ppf(5e-5, n) / n <= ratio <= stats.chi2.ppf(1 - 5e-5, n) / n
    # its own seed stream: changing Phi does not change the tree noise
    c = ProjectedIncrementalRegression(d, domain=L1Ball(d), horizon=50, epsilon=1.0,
                                       delta=DELTA, projection_dim=m_dim, seed=3,
                                       projection_seed=12)
    a2 = ProjectedIncrementalRegression(d, domain=L1Ball(d), horizon=50, epsilon=1.0,
                                        delta=DELTA, projection_dim=m_dim, seed=3)
    for learner in (c, a2):
        learner.learn_one(np.zeros(d), 0.0)
    assert not np.array_equal(c.projection, a2.projection)
    np.testing.assert_array_equal(c.released_sums()[0], a2.released_sums()[0])


def test_reg2_without_noise_solves_the_projected_least_squares():
    # eq. (3): with epsilon = inf the surrogate solver minimises
    # sum (y_i - <u_i, Phi theta>)^2 over C, u_i = ||x_i|| Phi x_i / ||Phi x_i||; the
    # reference is the exact evaluator on the rows u_i^T Phi (feasible set C itself)
    d, T = 12, 80
    X, y = bounded(*stream(T, d, seed=9, over=False))
    with pytest.warns(NonPrivateWarning):
        m = ProjectedIncrementalRegression(d, domain=L2Ball(d, 0.5), horizon=T, epsilon=INF,
                                           delta=0.0, projection_dim=4, solver="surrogate",
                                           max_iter=3000, lift="preimage", seed=1)
    W = released_models(m.run(X, y))
    rows = m._features(X) @ m.projection
    r = excess_empirical_risk(W, rows, y, L2Ball(d, 0.5), steps=np.array([10, 40, 80]))
    assert np.all(r.excess <= 1e-7 + r.gap)


@pytest.mark.parametrize("domain", [L1Ball(30, 0.8), L2Ball(30, 0.8)])
def test_reg2_gauge_lifting_gives_a_point_of_c_with_the_right_image(domain):
    d, T = 30, 25
    X, y = stream(T, d, seed=6, over=False)
    m = ProjectedIncrementalRegression(d, domain=domain, horizon=T, epsilon=2.0, delta=DELTA,
                                       projection_dim=5, max_iter=5, inner_iter=5, seed=2)
    m.run(X, y)
    theta, pre = m.weights, m._pre
    phi = m.projection
    assert domain.contains(theta, tol=1e-9)
    np.testing.assert_allclose(phi @ theta, phi @ pre, atol=1e-8)
    assert domain.gauge(theta) <= domain.gauge(pre) + 1e-8  # the minimum-gauge preimage
    if isinstance(domain, L2Ball):
        np.testing.assert_allclose(theta, np.linalg.pinv(phi) @ (phi @ pre), atol=1e-10)


def test_reg2_gradient_error_scales_with_sqrt_m_not_sqrt_d():
    # the point of KNJ Section 5: the released gradient lives in R^m. Exact sup over the
    # L1 ball's vertices (affine error) of ||g_t - grad||, zero stream, 20 seeds each.
    d, m_dim, T = 96, 6, 16

    def sup_error(learner, verts):
        learner.learn_one(np.zeros(d), 0.0)
        Q, q = learner.released_sums()
        return np.linalg.norm(2 * (verts @ Q.T - q), axis=1).max()

    reg1 = [sup_error(PrivateIncrementalRegression(d, domain=L1Ball(d), horizon=T,
                                                   epsilon=1.0, delta=DELTA, seed=s),
                      np.vstack([np.eye(d), -np.eye(d)])) for s in range(20)]
    reg2 = []
    for s in range(20):
        m = ProjectedIncrementalRegression(d, domain=L1Ball(d), horizon=T, epsilon=1.0,
                                           delta=DELTA, projection_dim=m_dim, seed=s)
        reg2.append(sup_error(m, np.vstack([m.projection.T, -m.projection.T])))
    # ||E theta - e|| ~ sigma sqrt(p (||theta||^2 + 1)): ratio ~ sqrt(d/m) = 4 (vertices of
    # Phi C are a bit longer than 1); require more than half of it
    assert np.mean(reg1) / np.mean(reg2) > 2.0
    reg1_alpha = PrivateIncrementalRegression(d, domain=L1Ball(d), horizon=T, epsilon=1.0,
                                              delta=DELTA).gradient_error(1)
    # the bound alpha'_t has the same log terms in both: the sqrt(p) part shrinks 4x
    assert m.gradient_error(1) < 0.75 * reg1_alpha
