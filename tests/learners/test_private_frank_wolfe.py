"""Tests of PrivateFrankWolfe: the noisy vertex selection, the score sensitivity, the
noiseless iterates and the accounting (its Privacy docstring).

One call with ``iterations=1`` is one noisy selection: ``mu_0 = 2/(0+2) = 1``, so the
returned theta *is* the selected vertex. With the squared loss, one example ``(x, -1)``
and ``start = 0`` the gradient of the sum is ``(0 - (-1)) x = x``, so the scores are
exactly ``V @ x``: the test fixes the scores and observes only the mechanism.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from scipy import integrate, stats

from dpol.learners.private_frank_wolfe import PrivateFrankWolfe
from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss
from dpol.sets import L1Ball, Simplex
from dpol.sets.convex_hull import ConvexHull

# ====================================================== (b) the law of one noisy selection
ALPHA = 1e-4  # false-alarm rate of each goodness-of-fit test at the true scale
DRAWS = 4000
SCALES_THAT_MUST_FAIL = (2 / 3, 3 / 2)
X_SEL = np.array([0.6, 0.2])  # scores on L1Ball(2)'s vertices e1, e2, -e1, -e2
SCORES = np.concatenate([X_SEL, -X_SEL])
B_SEL = 0.4  # score range / b = 3: every vertex has probability >= 0.027 (>= 110 counts)


def gumbel_probs(s: np.ndarray, b: float) -> np.ndarray:
    """Exponential mechanism: argmin(s - b G) = argmax(G - s/b) ~ softmax(-s/b)."""
    w = np.exp(-(s - s.min()) / b)
    return w / w.sum()


def laplace_probs(s: np.ndarray, b: float) -> np.ndarray:
    """Report-noisy-min: P(v) = int f(z) prod_{u != v} P(Z_u > s_v - s_u + z) dz.

    The integrand has kinks at z = 0 and z = s_u - s_v, given to quad as break points;
    beyond 60 b the Laplace tail is e^-60 ~ 1e-26.
    """
    lap = stats.laplace(scale=b)
    out = []
    for v in range(s.size):
        others = np.delete(s, v)

        def f(z, v=v, others=others):
            return lap.pdf(z) * np.prod(lap.sf(s[v] - others + z))

        kinks = sorted({0.0, *(others - s[v]).tolist()})
        out.append(integrate.quad(f, -60 * b, 60 * b, points=kinks, limit=200,
                                  epsabs=1e-14, epsrel=1e-12)[0])
    return np.array(out)


EXACT = {"gumbel": gumbel_probs, "laplace": laplace_probs}


def test_laplace_quadrature_matches_the_closed_form_for_two_vertices():
    # Z1 - Z2 for i.i.d. Laplace(b) has P(Z1 - Z2 > t) = e^(-t/b) (1/2 + t/(4b)), t >= 0:
    # an independent check of the integration used below
    b, t = 0.4, 0.3
    p = laplace_probs(np.array([0.0, t]), b)
    assert p[1] == pytest.approx(math.exp(-t / b) * (0.5 + t / (4 * b)), rel=1e-9)
    assert laplace_probs(SCORES, B_SEL).sum() == pytest.approx(1.0, abs=1e-9)


def selection_counts(noise: str, scale: float, draws: int, seed: int) -> np.ndarray:
    """How often each vertex of L1Ball(2) is selected by ``draws`` one-step fits."""
    fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(2), iterations=1, selection=noise)
    rng = np.random.default_rng(seed)
    X, y, start = X_SEL[None, :], np.array([-1.0]), np.zeros(2)
    np.testing.assert_array_equal(fw.vertices @ X_SEL, SCORES)
    counts = np.zeros(len(fw.vertices), dtype=np.int64)
    for _ in range(draws):
        theta = fw.fit(X, y, scale, rng, start=start)
        hit = np.flatnonzero(np.all(fw.vertices == theta, axis=1))
        assert hit.size == 1  # the iterate is exactly one vertex
        counts[hit[0]] += 1
    return counts


@pytest.mark.parametrize("noise", ["gumbel", "laplace"])
def test_selection_law_accepts_scale_b_and_rejects_two_thirds_and_three_halves(noise):
    counts = selection_counts(noise, B_SEL, DRAWS, seed=2024)
    k = counts.size
    # Pearson chi-square goodness of fit, k - 1 = 3 df (expected counts >= 110, so the
    # chi2 approximation holds); reject at level ALPHA
    assert stats.chisquare(counts, DRAWS * EXACT[noise](SCORES, B_SEL)).pvalue > ALPHA
    crit = stats.chi2.ppf(1 - ALPHA, k - 1)
    for m in SCALES_THAT_MUST_FAIL:
        q = EXACT[noise](SCORES, m * B_SEL)
        # power: under the true law p, the statistic against q is ~ noncentral chi2 with
        # lambda = DRAWS sum (p - q)^2 / q (gumbel: 680 at 2/3, 286 at 3/2; laplace: 548
        # and 252), so P(reject) > 1 - 1e-12 at ALPHA: the data can reject both
        p = EXACT[noise](SCORES, B_SEL)
        lam = DRAWS * float(np.sum((p - q) ** 2 / q))
        assert stats.ncx2.sf(crit, k - 1, lam) > 1 - 1e-12
        assert stats.chisquare(counts, DRAWS * q).pvalue < ALPHA


# ====================================================== (c) brute-force score sensitivity
LOSSES = [SquaredLoss(), LogisticLoss(), HingeLoss(h=0.5), HingeLoss(h=4.0),
          Regularized(SquaredLoss(), 0.1), Regularized(HingeLoss(h=0.5), 0.1)]
_HULL_RNG = np.random.default_rng(7)
DOMAINS = [L1Ball(2), L1Ball(3, 0.5), Simplex(3),
           ConvexHull(_HULL_RNG.uniform(-1.0, 1.0, size=(5, 2))),
           ConvexHull(_HULL_RNG.normal(size=(6, 3)) * 0.8)]


def iterates(V: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Vertices, edge midpoints and random convex combinations: points of conv(V)."""
    mids = [(V[i] + V[j]) / 2 for i in range(len(V)) for j in range(i + 1, len(V))]
    return np.vstack([V, *mids, rng.dirichlet(np.ones(len(V)), size=20) @ V])


def candidates(d: int, theta: np.ndarray, V: np.ndarray, rng: np.random.Generator):
    """Replacement examples with ||x|| <= 1, |y| <= 1: adversarial unit directions
    (axes, theta, vertices) with y in {-1, 0, 1}, plus random ones in and on the ball."""
    dirs = [np.eye(d), V, theta[None, :]]
    dirs = np.vstack([u / n for u in np.vstack(dirs) if (n := np.linalg.norm(u)) > 1e-12])
    dirs = np.vstack([dirs, -dirs])
    Xa = np.repeat(dirs, 3, axis=0)
    ya = np.tile([-1.0, 0.0, 1.0], len(dirs))
    g = rng.normal(size=(40, d))
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    g[20:] *= rng.uniform(size=(20, 1)) ** (1 / d)  # uniform in the ball
    return np.vstack([Xa, g]), np.concatenate([ya, rng.uniform(-1, 1, size=40)])


def test_library_gradient_matches_central_differences():
    # the brute force below uses loss.grad; cross-check it on every loss (C^1 losses,
    # step 1e-6: truncation ~1e-12, rounding ~1e-10, tolerance 1e-7)
    rng = np.random.default_rng(3)
    for loss in LOSSES:
        for _ in range(5):
            w, x, y = rng.uniform(-1, 1, 3), rng.uniform(-0.5, 0.5, 3), rng.uniform(-1, 1)
            h, eye = 1e-6, np.eye(3)
            fd = [(loss.value(w + h * e, x, y) - loss.value(w - h * e, x, y)) / (2 * h)
                  for e in eye]
            np.testing.assert_allclose(loss.grad(w, x, y), fd, atol=1e-7)


def test_score_sensitivity_bounds_every_replacement_and_is_attained():
    rng = np.random.default_rng(11)
    worst = {}
    for loss in LOSSES:
        for dom_i, domain in enumerate(DOMAINS):
            fw = PrivateFrankWolfe(loss, domain, iterations=1)
            V, d = fw.vertices, fw.vertices.shape[1]
            top = 0.0
            for theta in iterates(V, rng):
                Xc, yc = candidates(d, theta, V, rng)
                G = loss.grad(theta, Xc, yc)  # (M, d) per-example gradients (+ alpha theta)
                for n in (1, 2, 3):  # the other n - 1 examples are fixed random ones
                    rest = rng.normal(size=(n - 1, d)) / 2
                    base = loss.grad(theta, rest, rng.uniform(-1, 1, n - 1)).sum(axis=0) \
                        if n > 1 else np.zeros(d)
                    S = base + G  # gradient of the sum with candidate c as the n-th example
                    diff = S[:, None, :] - S[None, :, :]  # every replace-one pair (c, c')
                    top = max(top, float(np.abs(diff @ V.T).max()))
            assert top <= fw.score_sensitivity * (1 + 1e-12), (loss, domain, top)
            worst[(repr(loss), dom_i)] = top / fw.score_sensitivity
    # tight case of the 2 L max||v|| bound: linear zone of the hinge (theta = 0 or x
    # orthogonal to theta, y = +-1) gives g - g' = 2 e_i, and <R e_i, 2 e_i> = 2 L R
    # exactly, up to rounding; also Regularized: its n alpha theta cancels in g - g', so
    # Delta counts the data loss's L alone (counting alpha R too would give 1/1.05-1/1.1)
    for dom_i in (0, 1, 2):
        assert worst[(repr(HingeLoss(h=0.5)), dom_i)] >= 0.99
        assert worst[(repr(Regularized(HingeLoss(h=0.5), 0.1)), dom_i)] >= 0.99
    # not absurdly loose anywhere: the smallest ratios (~0.5) are the squared loss, plain
    # or Regularized (its replace-one gradient diameter is below 2 L: both gradients cannot
    # have norm L in opposite directions); 0.25 leaves a 2x margin
    assert min(worst.values()) >= 0.25, worst


# ====================================================== (d) zero noise: plain Frank-Wolfe
def _plain_frank_wolfe(kind, V, X, y, alpha, theta, k):
    """Textbook FW on sum_i phi(<theta, x_i>, y_i) + n alpha/2 ||theta||^2; returns iterates."""
    out = []
    for j in range(k):
        z = X @ theta
        dphi = z - y if kind == "squared" else -y / (1.0 + np.exp(y * z))
        g = X.T @ dphi + len(y) * alpha * theta
        s = V[int(np.argmin(V @ g))]
        theta = (1 - 2 / (j + 2)) * theta + 2 / (j + 2) * s
        out.append(theta)
    return out


@pytest.mark.parametrize("kind, loss, domain", [
    ("squared", SquaredLoss(), L1Ball(3, 0.7)),
    ("logistic", Regularized(LogisticLoss(), 0.1), Simplex(3)),
])
def test_zero_scale_runs_plain_frank_wolfe(kind, loss, domain):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 3)) / 2
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]  # within x_bound: fit clips
    y = np.clip(X @ [0.3, -0.2, 0.1] + 0.1 * rng.normal(size=20), -1, 1) if kind == "squared" \
        else np.sign(X @ [1.0, -1.0, 0.5] + 0.3 * rng.normal(size=20))
    V = PrivateFrankWolfe(loss, domain).vertices
    ref = _plain_frank_wolfe(kind, V, X, y, getattr(loss, "alpha", 0.0), V[0].copy(), 30)
    # fit with j iterations is the j-th iterate: every step, hence every vertex choice
    for j in range(1, 31):
        fw = PrivateFrankWolfe(loss, domain, iterations=j)
        a = fw.fit(X, y, 0.0, np.random.default_rng(0))
        b = fw.fit(X, y, 0.0, np.random.default_rng(1))  # no randomness is used
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, ref[j - 1], rtol=1e-12, atol=1e-15)
        assert fw.n_clipped_ == 0
    assert len({tuple(np.round(t, 9)) for t in ref}) > 10  # the iterates do move


def test_fit_clips_out_of_bound_examples_and_refuses_a_bad_scale():
    # fit is public: the score sensitivity holds for ||x|| <= x_bound, |y| <= y_bound only,
    # so out-of-bound examples are clipped and counted (a row 10 x longer would move the
    # scores 10 x more than the noise is sized for)
    fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(2), iterations=3)
    X, y = np.array([[6.0, 8.0], [0.3, 0.1]]), np.array([0.5, -3.0])
    clipped = fw.fit(X, y, 0.0, np.random.default_rng(0))
    inside = fw.fit(np.array([[0.6, 0.8], [0.3, 0.1]]), np.array([0.5, -1.0]), 0.0,
                    np.random.default_rng(0))
    np.testing.assert_array_equal(clipped, inside)
    assert fw.n_clipped_ == 2 and X[0, 0] == 6.0 and y[1] == -3.0  # caller's arrays kept
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale must"):
            fw.fit(X, y, bad, np.random.default_rng(0))
    with pytest.raises(ValueError, match="X must have shape"):
        fw.fit(np.ones((2, 3)), y, 0.0, np.random.default_rng(0))
    assert fw.n_clipped_ == 2  # refused calls count nothing


# ====================================================== accounting
DELTA = 1e-6


@pytest.mark.parametrize("noise", ["gumbel", "laplace"])
@pytest.mark.parametrize("sizes, epsilon", [([50], 0.5), ([50, 100, 200], 2.0)])
def test_calibrate_round_trips_within_its_tolerance(noise, sizes, epsilon):
    fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(3), iterations=20, selection=noise)
    b = fw.calibrate(sizes, epsilon, DELTA)
    # "smallest b to 1e-6 relative": b certifies epsilon, b / (1 + 1.01e-6) does not
    assert fw.epsilon(sizes, b, DELTA) <= epsilon
    assert fw.epsilon(sizes, b / (1 + 1.01e-6), DELTA) > epsilon


@pytest.mark.parametrize("noise, divisor", [("gumbel", 8.0), ("laplace", 2.0)])
def test_epsilon_is_min_of_basic_and_independent_zcdp_conversion(noise, divisor):
    # SquaredLoss on L1Ball(3, 1): L = 1 (1 + 1) = 2, max ||v|| = 1, so Delta = 4 and
    # eps0 = 2 Delta / b = 8 / b; k = iterations * number of calls
    fw = PrivateFrankWolfe(SquaredLoss(), L1Ball(3), iterations=10, selection=noise)
    assert fw.score_sensitivity == 4.0
    sizes = [30, 60]
    k = 20
    for b in (5.0, 50.0, 400.0, 5000.0):
        eps0 = 8.0 / b
        rho = k * eps0**2 / divisor  # BR -> eps0^2/8 zCDP; pure DP -> eps0^2/2 zCDP
        acc = dp_accounting.rdp.RdpAccountant()
        acc.compose(dp_accounting.ZCDpEvent(rho))
        zcdp = float(acc.get_epsilon(DELTA))
        assert zcdp <= rho + 2 * math.sqrt(rho * math.log(1 / DELTA))  # standard conversion
        got = fw.epsilon(sizes, b, DELTA)
        assert got <= k * eps0 * (1 + 1e-12)
        assert got == pytest.approx(min(k * eps0, zcdp), rel=1e-12)
        assert fw.epsilon(sizes, b, 0.0) == pytest.approx(k * eps0, rel=1e-12)
    assert fw.epsilon(sizes, 0.0, DELTA) == math.inf


def test_the_selection_noise_keeps_its_former_name():
    # selection= names report-noisy-min's noise (not a dpol.noise kind); noise= still works
    by_new = PrivateFrankWolfe(SquaredLoss(), L1Ball(3), selection="laplace")
    by_old = PrivateFrankWolfe(SquaredLoss(), L1Ball(3), noise="laplace")
    assert by_new.selection == by_old.selection == by_old.noise == "laplace"
    assert by_new.has_paper and not PrivateFrankWolfe(SquaredLoss(), L1Ball(3)).has_paper
    assert PrivateFrankWolfe(SquaredLoss(), L1Ball(3)).selection == "gumbel"
    with pytest.raises(ValueError, match="noise must be left out or equal selection='gumbel'"):
        PrivateFrankWolfe(SquaredLoss(), L1Ball(3), selection="gumbel", noise="laplace")
    with pytest.raises(ValueError, match="selection must be one of 'gumbel', 'laplace'"):
        PrivateFrankWolfe(SquaredLoss(), L1Ball(3), selection="gaussian")
    with pytest.raises(ValueError, match="noise must be one of 'gumbel', 'laplace'"):
        PrivateFrankWolfe(SquaredLoss(), L1Ball(3), noise="gaussian")
