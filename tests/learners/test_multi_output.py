"""PQFTL with K outputs (``outputs=K``): sensitivity, noise scale, exactness, API.

* the stacked element (svec(x x^T), (R / Y) vec(x y^T)) moves by at most the scalar
  labels' s = ``outer_product_sensitivity(R, R)``, by brute force over the elements and
  over neighbouring tiny streams fed through the learner (its own clipping and scaling);
* the u counter's released noise has the calibrated std (chi-square, rejects 2/3x, 3/2x);
* with epsilon = inf the releases are the ridge least-squares solutions (numpy lstsq);
* learn_one and run give the same releases bit for bit, through the wrappers too; labels
  are validated and clipped; the state round-trips.
"""

from __future__ import annotations

import io
import itertools
import math
import warnings

import dp_accounting
import numpy as np
import pytest
from test_learner_sensitivity import _chi2_accepts

from dpol._state_file import read_state, write_state
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners import PrivateQuadraticFTL
from dpol.learners import _psd_solve as ps
from dpol.learners._joint_counters import outer_product_sensitivity
from dpol.learners._multi_output import u_elements
from dpol.learners.intercept import WithIntercept
from dpol.learners.postprocess import _shrink_rows, js_shrink
from dpol.learners.random_features import WithRandomFeatures

INF = float("inf")
EPS, DELTA = 1.0, 1e-5


def _twin(*args, **kwargs):
    with pytest.warns(NonPrivateWarning):
        return PrivateQuadraticFTL(*args, epsilon=INF, delta=DELTA, **kwargs)


def _stream(seed, n, d, K, norm=0.9):
    """Rows of norm <= ``norm`` and one-hot labels (no clipping at bound 1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X *= norm * rng.uniform(0.2, 1.0, size=(n, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.eye(K)[rng.integers(0, K, n)]


def _recording(counter, fed, released=None):
    """Wrap a counter's ``add`` to record the elements it is fed (and its releases)."""
    add = counter.add

    def recorded(v):
        fed.append(np.array(v, dtype=float))
        out = add(v)
        if released is not None:
            released.append(out.copy())
        return out
    counter.add = recorded


# ============================================================== sensitivity
def test_stacked_element_change_is_the_scalar_bound_by_brute_force():
    # Elements built by the library's encoders (svec of x x^T, row-major vec(x y^T)) over
    # x, x' in the plane (the V part depends only on norms and angle) on a grid of norms
    # and 1-degree angles, and label rows y, y' in R^3 of norms {0, 1/2, 1} with angles
    # 0..180 degrees in 10-degree steps. The grid holds the scalar witness (unit x, x' at
    # 60 degrees, y = -y' unit), so the maximum must equal s = 3/sqrt(2) to rounding: a
    # larger maximum means K outputs need more noise than scalars, a smaller one a grid
    # or encoder that misses the witness.
    layout = ps._svec_layout(2)
    norms = np.linspace(0.0, 1.0, 11)
    angles = np.radians(np.arange(0, 181))
    a, b, th = (g.ravel() for g in np.meshgrid(norms, norms, angles, indexing="ij"))
    x = np.stack([a, np.zeros_like(a)], 1)
    x2 = np.stack([b * np.cos(th), b * np.sin(th)], 1)
    dv2 = np.sum((ps._svec_outer(x, layout) - ps._svec_outer(x2, layout)) ** 2, axis=1)
    best = 0.0
    for ny, ny2 in itertools.product((0.0, 0.5, 1.0), repeat=2):
        for phi in np.radians(np.arange(0, 181, 10)):
            y = np.array([ny, 0.0, 0.0])
            y2 = ny2 * np.array([np.cos(phi), np.sin(phi) / math.sqrt(2), np.sin(phi)
                                 / math.sqrt(2)])
            du = u_elements(x, np.tile(y, (len(x), 1))) - u_elements(x2, np.tile(y2, (len(x), 1)))
            best = max(best, float(np.sqrt(np.max(dv2 + np.sum(du**2, axis=1)))))
    claimed = outer_product_sensitivity(1.0, 1.0, "replace_one")
    assert claimed == pytest.approx(3 / math.sqrt(2), rel=1e-15)
    assert claimed * (1 - 1e-12) <= best <= claimed * (1 + 1e-12)


@pytest.mark.parametrize(("bound", "y_bound"), [(1.0, 1.0), (0.8, 2.0)])
def test_neighbouring_tiny_streams_move_the_counters_input_by_at_most_s(bound, y_bound):
    # Every stream of length 2 over a finite domain of 30 elements (rows at 0, 60 and 90
    # degrees of norm bound, one at 60 of norm bound/2, one of norm 3 bound that must be
    # clipped; label rows +-e1, e2, (e1 + e2)/sqrt(2) times y_bound, 0, and 3 y_bound e3,
    # clipped), against every neighbour replacing one element (900 streams, 52,200
    # pairs): the stacked change of what the learner feeds its counters (after its
    # clipping and R / Y scaling) never exceeds the calibrated s (``_stacked``), lies at
    # the replaced step only, and the 60-degree pair with opposite labels attains s.
    # Catches: labels not clipped or not rescaled, a u element other than vec(x y^T), an
    # element depending on the history.
    u60 = np.array([0.5, math.sqrt(3) / 2, 0.0])
    rows = [bound * np.array([1.0, 0, 0]), bound * u60, bound * np.array([0, 1.0, 0]),
            0.5 * bound * u60, np.array([0, 0, 3.0 * bound])]
    labels = [y_bound * v for v in (np.array([1.0, 0, 0, 0]), np.array([-1.0, 0, 0, 0]),
                                    np.array([0, 1.0, 0, 0]),
                                    np.array([1.0, 1.0, 0, 0]) / math.sqrt(2),
                                    np.zeros(4), np.array([0, 0, 3.0, 0]))]
    domain = list(itertools.product(range(len(rows)), range(len(labels))))

    def fed(stream):
        m = _twin(3, horizon=2, bound=bound, y_bound=y_bound, outputs=4)
        logs = ([], [])
        for c, log in zip(m._counters, logs, strict=True):
            _recording(c, log)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the clipping warning
            for i, j in stream:
                m.learn_one(rows[i], labels[j])
        return np.hstack([np.array(logs[0]), np.array(logs[1])])

    s = PrivateQuadraticFTL(3, horizon=2, epsilon=EPS, bound=bound, y_bound=y_bound,
                            outputs=4)._stacked
    assert s == pytest.approx(outer_product_sensitivity(bound, bound, "replace_one"), rel=1e-15)
    elements = {st: fed(st) for st in itertools.product(domain, repeat=2)}
    best = 0.0
    for st, pos, f in itertools.product(elements, (0, 1), domain):
        other = list(st)
        other[pos] = f
        change = np.linalg.norm(elements[st] - elements[tuple(other)], axis=1)
        assert change[1 - pos] == 0.0
        best = max(best, float(change[pos]))
    assert best <= s * (1 + 1e-12)
    assert best >= s * (1 - 1e-12)  # rows 0 and 1 (60 degrees), labels e1 and -e1


def test_k_outputs_cost_the_noise_of_one_label():
    # Same d, bounds and budget: the u counter of K = 6 has 6 times the coordinates and
    # exactly the std of K = 1 (and of the V counter): one stacked mechanism of s.
    one = PrivateQuadraticFTL(3, horizon=64, epsilon=EPS, delta=DELTA, seed=0)
    six = PrivateQuadraticFTL(3, horizon=64, epsilon=EPS, delta=DELTA, seed=0, outputs=6)
    assert six._counters[1].dim == 18 and one._counters[1].dim == 3
    assert six._counters[1].noise_scale == one._counters[1].noise_scale
    assert six._counters[0].noise_scale == one._counters[0].noise_scale
    assert six.privacy == one.privacy and six._stacked == one._stacked


def test_u_release_noise_has_the_calibrated_std():
    # The u counter's release minus the exact sum U_t is its noise, N(0, popcount(t)
    # sigma^2) per coordinate for the binary tree, sigma = s sqrt(m) / mu*(eps, delta),
    # s = sqrt(9/2) R^2 (R = 1), m = floor(log2 T) + 1 = 5 nodes per element (T = 16),
    # recomputed here with dp-accounting's analytic Gaussian. Checked at t = 15 (4 nodes)
    # and t = 16 (1 node) over N = 400 seeds x d K = 20 coordinates = 8000 entries:
    # _chi2_accepts (1e-4 per tail) accepts sigma within about +-3.1% (3.9 standard errors
    # of 1/sqrt(2 n) = 0.8%), while 2/3 or 3/2 of it moves sum(E^2)/sigma^2 by 2.25x,
    # about 140 standard deviations: rejected. Catches a u counter calibrated for the
    # quadrature sum or a K-dependent s, or noise of the scalar (d,) shape.
    d, K, T, N = 4, 5, 16, 400
    X, Y = _stream(3, T, d, K)
    exact = np.cumsum(u_elements(X, Y), axis=0)
    sigma = math.sqrt(4.5) * math.sqrt(T.bit_length()) * dp_accounting.get_sigma_gaussian(
        EPS, DELTA)
    noise = np.empty((N, T, d * K))
    for seed in range(N):
        m = PrivateQuadraticFTL(d, horizon=T, epsilon=EPS, delta=DELTA, outputs=K, seed=seed)
        log = []
        _recording(m._counters[1], [], log)
        for x, y in zip(X, Y, strict=True):
            m.learn_one(x, y)
        noise[seed] = np.array(log) - exact
    assert m._counters[1].levels == T.bit_length()
    for t, nodes in ((15, 4), (16, 1)):
        E, sd = noise[:, t - 1], sigma * math.sqrt(nodes)
        ratio = float(np.mean(E**2)) / sd**2
        assert _chi2_accepts(E, sd), (t, ratio)
        assert not _chi2_accepts(E, 1.5 * sd) and not _chi2_accepts(E, sd / 1.5), (t, ratio)


# ============================================================== exactness


@pytest.mark.parametrize(("d", "alpha"), [(3, 1.0), (30, 0.05)])
def test_zero_noise_is_multi_output_ridge_least_squares(d, alpha):
    # W_t = argmin ||X_t W - Y_t||_F^2 + t alpha ||W||_F^2 (the first t rows), by lstsq on
    # [X_t; sqrt(t alpha) I], [Y_t; 0]: shares no code with dpol. d = 30 takes the
    # tridiagonal route of the solver. The Frobenius clip never binds (it holds the exact
    # solutions). Column k also equals a scalar PQFTL on labels Y[:, k].
    K, T = 4, 60
    X, Y = _stream(7, T, d, K)
    trace = _twin(d, horizon=T, alpha=alpha, outputs=K, noise_ridge=True).run(X, Y)
    path = np.concatenate([trace.weights, trace.final_weights[None]])
    assert path.shape == (T + 1, d, K) and not np.any(path[0])
    for t in range(1, T + 1):
        A = np.vstack([X[:t], math.sqrt(t * alpha) * np.eye(d)])
        B = np.vstack([Y[:t], np.zeros((d, K))])
        np.testing.assert_allclose(path[t], np.linalg.lstsq(A, B, rcond=None)[0],
                                   rtol=1e-9, atol=1e-11)
    for k in range(K):
        col = _twin(d, horizon=T, alpha=alpha).run(X, Y[:, k]).weights
        np.testing.assert_allclose(trace.weights[:, :, k], col, rtol=1e-9, atol=1e-12)


# ============================================================== API
def _bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize(("d", "kw"), [(5, {}), (30, {"noise_ridge": True, "alpha": 0.01,
                                                       "counter": "blt"}),
                                       (6, {"y_bound": 2.0, "counter": "honaker"}),
                                       (8, {"solves_per_doubling": 4})])
def test_learn_one_and_run_release_the_same_bits(d, kw):
    K, T = 3, 300
    X, Y = _stream(d, T, d, K, norm=1.3)  # some rows clipped
    Y[::7] *= 3.0  # some label rows beyond y_bound: clipped, counted
    a = PrivateQuadraticFTL(d, horizon=T, epsilon=EPS, outputs=K, seed=1, **kw)
    b = PrivateQuadraticFTL(d, horizon=T, epsilon=EPS, outputs=K, seed=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = a.run(X[:200], Y[:200])
        trace2 = a.run(X[200:], Y[200:])
        before = []
        for x, y in zip(X, Y, strict=True):
            before.append(b.weights)
            b.learn_one(x, y)
    assert trace.weights.shape == (200, d, K) and trace.predictions.shape == (200, K)
    assert np.array_equal(_bits(np.concatenate([trace.weights, trace2.weights])),
                          _bits(np.array(before)))
    assert np.array_equal(_bits(a.weights), _bits(b.weights)) and a.weights.shape == (d, K)
    assert np.array_equal(_bits(a.model_weights), _bits(b.model_weights))
    assert a.n_clipped_ == b.n_clipped_ > 0
    # the model is the t^2-weighted mean of the releases after each step
    after = np.concatenate([np.array(before)[1:], b.weights[None]])
    t2 = np.arange(1.0, T + 1) ** 2
    np.testing.assert_allclose(b.model_weights, np.einsum("t,tij->ij", t2, after) / t2.sum(),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("wrap", ["intercept", "features"])
def test_wrappers_take_k_outputs(wrap):
    K, T, d = 3, 200, 2
    X, Y = _stream(5, T, d, K)

    def make():
        if wrap == "intercept":
            return WithIntercept(PrivateQuadraticFTL(d + 1, horizon=T, epsilon=EPS, alpha=0.01,
                                                     outputs=K, noise_ridge=True, seed=2))
        return WithRandomFeatures(WithIntercept(PrivateQuadraticFTL(
            17, horizon=T, epsilon=EPS, alpha=0.01, outputs=K, seed=2)), d)

    a, b = make(), make()
    trace = a.run(X, Y)
    for x, y in zip(X, Y, strict=True):
        b.learn_one(x, y)
    assert np.array_equal(_bits(a.weights), _bits(b.weights))
    P = a.predict_rows(X[:10])
    assert P.shape == (10, K) and np.all(np.abs(P) <= 1.0)
    assert np.allclose(P[3], a.predict_one(X[3]), rtol=1e-12, atol=1e-15)
    assert trace.model_predictions.shape == (T, K)
    if wrap == "intercept":
        coef, b0 = a.linear_model()
        assert coef.shape == (d, K) and b0.shape == (K,)
        np.testing.assert_allclose(P, np.clip(X[:10] @ coef + b0, -1, 1), rtol=1e-12,
                                   atol=1e-14)


def test_predictions_are_clipped_to_y_bound_per_output():
    m = PrivateQuadraticFTL(2, horizon=50, epsilon=EPS, outputs=3, y_bound=0.5, seed=0)
    X, Y = _stream(0, 50, 2, 3)
    m.run(X, 0.5 * Y)
    x = np.array([50.0, -50.0])
    assert np.all(np.abs(m.predict_one(x)) <= 0.5)
    np.testing.assert_allclose(m.predict_one(x), np.clip(x @ m.model_weights, -0.5, 0.5))
    assert np.array_equal(m.predict_one(x, raw=True), x @ m.weights)


def test_shrinkage_of_matrix_releases_is_per_output():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 5, 3))
    v = np.array([0.5, 1.0, np.nan, 2.0])
    out = _shrink_rows(M, v, 4)
    for i, k in itertools.product(range(4), range(3)):
        np.testing.assert_array_equal(out[i, :, k], js_shrink(M[i, :, k], v[i], 4))


def test_labels_are_validated_and_clipped():
    m = PrivateQuadraticFTL(2, horizon=10, epsilon=EPS, outputs=3, seed=0)
    for bad in (1.0, [1.0, 0.0], [[1.0, 0.0, 0.0]], [np.nan, 0.0, 0.0]):
        with pytest.raises(InvalidInputError, match=r"^y must"):
            m.learn_one([0.1, 0.2], bad)
    for bad in (np.zeros(4), np.zeros((4, 2)), np.zeros((3, 3)), np.full((4, 3), np.inf)):
        with pytest.raises(InvalidInputError, match=r"^y must"):
            m.run(np.zeros((4, 2)), bad)
    with pytest.raises(InvalidInputError, match=r"^comparator must have shape \(2, 3\)"):
        m.run(np.zeros((4, 2)), np.zeros((4, 3)), comparator=np.zeros(2))
    assert m.t == 0 and m.n_clipped_ == 0  # nothing consumed
    m.learn_one([0.1, 0.2], [0.0, 3.0, 4.0])  # ||y|| = 5: scaled to 1, counted
    m.learn_one([3.0, 4.0], [0.0, 3.0, 4.0])  # both clipped: one row
    m.learn_one([0.1, 0.2], [0.0, 0.6, 0.8])  # on the bound: not clipped
    assert (m.t, m.n_clipped_) == (3, 2)
    trace = m.run(np.zeros((4, 2)), np.eye(4, 3) * 2, comparator=np.zeros((2, 3)))
    assert trace.n_clipped == 5 and trace.regret.shape == (4,)
    for kw, match in (({"outputs": 0}, "outputs must be"),
                      ({"outputs": 2, "fixes": False}, "outputs must be 1 with fixes=False"),
                      ({"outputs": 2, "calibration": "paper"}, "calibration='paper'")):
        with pytest.raises(InvalidInputError, match=match):
            PrivateQuadraticFTL(2, horizon=10, epsilon=EPS, **kw)


@pytest.mark.parametrize("how", ["state", "file"])
def test_state_round_trips_mid_stream(how):
    K, T, d = 3, 40, 4
    X, Y = _stream(9, T, d, K)
    m = PrivateQuadraticFTL(d, horizon=T, epsilon=EPS, outputs=K, noise_ridge=True, seed=4)
    m.run(X[:20], Y[:20])
    if how == "state":
        restored = PrivateQuadraticFTL.from_state(m.get_state())
    else:
        buf = io.BytesIO()
        write_state(buf, m)
        buf.seek(0)
        restored = read_state(buf)
    assert restored.outputs == K
    a, b = m.run(X[20:], Y[20:]), restored.run(X[20:], Y[20:])
    assert np.array_equal(_bits(a.weights), _bits(b.weights))
    assert np.array_equal(_bits(m.model_weights), _bits(restored.model_weights))


def test_secure_noise_and_window_counter_take_k_outputs():
    X, Y = _stream(2, 16, 3, 4)
    for kw in ({"noise": "secure"}, {"counter": "window", "counter_options": {"window": 16}}):
        m = PrivateQuadraticFTL(3, horizon=16, epsilon=EPS, outputs=4, seed=0, **kw)
        assert m.run(X, Y).weights.shape == (16, 3, 4)
        assert m.privacy.epsilon == pytest.approx(EPS, rel=0.02)
