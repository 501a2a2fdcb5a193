"""Secure noise for the counters with real weights: Honaker tree, Toeplitz, BLT, dense
mean-optimal, banded Toeplitz, banded matrix.

In secure mode their releases must be post-processing of exact grid values: the noisy
nodes (Honaker) or the noisy grid-rounded encoder w = round_g(C x) + z (the matrix
counters).
The tests reconstruct those noisy values from recorded noise, check that they lie on the
grid, that neighbours' noise-free values differ by grid multiples (shared support), and
that a neighbouring stream fed the lattice-shifted noise that gives it the *same* noisy
values releases bit for bit the same numbers: the releases depend on the noisy values
only. Statistical tests replace the OS generator by a seeded ``random.Random``.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats
from variance_checks import check_same_variance

from dpol.counters import (
    BandedMatrixCounter,
    BandedToeplitzCounter,
    BltCounter,
    DenseMeanCounter,
    HonakerTreeCounter,
    ToeplitzCounter,
)
from dpol.counters._secure_release import float_dot_error
from dpol.counters.strategies._bits import trailing_zeros
from dpol.errors import InvalidInputError, NonPrivateWarning

ALPHA = 1e-4
COUNTERS = [HonakerTreeCounter, ToeplitzCounter, BltCounter, DenseMeanCounter,
            BandedToeplitzCounter, BandedMatrixCounter]
MATRIX = COUNTERS[1:]
#: constructor keywords: a band narrower than every horizon here, so it is truncated
EXTRA = {BandedToeplitzCounter: {"bands": 3}, BandedMatrixCounter: {"bands": 3}}
#: counters whose secure mode keeps only the last b rounded elements
BANDED = (BandedToeplitzCounter, BandedMatrixCounter)


@pytest.fixture
def seeded_os_rng(monkeypatch):
    """The samplers look the OS generator up at call time: swap in a seeded one."""
    import dpol.noise.discrete as discrete

    monkeypatch.setattr(discrete, "OS_RNG", random.Random(20261122))


def build(cls, horizon, dim=1, **kwargs):
    return cls(horizon, dim, **EXTRA.get(cls, {}), **kwargs)


def make(cls, horizon=16, dim=3, **kwargs):
    kwargs.setdefault("epsilon", 1.0)
    kwargs.setdefault("delta", 1e-5)
    return build(cls, horizon, dim, noise="secure", **kwargs)


def encoder_row(c, t: int) -> tuple[np.ndarray, int]:
    """(weights, first): E_t = weights @ x[first:t], the counter's float expression."""
    if isinstance(c, DenseMeanCounter):
        return c.strategy.encoder[t - 1, :t], 0
    if isinstance(c, BandedMatrixCounter):  # row t of the band: C[t, t - j], j < b
        band = c.strategy.band[t - 1, :t][::-1]
        return band, t - band.size
    band = c.strategy.coefficients[:t][::-1]  # Toeplitz and BLT: all of c; banded: b
    return band, t - band.size


def clean_values(c, rounded: np.ndarray) -> list[np.ndarray]:
    """Noise-free values noised at each step (one array per draw call), from rounded rows.

    Honaker: step t noises the nodes (t - 2^k, t], k = 0..tz(t) (exact grid sums).
    Matrix counters: round_g((C x)_t) with the counter's float expression.
    """
    g = c.grid
    sums = np.vstack([np.zeros((1, c.dim)), np.cumsum(rounded, axis=0)])
    out = []
    for t in range(1, len(rounded) + 1):
        if isinstance(c, HonakerTreeCounter):
            ks = range(int(trailing_zeros(t)) + 1)
            out.append(np.stack([sums[t] - sums[t - 2**k] for k in ks]))
        else:
            weights, first = encoder_row(c, t)
            enc = weights @ rounded[first:t]
            out.append((np.rint(enc / g) * g)[None, :])
    return out


def rounded_encoder(c, x: np.ndarray, grid: float) -> np.ndarray:
    """round_grid of the counter's float encoder of x, its elements on the counter's grid."""
    rounded = np.rint(x / c.grid) * c.grid
    rows = [encoder_row(c, t) for t in range(1, len(x) + 1)]
    enc = np.stack([w @ rounded[first:t] for t, (w, first) in enumerate(rows, 1)])
    return np.rint(enc / grid) * grid


def run_recorded(c, values, forced=None):
    """Run the add loop, recording (or forcing) every noise draw."""
    draws = []
    original = c._source.draw

    def draw(n):
        rows = original(n) if forced is None else forced[len(draws)]
        draws.append(rows.copy())
        return rows.copy()

    c._source.draw = draw
    out = np.stack([c.add(v) for v in values])
    return out, draws


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize("cls", COUNTERS)
def test_releases_are_functions_of_exact_grid_noisy_values_only(cls):
    rng = np.random.default_rng(0)
    V = rng.uniform(-0.5, 0.5, (16, 3))
    W = V.copy()
    W[0] = [0.4, -0.3, 0.1]  # a neighbour (replace-one) at the element every value holds
    a, b = make(cls), make(cls)
    g = a.grid
    ra, noise_a = run_recorded(a, V)
    clean_a = clean_values(a, np.rint(V / g) * g)
    clean_b = clean_values(b, np.rint(W / g) * g)
    noisy = [ca + z for ca, z in zip(clean_a, noise_a, strict=True)]
    for arr in noisy + noise_a:
        assert np.all(arr / g % 1 == 0)  # exact grid values
    # neighbours' noise-free values differ by grid multiples (overlapping supports) ...
    shift = [ca - cb for ca, cb in zip(clean_a, clean_b, strict=True)]
    assert all(np.all(s / g % 1 == 0) for s in shift)
    assert any(np.any(s != 0) for s in shift)
    # ... so the other stream can reach the same noisy values; then it releases the same
    rb, _ = run_recorded(b, W, forced=[w - cb for w, cb in zip(noisy, clean_b, strict=True)])
    assert np.array_equal(ra, rb)
    assert not np.array_equal(np.cumsum(V, axis=0), np.cumsum(W, axis=0))
    if cls is ToeplitzCounter:  # the release, recomputed from the stored noisy encoder
        w = a._state["z"]
        assert np.array_equal(w, np.vstack(noisy))
        for t in range(1, 17):
            assert np.array_equal(ra[t - 1], a.strategy.coefficients[:t][::-1] @ w[:t])
    if cls is BltCounter:  # cumsum(G w) by the buffer recursion, from w alone
        # BLT computes it by products over blocks of 32 steps: the same terms summed in
        # another order, a release at most 32 + 5 rounded terms of at most its largest
        # (|w| sums), so within 1e-12 of that scale (the exact check is ra == rb above)
        u, n = np.zeros((a.thetas_.size, 3)), np.zeros(3)
        scale = np.abs(np.vstack(noisy)).sum()
        for t, w in enumerate(np.vstack(noisy)):
            n = n + (w + (a.omegas_[:, None] * u).sum(axis=0))
            u = a.thetas_[:, None] * u + w
            np.testing.assert_allclose(ra[t], n, rtol=0, atol=1e-12 * scale)
    if cls is DenseMeanCounter:  # B w, row by row, from the stored noisy encoder
        w = a._state["z"]
        assert np.array_equal(w, np.vstack(noisy))
        for t in range(1, 17):
            assert np.array_equal(ra[t - 1], (a.strategy.decoder[t - 1:t, :t] @ w[:t])[0])
    if cls is BandedToeplitzCounter:  # A C^-1 w by the inverse recursion, from w alone
        c, y, n = a.coefficients_, np.zeros((2, 3)), np.zeros(3)  # y: (C^-1 w), last b - 1
        for t, w in enumerate(np.vstack(noisy)):
            step = (w - c[1:][::-1] @ y[-2:]) / c[0]
            y, n = np.vstack([y, step]), n + step
            assert np.array_equal(ra[t], n)
    if cls is BandedMatrixCounter:  # A C^-1 w by the recursion of the changing band
        band, y, n = a.strategy.band, np.zeros((2, 3)), np.zeros(3)
        for t, w in enumerate(np.vstack(noisy)):
            k = min(2, t)
            step = (w - (band[t, k:0:-1] @ y[2 - k:] if k else 0.0)) / band[t, 0]
            y, n = np.vstack([y[1:], step]), n + step
            assert np.array_equal(ra[t], n)


@pytest.mark.parametrize("cls", MATRIX)
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_inflated_sensitivity_bounds_the_rounded_encoder_by_brute_force(cls, neighbouring):
    horizon, dim = 4, 2
    c = make(cls, horizon, dim, neighbouring=neighbouring)
    ref = build(cls, horizon, dim, epsilon=1.0, delta=1e-5, neighbouring=neighbouring)
    assert ref.sensitivity < c.sensitivity <= (1 + 2.0**-10) * ref.sensitivity
    g = c.grid

    def encoder(x, grid):
        return rounded_encoder(c, x, grid)

    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(400):
        x = rng.uniform(-1, 1, (horizon, dim))
        x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
        y = x.copy()
        i = int(rng.integers(horizon))
        if neighbouring == "replace_one":
            y[i] = -x[i] / np.linalg.norm(x[i])  # far away: antipodal on the sphere
        else:
            y[i] = 0.0
        worst = max(worst, float(np.linalg.norm(encoder(x, g) - encoder(y, g))))
    assert worst <= c.sensitivity
    # the brute force comes close to the bound (first element, opposite unit vectors)
    assert worst >= 0.9 * ref.sensitivity
    # the rounding term is needed: on a coarse grid the rounded change exceeds ||C(x-x')||
    # for some pairs, and never exceeds ||C(x-x')|| + grid sqrt(T d)
    coarse, exceeded = 0.25, False
    for _ in range(400):
        x = rng.uniform(-0.5, 0.5, (horizon, dim))
        y = x.copy()
        y[horizon - 1] += rng.uniform(-0.1, 0.1, dim)
        exact = float(np.linalg.norm(encoder(x, 1e-300) - encoder(y, 1e-300)))
        moved = float(np.linalg.norm(encoder(x, coarse) - encoder(y, coarse)))
        assert moved <= exact + coarse * math.sqrt(horizon * dim) + 1e-12
        exceeded |= moved > exact
    assert exceeded


@pytest.mark.parametrize("cls", MATRIX)
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_secure_participation_sensitivity_bounds_the_rounded_encoder(cls, neighbouring):
    # a participant in 2 steps at least 3 apart (epochs over 3 records): both of its
    # rounded elements move, and the sensitivity for the pattern, inflated by the rounding,
    # still bounds the rounded encoder's change (brute force over every pair of steps)
    horizon, dim, part = 6, 2, (2, 3)
    c = make(cls, horizon, dim, neighbouring=neighbouring, participation=part)
    ref = build(cls, horizon, dim, epsilon=1.0, delta=1e-5, neighbouring=neighbouring,
                participation=part)
    assert ref.sensitivity < c.sensitivity <= (1 + 2.0**-10) * ref.sensitivity
    assert ref.sensitivity > build(cls, horizon, dim, epsilon=1.0, delta=1e-5,
                                   neighbouring=neighbouring).sensitivity
    rng = np.random.default_rng(6)
    worst = 0.0
    for _ in range(50):
        for i in range(horizon):
            for j in range(i + 3, horizon):
                x = rng.uniform(-1, 1, (horizon, dim))
                x /= np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]
                x[j] = x[i] = x[i] / np.linalg.norm(x[i])  # one direction: the worst
                y = x.copy()
                y[[i, j]] = -x[i] if neighbouring == "replace_one" else 0.0
                worst = max(worst, float(np.linalg.norm(rounded_encoder(c, x, c.grid)
                                                        - rounded_encoder(c, y, c.grid))))
    # attained past the float sensitivity: the rounding term is needed, and suffices
    assert ref.sensitivity < worst <= c.sensitivity


def test_float_error_term_is_a_valid_bound():
    # a dot product of T terms against exact rational arithmetic
    from fractions import Fraction

    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, 2000), rng.uniform(-1, 1, 2000)
    exact = sum(Fraction(x) * Fraction(y) for x, y in zip(a, b, strict=True))
    assert abs(Fraction(float(a @ b)) - exact) <= float_dot_error(2000, float(np.abs(a * b).sum()))


def two_sided_chi2(stat: float, dof: int) -> float:
    return 2.0 * min(stats.chi2.cdf(stat, dof), stats.chi2.sf(stat, dof))


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize("cls", COUNTERS)
def test_secure_variance_matches_the_analytic_variance(cls):
    # zero input: round_g(C 0) = 0, so the release noise is exactly the weighted discrete
    # Gaussian noise; its coordinates (the R = 1000 replicates) are i.i.d. with variance
    # variance(t), and sums of discrete Gaussians of >= 2^10 grid units are normal to
    # e^-(2 pi^2 2^20)-small terms: sum x^2 / v_t ~ chi^2_R exactly for this test. Each
    # step is tested at ALPHA / T (Bonferroni); std x 1.5 and x 2/3 (variance x 2.25 and
    # x 0.44) lie >= 12 standard deviations of chi^2_1000 away and must be rejected.
    reps, horizon = 1000, 16
    c = build(cls, horizon, reps, noise_multiplier=0.7, noise="secure", delta=1e-5)
    out = c.run(np.zeros((horizon, reps)))
    stat = np.sum(out**2, axis=1) / c.variance(np.arange(1, horizon + 1))
    assert min(two_sided_chi2(s, reps) for s in stat) > ALPHA / horizon
    for factor in (1.5, 2.0 / 3.0):
        assert max(two_sided_chi2(s / factor**2, reps) for s in stat) < ALPHA


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize("cls", MATRIX)
def test_secure_participation_has_the_float_variance(cls):
    # epochs (2 passes 8 apart) in secure mode: zero input, so the releases are the
    # correlated noise alone; each side's variance(t) (the secure one from its inflated
    # sensitivity and zCDP multiplier) must explain its R = 1000 replicates (F test
    # rejecting a secure std x 3/2 or x 2/3)
    reps, horizon = 1000, 16
    outs, variances = {}, {}
    for noise in ("secure", "gaussian"):
        c = build(cls, horizon, reps, epsilon=1.0, delta=1e-5, noise=noise, seed=1,
                  participation=(2, 8))
        outs[noise] = c.run(np.zeros((horizon, reps)))
        variances[noise] = c.variance(np.arange(1, horizon + 1))
    assert np.all(variances["secure"] > variances["gaussian"])
    check_same_variance(outs["secure"], variances["secure"], outs["gaussian"],
                        variances["gaussian"])


@pytest.mark.parametrize("cls", COUNTERS)
def test_epsilon_inf_is_the_exact_cumulative_sum(cls):
    V = np.random.default_rng(2).uniform(-0.5, 0.5, (16, 2))
    with pytest.warns(NonPrivateWarning):
        c = build(cls, 16, 2, epsilon=math.inf, noise="secure")
    assert c.grid is None
    assert np.array_equal(c.run(V), np.cumsum(V, axis=0))


@pytest.mark.usefixtures("seeded_os_rng")
@pytest.mark.parametrize("cls", COUNTERS)
@pytest.mark.parametrize("participation", ["single", (2, 4)])
def test_secure_checkpoint_and_bad_input(cls, participation):
    V = np.random.default_rng(5).uniform(-0.5, 0.5, (8, 2))
    c = make(cls, 8, 2, participation=participation)
    first = c.run(V[:4])
    state = c.get_state()
    restored = type(c).from_state(state)
    assert restored.participation == c.participation
    assert (restored.grid, restored.sensitivity) == (c.grid, c.sensitivity)
    with pytest.raises(InvalidInputError):
        restored.add([np.nan, 0.0])
    assert restored.t == 4
    rest = restored.run(V[4:])
    assert first.shape == rest.shape == (4, 2)
    if cls is not HonakerTreeCounter:  # the restored history continues the encoder
        kept = 3 if cls in BANDED else 8  # a band reads its last b only
        assert np.array_equal(restored._x, (np.rint(V / c.grid) * c.grid)[8 - kept:])
    if cls is ToeplitzCounter:  # the continued noisy encoder is still on the grid
        assert np.all(restored._state["z"] / restored.grid % 1 == 0)


@pytest.mark.parametrize("cls", MATRIX)
def test_matrix_counters_refuse_secure_laplace_and_too_little_noise(cls):
    with pytest.raises(InvalidInputError, match="'gaussian' or 'secure'"):
        build(cls, 8, epsilon=1.0, noise="secure_laplace")
    with pytest.raises(InvalidInputError, match="2\\^52 grid steps"):
        build(cls, 64, noise_multiplier=1e-14, delta=1e-5, noise="secure")


def test_joint_sensitivity_of_secure_matrix_counters_counts_the_encoder_rounding():
    # counters fed parts of one element (PQFTL, KNJ): the stacked rounded encoders move by
    # at most (s + h sqrt(sum g_k^2 d_k)) ||C e_1|| + sqrt(sum_k r_k^2), r_k = each
    # counter's own encoder-rounding term (the quadrature of the counters' own
    # sensitivities, the other bound, is larger here)
    from dpol.learners._joint_counters import secure_joint_sensitivity

    counters = (make(ToeplitzCounter, 16, 4), make(ToeplitzCounter, 16, 2))
    norm = math.sqrt(counters[0].strategy.column_norm_sq())
    rounding = math.sqrt(sum(c.grid**2 * c.dim for c in counters))
    extra = math.sqrt(sum(c._extra_sensitivity**2 for c in counters))
    got = secure_joint_sensitivity(counters, 1.0)
    assert got == pytest.approx((1.0 + rounding) * norm + extra, rel=1e-12)
    assert got > (1.0 + rounding) * norm
    assert got < math.sqrt(sum(c.sensitivity**2 for c in counters))
