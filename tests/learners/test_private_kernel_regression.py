"""NW (Nie & Wang) private online kernel least squares: errata, sensitivity, noise, contract.

Sources: NW (Nie & Wang 2017), docs/errata.md NW-1 to NW-4, and the exact sensitivity
derived in dpol.learners._kernel_sensitivity. Clean paths come from the non-private twins
(``epsilon=inf``); the reference recursion ``_dual_path`` below is an independent
implementation of NW eq. (3) in the dual (coefficient) representation with a Gram matrix,
so it checks the library's primal / lazily scaled implementations.
"""

from __future__ import annotations

import itertools
import math
import pickle
import warnings
import zlib

import dp_accounting
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from learner_cases import with_kernel
from scipy import stats
from scipy.optimize import minimize, minimize_scalar

from dpol.accounting import certified_epsilon, gaussian_epsilon, mu_star
from dpol.accounting.presets import nw_corrected_sensitivity, nw_printed_sensitivity
from dpol.errors import (
    ForkedStateWarning,
    HorizonExceededError,
    InvalidInputError,
    NonPrivateWarning,
    PaperCalibrationWarning,
)
from dpol.learners._kernels import FeatureMap, Kernel
from dpol.learners.private_kernel_regression import PrivateKernelRegression

INF = math.inf
GRID1 = np.linspace(0.0, 1.0, 401)[:, None]


# ====================================================================== helpers
def _task(T, seed=0):
    """The task of reproductions/nw_kernel.py: x ~ U[0, 1], y = 0.8 sin(2 pi x) + N(0,
    0.1^2) (clipped to M = 1 by the learner). Seed 0 with this draw order is the stream of
    the leak witness (docs/errata.md, NW-1)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, T)
    y = 0.8 * np.sin(2 * np.pi * x) + 0.1 * rng.normal(size=T)
    return x[:, None], y


def _make(T, *, epsilon=INF, delta=1e-5, **kw):
    kw = with_kernel({"bandwidth": 0.1, "theta": 0.75, "t0": 3, **kw})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        return PrivateKernelRegression(kw.pop("dim", 1), horizon=T, epsilon=epsilon,
                                       delta=delta, **kw)


def _path(learner, X, y):
    """Released outputs after steps 0..T, shape (T + 1, n_outputs)."""
    trace = learner.run(X, y)
    return np.vstack([trace.weights, trace.final_weights[None, :]])


def _dual_path(G, y, theta, t0, M=1.0):
    """Coefficients c^(t) of f_t = sum_i c_i K_{x_i} for t = 0..T (NW eq. 3, dual form)."""
    T = len(y)
    y = np.clip(y, -M, M)
    c, out = np.zeros(T), np.zeros((T + 1, T))
    for t in range(T):
        eta, lam = (t + t0) ** -theta, (t + t0) ** -(1 - theta)
        r = G[t, :t] @ c[:t] - y[t]
        c[:t] *= 1.0 - eta * lam
        c[t] = -eta * r
        out[t + 1] = c
    return out


def _chi2_accepts(E, sigma, level=1e-4):
    """Two-sided chi-square test of 'E has i.i.d. N(0, sigma^2) entries'.

    Q = sum(E^2) / sigma^2 ~ chi^2_n. For n >= 3000 the relative std of the empirical std is
    1/sqrt(2n) <= 1.3%, so the band (3.9 standard errors per side) is about +-5% on sigma,
    while 2/3x or 3/2x moves Q by a factor 2.25: always rejected.
    """
    q = float(np.sum(E**2)) / sigma**2
    return min(stats.chi2.cdf(q, E.size), stats.chi2.sf(q, E.size)) > level


# ====================================================================== published scalar
def test_published_scalar_leaks_a_noise_free_difference():
    # NW-1: Gaussian kernel width 0.1, theta 0.75, t0 3, T 300, the
    # neighbour flips the last label. The released function's difference f_A(0.25) -
    # f_A(0.6) is noise-free: the same for every noise draw, and different for D and D',
    # so a threshold at the midpoint tells the neighbours apart with probability 1.
    T, N = 300, 40
    X, y = _task(T)
    y2 = np.clip(y, -1, 1)
    y2[-1] = -y2[-1]
    diffs = {}
    for name, labels in (("D", y), ("D'", y2)):
        vals, firsts = [], []
        for s in range(N):
            with pytest.warns(PaperCalibrationWarning, match="not differentially private"):
                m = _make(T, epsilon=1.0, mode="published_scalar",
                          query_points=[[0.25], [0.6]], seed=s)
            m.run(X, labels)
            assert m.privacy.epsilon == INF  # honest: no guarantee at all
            vals.append(m.weights[0] - m.weights[1])
            firsts.append(m.weights[0])
        diffs[name] = np.array(vals)
        # the release is noisy (Laplace of scale C_T ~ 0.14: std of b ~ 0.2) ...
        assert np.std(firsts) > 0.05
        # ... yet the difference does not depend on the noise at all (only rounding)
        assert np.ptp(diffs[name]) < 1e-12
    assert diffs["D"][0] == pytest.approx(0.46139556, abs=5e-9)
    assert diffs["D'"][0] == pytest.approx(0.45992749, abs=5e-9)
    threshold = 0.5 * (0.46139556 + 0.45992749)
    assert np.all(diffs["D"] > threshold) and np.all(diffs["D'"] < threshold)


def test_published_scalar_printed_scale_and_kappa_slip_warns():
    # NW-2: the printed Laplace scale C_T at eps = 1 is 2 (1 + 1) / sqrt(302) = 0.23
    with pytest.warns(PaperCalibrationWarning):
        m = _make(300, epsilon=1.0, mode="published_scalar", calibration="paper",
                  query_points=[[0.5]])
    assert m.noise_std(300) == pytest.approx(4 / math.sqrt(302), rel=1e-12)
    assert m.noise_std(300) == pytest.approx(0.2302, abs=1e-4)
    # the printed C_t is kappa times smaller than the proven one; polynomial
    # (1 + x.x')^2 on the unit ball has kappa = 2, and the warning says so
    with pytest.warns(PaperCalibrationWarning, match="NW-2"):
        p = _make(50, epsilon=1.0, mode="published_scalar", calibration="paper",
                  kernel="polynomial", degree=2, coef0=1.0, t0=None, dim=2,
                  query_points=[[0.0, 0.0]])
    assert p.kappa == 2.0
    for t in (1, 20, 50):
        printed = nw_printed_sensitivity(t, 2.0, 1.0, 0.75, p.t0)
        assert p.noise_std(t) == pytest.approx(printed, rel=1e-12)
        proven = nw_corrected_sensitivity(t, 2.0, 1.0, 0.75, p.t0)
        assert proven == pytest.approx(2.0 * printed, rel=1e-12)


def test_published_scalar_laplace_scale_and_one_scalar_per_release():
    # E|b_t| = C_t / eps, b_t the same on the whole function, independent
    # across releases. |b| ~ Exp(scale): mean scale, sd scale / sqrt(N) = 1.6% at N = 4000;
    # accept within 5 sd (8%), so 2/3x (-33%) and 3/2x (+50%) are always rejected.
    T, N, eps = 3, 4000, 2.0
    X, y = _task(T, seed=3)
    Q = np.array([[0.1], [0.5], [0.9]])
    clean = _path(_make(T, mode="published_scalar", query_points=Q), X, y)
    b = np.empty((N, T + 1, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PaperCalibrationWarning)
        for s in range(N):
            m = _make(T, epsilon=eps, mode="published_scalar", query_points=Q, seed=s)
            b[s] = _path(m, X, y) - clean
    assert np.all(b[:, 0] == 0.0)  # f_0 = 0 carries no data: released without noise
    assert np.allclose(b, b[:, :, :1], atol=1e-12, rtol=0)  # one scalar per release
    for t in range(1, T + 1):
        scale = nw_corrected_sensitivity(t, 1.0, 1.0, 0.75, 3, tight=True) / eps
        assert m.noise_std(t) == pytest.approx(scale, rel=1e-12)
        mean_abs = float(np.mean(np.abs(b[:, t, 0])))
        assert abs(mean_abs / scale - 1) < 5 / math.sqrt(N)
        assert abs(mean_abs / (1.5 * scale) - 1) > 5 / math.sqrt(N)
        assert abs(mean_abs / (scale / 1.5) - 1) > 5 / math.sqrt(N)
    assert abs(np.corrcoef(b[:, 1, 0], b[:, 3, 0])[0, 1]) < 4 / math.sqrt(N)


# ====================================================================== sensitivity
def test_published_scalar_sup_norm_sensitivity_last_position_worst():
    # NW-3 (kappa = 1, theta 0.75, t0 3, T 300, 401-point grid): flipping y_i at i = T-1,
    # T/2, 5 moves f_T by at most NW's tight C_T in sup norm, the last position most (the
    # measured ratios: 0.126 / 0.024 / 0.004).
    T = 300
    X, y = _task(T)
    base = _make(T, mode="published_scalar", query_points=GRID1)
    f = _path(base, X, y)[-1]
    c_t = base.sensitivity(T)
    assert c_t == pytest.approx(nw_corrected_sensitivity(T, 1, 1, 0.75, 3, tight=True))
    ratios = []
    for i in (T - 1, T // 2, 5):
        y2 = np.clip(y, -1, 1)
        y2[i] = -y2[i]
        g = _path(_make(T, mode="published_scalar", query_points=GRID1), X, y2)[-1]
        ratios.append(float(np.max(np.abs(f - g))) / c_t)
    assert max(ratios) <= 1.0
    assert ratios[0] == pytest.approx(0.1258, abs=1e-3)  # the last position is the worst
    assert ratios[0] > ratios[1] > ratios[2]


def _reference_norms(T, kappa, M, theta, t0):
    """R_s >= ||w_s||, s = 0..T: the derivation's recursion (dpol.learners._kernel_sensitivity
    step 1), recomputed here."""
    R = [0.0]
    for s in range(T):
        m = s + t0
        eta, a, r = m**-theta, 1 - 1 / m, R[-1]
        R.append(min(a * r + eta * kappa * M,
                     a * math.sqrt(r * r + eta * M * M / (2 * a - eta * kappa**2))))
    return np.array(R)


def _reference_weights(T, kappa, M, theta, t0):
    """h_s, s = 0..T-1: a change at position s moves release t > s by <= h_s / (t-1+t0).

    Recomputed here from the derivation, not from the library: g(r) = max_c 2 (1 + r c)
    sqrt(1 - c^2) by numerical maximisation (not the closed-form maximiser)."""
    out = []
    for s, R in enumerate(_reference_norms(T, kappa, M, theta, t0)[:T]):
        r = kappa * R / M
        g = -minimize_scalar(lambda c, r=r: -2 * (1 + r * c) * math.sqrt(1 - c * c),
                             bounds=(0.0, 1.0), method="bounded",
                             options={"xatol": 1e-12}).fun
        out.append((s + t0) ** (1 - theta) * kappa * M * g)
    return np.array(out)


def _reference_mu(h, t0, stds):
    """max over s of sqrt(sum_{t > s} (Delta_t(s) / s_t)^2), by explicit loops."""
    T = len(h)
    return max(math.sqrt(sum((h[s] / ((t - 1 + t0) * stds[t - 1])) ** 2
                             for t in range(s + 1, T + 1))) for s in range(T))


def _nw_position_bound(s, t, kappa, M, theta, t0):
    """NW's (16) with Lemma 2, for a change at position s < t: the bound dpol tightened."""
    return 2 * kappa * M * (kappa**2 * (s + t0) ** (2 - 2 * theta)
                            + (s + t0) ** (1 - theta)) / (t - 1 + t0)


@pytest.mark.parametrize("kernel", ["gaussian", "polynomial"])
@pytest.mark.parametrize("where", ["last", "middle", "early"])
@pytest.mark.parametrize("change", ["flip", "random"])
def test_random_feature_weights_sensitivity_coupled_runs(kernel, where, change):
    # Exact sensitivity check of the released random-feature weights: for neighbouring
    # streams the clean ||w_t - w'_t||_2 never exceeds the declared sensitivity(t) at any
    # t, nor the position-dependent bound h_s / (t - 1 + t0) (recomputed independently);
    # sensitivity(t) is that bound at the last position s = t - 1, and below NW's own.
    T, d = 120, 2
    rng = np.random.default_rng(zlib.crc32(f"{kernel}/{where}/{change}".encode()))
    X = rng.normal(size=(T, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    y = rng.uniform(-1, 1, T)
    s = {"last": T - 1, "middle": T // 2, "early": 3}[where]
    X2, y2 = X.copy(), y.copy()
    if change == "flip":
        y2[s] = -y[s] if y[s] else 1.0
    else:
        X2[s] = rng.normal(size=d) * 0.5
        y2[s] = rng.choice([-1.0, 1.0])
    kw = {"dim": d, "kernel": kernel, "t0": None, "theta": 0.7, "bandwidth": 0.5}
    if kernel == "gaussian":
        kw["n_features"] = 64
    a = _make(T, **kw)
    h = _reference_weights(T, a.kappa, 1.0, 0.7, a.t0)
    D = np.linalg.norm(_path(a, X, y) - _path(_make(T, **kw), X2, y2), axis=1)
    assert np.all(D[: s + 1] == 0.0)  # releases before the change do not see it
    for t in range(s + 1, T + 1):
        assert D[t] <= a.sensitivity(t) * (1 + 1e-12)
        assert D[t] <= h[s] / (t - 1 + a.t0) * (1 + 1e-9)
    for t in (1, T // 2, T):
        assert a.sensitivity(t) == pytest.approx(h[t - 1] / (t - 1 + a.t0), rel=1e-9)
        assert a.sensitivity(t) < _nw_position_bound(t - 1, t, a.kappa, 1.0, 0.7, a.t0)


@pytest.mark.parametrize("kernel", ["gaussian", "polynomial"])
def test_random_feature_sensitivity_brute_force(kernel):
    # Brute force over a finite domain: every stream of length 3 over 8 elements (4 x
    # values, y = +-1), every pair at Hamming distance one. The largest ||w_t - w'_t||
    # over all pairs stays below sensitivity(t), and at t = 1 it attains it: w_0 = 0, so
    # the worst change flips y at an x with ||phi(x)|| = kappa, 2 kappa M t0^-theta.
    T = 3
    xs = [-1.0, -0.3, 0.2, 1.0]
    elements = [(x, v) for x in xs for v in (-1.0, 1.0)]
    kw = {"kernel": kernel, "t0": None, "bandwidth": 0.2}
    if kernel == "gaussian":
        kw["n_features"] = 32
    paths = {}
    for combo in itertools.product(range(len(elements)), repeat=T):
        X = np.array([[elements[i][0]] for i in combo])
        y = np.array([elements[i][1] for i in combo])
        paths[combo] = _path(_make(T, **kw), X, y)
    ref = _make(T, **kw)
    worst = np.zeros(T + 1)
    for combo, P in paths.items():
        for pos in range(T):
            for j in range(len(elements)):
                other = (*combo[:pos], j, *combo[pos + 1:])
                worst = np.maximum(worst, np.linalg.norm(P - paths[other], axis=1))
    ratio = worst[1:] / np.array([ref.sensitivity(t) for t in range(1, T + 1)])
    assert np.all(ratio <= 1.0 + 1e-12)
    assert ref.sensitivity(1) == pytest.approx(2 * ref.kappa * ref.t0**-0.75, rel=1e-12)
    assert ratio[0] == pytest.approx(1.0, rel=1e-9)


def _free_stream_gaps(p, T, s, state):
    """||w_t - w'_t||, t = 1..T, of the clean twin on x = sin(p[:T]), y = tanh(p[T:2T])
    and the neighbour whose element s is (sin p[2T], tanh p[2T+1]): bounded by design."""
    x, y = np.sin(p[:T]), np.tanh(p[T:2 * T])
    x2, y2 = x.copy(), y.copy()
    x2[s], y2[s] = math.sin(p[2 * T]), math.tanh(p[2 * T + 1])
    paths = []
    for xv, yv in ((x, y), (x2, y2)):
        with warnings.catch_warnings():  # a fork on purpose: neighbours on clean twins
            warnings.simplefilter("ignore", ForkedStateWarning)
            trace = PrivateKernelRegression.from_state(state).run(xv[:, None], yv)
        paths.append(np.vstack([trace.weights[1:], trace.final_weights[None, :]]))
    return np.linalg.norm(paths[0] - paths[1], axis=1)


@pytest.mark.parametrize(("kernel", "floor"), [("gaussian", 0.999), ("polynomial", 0.9)])
def test_sensitivity_and_transcript_mu_numerically_maximised(kernel, floor):
    # Nelder-Mead from 6 seeded starts over tiny streams (T = 3, |x| <= 1, |y| <= 1, any
    # position): the release's gap never exceeds sensitivity(T), the transcript's
    # sqrt(sum_t (gap_t / s_t)^2) never exceeds the mu its privacy event states, and the
    # search reaches both. Gaussian: D = 2 random features, one frequency |omega| = 3.86,
    # so x in [-1, 1] reaches every direction of the circle, as the worst case needs
    # (proof steps 1-4: attained); reached to 1e-8 in development, floor 0.999. Polynomial
    # (1 + x x')^2 in 1-d: features only on a curve, the last-position worst case is out
    # of reach (0.925 reached), the transcript's (a change at s = 0) is not (1.0).
    T = 3
    kw = ({"n_features": 2, "bandwidth": 0.3, "theta": 0.8} if kernel == "gaussian"
          else {"kernel": "polynomial", "theta": 0.75})
    state = _make(T, t0=None, **kw).get_state()
    m = _make(T, epsilon=1.0, t0=None, **kw)
    stds = np.array([m.noise_std(t) for t in (1, 2, 3)])
    mu = 1.0 / m.dp_event().noise_multiplier
    assert mu == pytest.approx(_reference_mu(_reference_weights(T, m.kappa, 1.0, kw["theta"],
                                                                m.t0), m.t0, stds), rel=1e-9)
    rng = np.random.default_rng(0)
    best = np.zeros(2)
    options = {"maxiter": 1500, "xatol": 1e-10, "fatol": 1e-14}
    for k in range(6):
        p0 = rng.uniform(-3, 3, 2 * T + 2)
        last = minimize(lambda p: -_free_stream_gaps(p, T, T - 1, state)[-1], p0,
                        method="Nelder-Mead", options=options)
        joint = minimize(lambda p, s=k % T: -np.sum((_free_stream_gaps(p, T, s, state)
                                                    / stds) ** 2), p0,
                         method="Nelder-Mead", options=options)
        best = np.maximum(best, [-last.fun / m.sensitivity(T), math.sqrt(-joint.fun) / mu])
    assert np.all(best <= 1 + 1e-9), best
    assert best[1] >= 0.999 and best[0] >= floor, best


@settings(max_examples=40, deadline=None, derandomize=True)
@given(T=st.integers(1, 25), theta=st.floats(0.55, 0.95), data=st.data(),
       kernel=st.sampled_from(["gaussian", "polynomial"]))
def test_sensitivity_property_random_neighbours(T, theta, data, kernel):
    # any stream in the ball, any position, any replacement: ||w_t - w'_t|| <= sens(t),
    # and the transcript moves by at most the mu of the privacy event
    d = 2
    coord = st.floats(-1.0, 1.0)
    X = np.array(data.draw(st.lists(st.tuples(coord, coord), min_size=T, max_size=T)))
    y = np.array(data.draw(st.lists(coord, min_size=T, max_size=T)))
    s = data.draw(st.integers(0, T - 1))
    X2, y2 = X.copy(), y.copy()
    X2[s], y2[s] = data.draw(st.tuples(coord, coord)), data.draw(coord)
    kw = {"dim": d, "kernel": kernel, "theta": theta, "t0": None, "bandwidth": 0.3}
    if kernel == "gaussian":
        kw["n_features"] = 16
    a = _make(T, **kw)
    D = np.linalg.norm(_path(a, X, y) - _path(_make(T, **kw), X2, y2), axis=1)
    assert np.all(D[1:] <= np.array([a.sensitivity(t) for t in range(1, T + 1)])
                  * (1 + 1e-12))
    p = _make(T, epsilon=1.0, **kw)
    stds = np.array([p.noise_std(t) for t in range(1, T + 1)])
    assert math.sqrt(np.sum((D[1:] / stds) ** 2)) <= (1 + 1e-12) / p.dp_event().noise_multiplier


def test_query_points_sensitivity_uses_gram_eigenvalue():
    # f_t(U) moves by <= Delta_t sqrt(lambda_max K(U, U)) in l2 (Delta_t: the RKHS bound,
    # the random-feature sensitivity for the same kappa), <= sqrt(q) kappa Delta_t
    T = 150
    X, y = _task(T, seed=2)
    U = np.linspace(0, 1, 9)[:, None]
    a = _make(T, mode="query_points", query_points=U)
    h = _reference_weights(T, 1.0, 1.0, 0.75, 3)
    lmax = float(np.linalg.eigvalsh(Kernel("gaussian", 0.1)(U, U))[-1])
    for t in (1, 75, 150):
        delta_h = h[t - 1] / (t - 1 + 3)
        assert a.sensitivity(t) == pytest.approx(delta_h * math.sqrt(lmax), rel=1e-9)
        assert a.sensitivity(t) < 3 * delta_h  # sqrt(q) kappa Delta_t, q = 9
    y2 = np.clip(y, -1, 1)
    y2[-1] = -y2[-1]
    D = np.linalg.norm(_path(a, X, y) - _path(_make(T, mode="query_points", query_points=U),
                                              X, y2), axis=1)
    assert D[-1] <= a.sensitivity(T) and D[-1] > 0.0


# ====================================================================== noise and budget
@pytest.mark.parametrize("mode", ["random_features", "query_points"])
def test_gaussian_noise_scale_accepts_right_and_rejects_wrong(mode):
    # noise = release - clean twin at t = 1, 6, 12: i.i.d. N(0, noise_std(t)^2); 2/3x and
    # 3/2x rejected (see _chi2_accepts); mean within 4 standard errors; independent across
    # steps (|corr| < 4 / sqrt(n)). Catches a wrong std, noise fed back into the iterate
    # (deviation would compound), noise reused across steps, noise on the f_0 release.
    T, N = 12, 400
    X, y = _task(T, seed=7)
    kw = ({"n_features": 16} if mode == "random_features" else
          {"query_points": np.linspace(0, 1, 8)[:, None]})
    clean = _path(_make(T, mode=mode, **kw), X, y)
    noise = np.stack([_path(_make(T, epsilon=1.0, mode=mode, seed=s, **kw), X, y) - clean
                      for s in range(N)])
    ref = _make(T, epsilon=1.0, mode=mode, **kw)
    assert np.all(noise[:, 0] == 0.0)
    for t in (1, 6, 12):
        sigma, E = ref.noise_std(t), noise[:, t]
        assert _chi2_accepts(E, sigma), (t, float(E.std()), sigma)
        assert not _chi2_accepts(E, 1.5 * sigma)
        assert not _chi2_accepts(E, sigma / 1.5)
        assert abs(float(E.mean())) < 4 * sigma / math.sqrt(E.size)
    a, b = noise[:, 1].ravel() / ref.noise_std(1), noise[:, 12].ravel() / ref.noise_std(12)
    assert abs(float(np.corrcoef(a, b)[0, 1])) < 4 / math.sqrt(a.size)


@pytest.mark.parametrize(("eps", "delta", "T"), [(1.0, 1e-5, 1000), (0.1, 1e-6, 50),
                                                  (5.0, 1e-5, 3000)])
@pytest.mark.parametrize("mode", ["random_features", "query_points"])
def test_whole_transcript_mu_is_mu_star(eps, delta, T, mode):
    # The noise follows the exact sensitivities (below NW's corrected C_t with kappa^2,
    # NW (16)) and covers the whole transcript: mu = max_s sqrt(sum_{t > s} (Delta_t(s) /
    # s_t)^2), recomputed here by loops, equals mu*(eps, delta) to 1e-9; the privacy event
    # is that one Gaussian, and dp-accounting certifies (eps, delta). The shape s_t ~ sens_t
    # with J = s_t mu* / sens_t below sqrt(T) (every release's own worst case).
    kw = {"n_features": 8} if mode == "random_features" else {"query_points": [[0.5]]}
    m = _make(T, epsilon=eps, delta=delta, mode=mode, theta=0.8, t0=None, **kw)
    sens = np.array([m.sensitivity(t) for t in range(1, T + 1)])
    stds = np.array([m.noise_std(t) for t in range(1, T + 1)])
    h = _reference_weights(T, 1.0, 1.0, 0.8, m.t0)  # one query point: lambda_max = 1
    for t in (1, T // 2, T):
        assert sens[t - 1] == pytest.approx(h[t - 1] / (t - 1 + m.t0), rel=1e-9)
        c_t = nw_corrected_sensitivity(t, 1.0, 1.0, 0.8, m.t0, tight=True)
        assert sens[t - 1] < c_t <= nw_corrected_sensitivity(t, 1.0, 1.0, 0.8, m.t0)
    mu = _reference_mu(h, m.t0, stds)
    assert mu == pytest.approx(mu_star(eps, delta), rel=1e-9)
    assert np.allclose(stds / sens, stds[0] / sens[0], rtol=1e-12)
    assert stds[0] / sens[0] * mu_star(eps, delta) < math.sqrt(T) / 1.2
    assert m.privacy.epsilon == pytest.approx(eps, rel=1e-9)
    event = m.dp_event()
    assert isinstance(event, dp_accounting.GaussianDpEvent)
    assert event.noise_multiplier == pytest.approx(1 / mu, rel=1e-9)
    assert gaussian_epsilon(event.noise_multiplier, delta) == pytest.approx(eps, rel=1e-6)
    assert certified_epsilon(event, delta) == pytest.approx(eps, abs=3e-3 + 3e-3 * eps)


def test_polynomial_kernel_uses_kappa_squared():
    # kappa = 2 for (1 + x.x')^2 on the unit ball; the sensitivity is the exact bound with
    # kappa = 2 (features of norm up to kappa, iterate terms with kappa^2), below NW's
    # proven C_t / kappa (kappa^2, not the printed kappa form)
    m = _make(40, epsilon=1.0, kernel="polynomial", dim=2, t0=None)
    assert m.kappa == 2.0 and m.t0 ** 0.75 >= 5.0 > (m.t0 - 1) ** 0.75
    h = _reference_weights(40, 2.0, 1.0, 0.75, m.t0)
    for t in (1, 40):
        assert m.sensitivity(t) == pytest.approx(h[t - 1] / (t - 1 + m.t0), rel=1e-9)
        assert m.sensitivity(t) < nw_corrected_sensitivity(t, 2.0, 1.0, 0.75, m.t0,
                                                           tight=True) / 2.0
        # A_t = (1 - eta lam) I - eta phi phi^T is PSD with norm 1 - eta lam
        n = t - 1 + m.t0
        assert 1 - 1 / n - n**-0.75 * m.kappa**2 >= 0.0
    assert m.sensitivity(1) == pytest.approx(2 * 2.0 * m.t0**-0.75, rel=1e-12)  # w_0 = 0


# ====================================================================== exactness
def test_zero_noise_random_features_equal_dual_recursion():
    # epsilon = inf: the released weights are exactly eq. (3) with K_phi = phi phi^T,
    # computed here in the dual: w_t = Phi^T c^(t); Lemma 2 ||w_t|| <= kappa M / lambda_t
    T = 200
    X, y = _task(T, seed=4)
    m = _make(T, n_features=40)
    W = _path(m, X, y)
    Phi = FeatureMap(Kernel("gaussian", 0.1), 1, 40, feature_seed=0)(X)
    C = _dual_path(Phi @ Phi.T, y, 0.75, 3)
    np.testing.assert_allclose(W, C @ Phi, rtol=1e-10, atol=1e-13)
    lam = (np.arange(T + 1) + 3.0) ** -0.25
    norms = np.linalg.norm(W, axis=1)
    assert np.all(norms <= 1.0 / lam)
    assert np.max(norms * lam) < 0.5  # Lemma 2's kappa M / lambda_t is loose
    # the tighter recursive bound R_t of the sensitivity derivation (step 1) holds too
    R = _reference_norms(T, 1.0, 1.0, 0.75, 3)
    assert np.all(norms <= R * (1 + 1e-12)) and R[-1] < 0.3 / lam[-1]


@pytest.mark.parametrize("mode", ["query_points", "published_scalar"])
def test_zero_noise_exact_kernel_modes_equal_dual_recursion(mode):
    T = 150
    X, y = _task(T, seed=5)
    U = np.linspace(0, 1, 11)[:, None]
    m = _make(T, mode=mode, query_points=U)
    F = _path(m, X, y)
    k = Kernel("gaussian", 0.1)
    C = _dual_path(k(X, X), y, 0.75, 3)
    np.testing.assert_allclose(F, C @ k(X, U), rtol=1e-10, atol=1e-13)
    f_037 = float(C[-1] @ k(X, np.array([[0.37]]))[:, 0])
    expected = f_037 if mode == "published_scalar" else F[-1, 4]  # nearest point 0.4
    assert m.predict_one([0.37]) == pytest.approx(expected, rel=1e-10)
    # NW Lemma 2: ||f_t||_K = sqrt(c^T K c) <= kappa M / lambda_t
    norms = np.sqrt(np.einsum("ti,ij,tj->t", C, k(X, X), C))
    assert np.all(norms <= (np.arange(T + 1) + 3.0) ** 0.25)


def test_polynomial_random_features_are_the_exact_kernel():
    # the polynomial feature map is exact: random_features and query_points modes compute
    # the same function
    T = 60
    rng = np.random.default_rng(6)
    X = rng.uniform(-0.6, 0.6, (T, 2))
    y = X @ [0.5, -0.4] + X[:, 0] * X[:, 1]
    U = rng.uniform(-0.6, 0.6, (5, 2))
    kw = {"kernel": "polynomial", "degree": 3, "coef0": 0.5, "dim": 2, "t0": None}
    a, b = _make(T, **kw), _make(T, mode="query_points", query_points=U, **kw)
    a.run(X, y)
    b.run(X, y)
    np.testing.assert_allclose(a.features(U) @ a.weights, b.weights, rtol=1e-10)


def test_features_are_public_and_independent_of_the_noise_seed():
    # The feature map depends on the public feature_seed only, and the (secret) noise on
    # seed only: publishing the map reveals nothing about the noise, even when both seeds
    # are the same integer (a shared stream would make the noise a function of omega).
    X, y = _task(3, seed=1)
    kw = {"epsilon": 1.0, "n_features": 8}
    a, b = _make(3, seed=0, **kw), _make(3, seed=123, **kw)
    c = _make(3, seed=0, feature_seed=1, **kw)
    np.testing.assert_array_equal(a.features(X), b.features(X))
    assert not np.allclose(a.features(X), c.features(X))
    noise = {}
    for name, m, fs in (("a", a, 0), ("b", b, 0), ("c", c, 1)):
        clean = _path(_make(3, n_features=8, feature_seed=fs), X, y)
        noise[name] = (_path(m, X, y) - clean)[1:] / m.noise_std(1)
    np.testing.assert_allclose(noise["a"][0], noise["c"][0], rtol=1e-9, atol=1e-9)
    assert not np.allclose(noise["a"], noise["b"])
    omega = a._phi.omega.ravel() * 0.1  # the standard normals behind the public map
    assert not np.allclose(np.abs(noise["a"][0, :4]), np.abs(omega[:4]))


# ====================================================================== contract
@pytest.mark.parametrize("mode", ["random_features", "query_points", "published_scalar",
                                  "polynomial"])
def test_run_equals_learn_one_loop_and_checkpoints(mode):
    T = 40
    X, y = _task(T, seed=8)
    y[3] = 1.7  # clipped and counted
    kw = {"query_points": np.linspace(0, 1, 6)[:, None]}
    if mode == "polynomial":
        kw = {"kernel": "polynomial", "t0": None}
    else:
        kw["mode"] = mode
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PaperCalibrationWarning)
        a, b, c = (_make(T, epsilon=1.0, seed=4, **kw) for _ in range(3))
    trace = a.run(X, y)
    looped, preds, model = [], [], []
    for x, v in zip(X, y, strict=True):
        looped.append(b.weights)
        preds.append(b.predict_one(x, raw=True))
        model.append(b.predict_one(x))
        b.learn_one(x, v)
    np.testing.assert_allclose(trace.weights, np.array(looped), rtol=1e-12, atol=1e-14)
    if trace.model_predictions is not None:  # random features: the averaged model's
        np.testing.assert_allclose(trace.model_predictions, model, rtol=1e-12, atol=1e-14)
        assert not np.allclose(model, preds)
    else:
        assert model == preds
    np.testing.assert_allclose(trace.final_weights, b.weights, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.predictions, preds, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.losses, 0.5 * (np.array(preds) - np.clip(y, -1, 1)) ** 2,
                               rtol=1e-12)
    assert a.n_clipped_ == b.n_clipped_ == 1
    c.run(X[:17], y[:17])
    restored = pickle.loads(pickle.dumps(c))
    np.testing.assert_allclose(restored.run(X[17:], y[17:]).weights, trace.weights[17:],
                               rtol=1e-12, atol=1e-14)


def test_comparators_and_regret():
    T = 30
    X, y = _task(T, seed=9)
    m = _make(T, epsilon=1.0, seed=1, n_features=8)
    h = lambda Z: 0.8 * np.sin(2 * np.pi * Z[:, 0])  # noqa: E731
    trace = m.run(X, y, comparator=h)
    np.testing.assert_allclose(trace.regret, np.cumsum(trace.losses - 0.5 * (h(X) - y) ** 2))
    lin = _make(T, epsilon=1.0, seed=1, n_features=8).run(X, y, comparator=[0.3])
    np.testing.assert_allclose(lin.regret, np.cumsum(lin.losses - 0.5 * (0.3 * X[:, 0] - y)
                                                     ** 2))


def test_non_private_twin_warns_and_has_no_randomness():
    X, y = _task(20)
    for mode in ("random_features", "query_points", "published_scalar"):
        kw = {"mode": mode, "bandwidth": 0.1, "query_points": [[0.2], [0.7]]}
        if mode == "random_features":
            kw.pop("query_points")
        with pytest.warns(NonPrivateWarning):
            a = PrivateKernelRegression(1, horizon=20, epsilon=INF, seed=0, **with_kernel(kw))
        with pytest.warns(NonPrivateWarning):
            b = PrivateKernelRegression(1, horizon=20, epsilon=INF, seed=9, **with_kernel(kw))
        assert not a.privacy.is_private and isinstance(a.dp_event(),
                                                       dp_accounting.NonPrivateDpEvent)
        np.testing.assert_array_equal(a.run(X, y).weights, b.run(X, y).weights)


def test_query_points_predict_one_is_the_nearest_release():
    m = _make(10, epsilon=1.0, mode="query_points", query_points=[[0.0], [0.5], [1.0]],
              seed=2)
    X, y = _task(10)
    m.run(X, y)
    w = m.weights
    assert [m.predict_one([v]) for v in (-3.0, 0.2, 0.3, 0.99)] == [w[0], w[0], w[1], w[2]]


# ====================================================================== bad input
@pytest.mark.parametrize(("kw", "match"), [
    ({"theta": 0.5}, "^theta must be > 0.5"), ({"theta": 1.0}, "^theta must be < 1.0"),
    ({"t0": 2.0}, r"^t0 must satisfy t0\^theta >= kappa\^2 \+ 1 = 2"),
    ({"mode": "scalar"}, "^mode must be one of"), ({"kernel": "rbf"}, "^kernel must be one"),
    ({"bandwidth": 0.0}, "^bandwidth must be > 0"),
    ({"n_features": 7}, "^n_features must be even"),
    ({"kernel": "polynomial", "n_features": 8, "t0": None}, "^n_features must be None"),
    ({"kernel": "polynomial", "degree": 0}, "^degree must be an integer >= 1"),
    ({"kernel": "polynomial", "coef0": -1.0}, "^coef0 must be >= 0"),
    ({"mode": "query_points"}, "^query_points must be given"),
    ({"mode": "query_points", "query_points": [[np.nan]]}, "^query_points must contain only"),
    ({"mode": "query_points", "query_points": [[0.1, 0.2]]},
     r"^query_points must have shape \(n, 1\)"),
    ({"calibration": "paper"}, "^calibration must be 'tight' with mode='random_features'"),
    ({"mode": "query_points", "query_points": [[0.1]], "calibration": "paper"},
     "^calibration must be 'tight'"),
    ({"mode": "query_points", "query_points": [[0.0]], "kernel": "polynomial", "coef0": 0.0},
     r"^query_points must give a nonzero Gram matrix K\(U, U\)"),  # f_t(U) = 0 always
    ({"neighbouring": "add_remove"}, "^neighbouring must be 'replace_one'"),
    ({"delta": 0.0}, "^delta must be > 0"),
    ({"feature_seed": -1}, "^feature_seed must be an integer >= 0"),
])
def test_bad_arguments_name_the_argument(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        PrivateKernelRegression(1, horizon=10, epsilon=1.0, delta=kw.pop("delta", 1e-5),
                                **with_kernel({"t0": 3, "theta": 0.75, **kw}))


@pytest.mark.parametrize("mode", ["random_features", "query_points"])
def test_bad_data_raises_and_consumes_nothing(mode):
    X, y = _task(10)
    kw = {} if mode == "random_features" else {"query_points": [[0.1], [0.9]]}
    m = _make(10, epsilon=1.0, mode=mode, seed=3, n_features=8, **kw)
    m.learn_one(X[0], y[0])
    state = pickle.dumps(m)
    for bad in ([np.nan], [1.0, 2.0], "abc", None, [[0.1]]):
        with pytest.raises(InvalidInputError, match=r"^x must .*; got "):
            m.learn_one(bad, 0.0)
        with pytest.raises(InvalidInputError, match=r"^x must .*; got "):
            m.predict_one(bad)
    with pytest.raises(InvalidInputError, match=r"^y must .*; got "):
        m.learn_one(X[1], float("inf"))
    bad_X = X.copy()
    bad_X[4, 0] = np.nan
    with pytest.raises(InvalidInputError, match=r"^X must contain only finite values"):
        m.run(bad_X, y)
    with pytest.raises(InvalidInputError, match=r"^y must have shape \(10,\)"):
        m.run(X, y[:-1])
    with pytest.raises(InvalidInputError, match=r"^comparator must have shape \(1,\)"):
        m.run(X[:3], y[:3], comparator=[1.0, 2.0])
    with pytest.raises(InvalidInputError, match=r"^comparator\(X\) must have shape \(3,\)"):
        m.run(X[:3], y[:3], comparator=lambda Z: np.zeros(2))
    with pytest.raises(HorizonExceededError):
        m.run(X, y)
    with pytest.raises(InvalidInputError, match=r"^t must be <= horizon = 10"):
        m.noise_std(11)
    with pytest.raises(InvalidInputError, match=r"^t must be an integer >= 1"):
        m.sensitivity(0)
    assert pickle.dumps(m) == state  # nothing consumed
    m.run(X[1:], y[1:])
    with pytest.raises(HorizonExceededError):
        m.learn_one(X[0], y[0])
    assert m.t == 10


# ====================================================================== utility
def test_error_falls_with_t_at_large_epsilon_and_with_epsilon():
    # Held-out generalisation error E(f) = mean (f(x) - y)^2 of the released model, the
    # study's task. At a large epsilon it falls with t (at t = T it is under half of t = 50 and
    # under the trivial predict-0 error E y^2 ~ 0.33); non-private (theta 0.6:
    # error at t = 2000 at most half that at t = 50); at t = T it falls as epsilon grows.
    T = 2000
    X, y = _task(T, seed=11)
    Xh, yh = _task(3000, seed=12)
    trivial = float(np.mean(yh**2))

    def errors(epsilon, theta, seed):
        m = _make(T, epsilon=epsilon, theta=theta, t0=None, n_features=128, seed=seed)
        W = _path(m, X, y)
        P = m.features(Xh) @ W[[50, T]].T
        return np.mean((P - yh[:, None]) ** 2, axis=0)

    early, late = errors(1000.0, 0.8, 0)
    assert late < 0.5 * early and late < 0.5 * trivial
    twin = errors(INF, 0.6, 0)
    clean = _make(T, theta=0.6, t0=None, n_features=128)
    W = _path(clean, X, y)
    first, last = np.mean((clean.features(Xh) @ W[[50, T]].T - yh[:, None]) ** 2, axis=0)
    assert last <= 0.5 * first and twin[1] == pytest.approx(last)
    # at t = T a prediction carries noise of variance s_T^2 = 4.7 / 0.51 / 0.009 at eps 0.3
    # / 1 / 10 (||phi|| = 1) over a clean error ~0.1: the seed means fall with epsilon
    finals = [np.mean([errors(eps, 0.8, s)[1] for s in range(3)]) for eps in (0.3, 1.0, 10.0)]
    assert finals[0] > finals[1] > finals[2]


def test_model_is_the_inverse_variance_mean_of_the_releases_clipped_to_y_bound():
    # predict_one is phi(x) . M clipped to [-M, M], M the mean of the releases after steps
    # 1..T weighted by 1 / sens_t^2 (the noises' inverse variances up to a constant);
    # raw=True the last release; "last" the last release clipped; "shrink" the
    # James-Stein factor of the mean's noise variance sum a_t^2 s_t^2 / (sum a_t)^2
    T = 60
    X, y = _task(T, seed=3)
    m = _make(T, epsilon=1.0, seed=2, n_features=16)
    W = _path(m, X, y)[1:]
    a = np.array([m.sensitivity(t) for t in range(1, T + 1)]) ** -2.0
    mean = a @ W / a.sum()
    np.testing.assert_allclose(m.model_weights, mean, rtol=1e-12)
    F = m.features(np.array([[0.1], [0.4], [0.8]]))
    got = [m.predict_one(x) for x in ([0.1], [0.4], [0.8])]
    np.testing.assert_allclose(got, np.clip(F @ mean, -1.0, 1.0), rtol=1e-12)
    assert m.predict_one([0.4], raw=True) == pytest.approx(F[1] @ W[-1], rel=1e-12)
    m.postprocess = "last"
    assert m.predict_one([0.4]) == pytest.approx(np.clip(F[1] @ W[-1], -1, 1), rel=1e-12)
    m.postprocess = "shrink"
    s2 = np.array([m.noise_std(t) for t in range(1, T + 1)]) ** 2
    np.testing.assert_array_equal(m._release_noise_variance(np.arange(1, T + 1)), s2)
    var = (a**2 @ s2) / a.sum() ** 2
    factor = max(0.0, 1.0 - 16 * var / (mean @ mean))
    np.testing.assert_allclose(m.model_weights, factor * mean, rtol=1e-12, atol=1e-15)


def test_the_registry_builds_the_kernel_learner_with_shrinkage():
    # its releases state their noise variance, so make_learner accepts postprocess="shrink"
    from dpol.adapters import make_learner

    m = make_learner("kernel", 1, horizon=30, epsilon=0.1, seed=0, postprocess="shrink")
    X, y = _task(30, seed=1)
    trace = m.run(X, y)
    assert m.postprocess == "shrink" and np.all(np.isfinite(trace.model_predictions))
    assert np.linalg.norm(m.model_weights) < np.linalg.norm(m._average.mean())
