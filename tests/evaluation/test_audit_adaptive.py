"""The audit against an adaptive adversary: exact read-back, real learners pass, twins caught.

Planning (``expected_gaussian_audit``): with p = 0 (FTAL, PQFTL) or p in the first batch
(bandit) every tree node holding the challenge is released, so the turned residual of a
learner calibrated to (epsilon, delta) is a Gaussian mechanism of ratio mu*(epsilon,
delta) (PQFTL: 94% of it, the label flip moves 2 R^2 of the stacked 3/sqrt(2) R^2), and
its half-noise twin has twice that. Every adaptive run builds its learner and steps it
in Python; building is mostly the counter's calibration, whose dp-accounting root finding
the audit tests memoize (``memoized_gaussian_accounting``: same floats, 8x faster runs),
so an audit affords ~4000 runs: the claims are (1, 0.1), where 1000 held-out runs a world
suffice (below); at delta = 1e-2 the same margin would take 3x the runs. The calibration
code is the one used at every delta.

Twins are learners calibrated for the epsilon whose mu* is twice the claim's, gaussian
epsilon(1 / (2 mu*(1, 0.1)), 0.1) = 3.32: the same algorithm with exactly half the noise
multiplier (checked), audited against the original's claim (1, 0.1).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol.accounting import gaussian_epsilon, mu_star
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.evaluation import expected_gaussian_audit
from dpol.evaluation.audit_adaptive import adaptive_releases, audit_adaptive
from dpol.learners import (
    BanditFrankWolfe,
    PrivateBanditFrankWolfe,
    PrivateFTAL,
    PrivateIGD,
    PrivateQuadraticFTL,
)
from dpol.losses import HingeLoss, LogisticLoss, Regularized
from dpol.sets import Box, L2Ball

EPSILON, DELTA, T, DIM = 1.0, 0.1, 8, 3
TWIN_EPSILON = gaussian_epsilon(0.5 / mu_star(EPSILON, DELTA), DELTA)
N_RUNS = 2_000  # per world: 1000 held out
TWIN_RUNS = 1_400  # per world for the half-noise twins: 700 held out (derived there)


def _quiet(build):
    def make(seed):
        with warnings.catch_warnings():  # epsilon=inf: the noiseless twin says so
            warnings.simplefilter("ignore", NonPrivateWarning)
            return build(seed)
    return make


def ftal(epsilon=EPSILON, **kw):
    # smoothed hinge (h = 0.5 <= 1): active at margin 0 for both labels, so the challenge
    # orthogonal to w_p changes the data gradient by 2 L = the counter's sensitivity; a
    # ball too large to project onto keeps every iterate readable
    options = {"domain": L2Ball(DIM, 1e6), "counter": "tree", **kw}
    return _quiet(lambda seed: PrivateFTAL(DIM, loss=Regularized(HingeLoss(0.5), 1.0),
                                           horizon=T, epsilon=epsilon, delta=DELTA,
                                           seed=seed, **options))


def pqftl(epsilon=EPSILON, **kw):
    # alpha = 100 dominates the V noise (node std 4.6 at (1, 0.1)), so w_(t+1) is nearly
    # linear in u~_t; without fixes the iterates are not clipped to the ball of radius
    # R^2 / alpha, which at this horizon would hide the norm of most noisy sums
    return _quiet(lambda seed: PrivateQuadraticFTL(DIM, horizon=T, epsilon=epsilon,
                                                   delta=DELTA, alpha=100.0, seed=seed, **kw))


def bandit(epsilon=EPSILON, **kw):
    # T = 25: K = 5 rounds a batch, 4 counter releases; the first batch's sum is in the
    # nodes [1], [1, 2], [1..4], released as s~_1, s~_2, s~_4
    cls = PrivateBanditFrankWolfe if np.isfinite(epsilon) else BanditFrankWolfe
    extra = {"epsilon": epsilon, "delta": DELTA} if np.isfinite(epsilon) else {}
    return _quiet(lambda seed: cls(Box(0.0, 1.0, dim=2), horizon=25, seed=seed, **extra,
                                   **kw))


BANDIT_POSITION = 2  # two adaptive rounds before the challenge, in the first batch


def _multipliers(learner):
    return [e.event.noise_multiplier for e in learner.privacy_events()]


# ------------------------------------------------------------------------ the read-back
@pytest.mark.parametrize(("make", "challenge", "position"), [
    (ftal(np.inf), 1.0, 0), (ftal(np.inf), 1.0, 3), (pqftl(np.inf), 1.0, 0),
    (pqftl(np.inf), 1.0, 5), (pqftl(np.inf, fixes=False), 1.0, 3),
    (bandit(np.inf), None, 0), (bandit(np.inf), None, 7),
    (bandit(np.inf, mode="shrink", inner_ball=(np.full(2, 0.5), 0.5)), None, 3),
], ids=["ftal-0", "ftal-3", "pqftl-0", "pqftl-5", "pqftl-nofixes-3", "bandit-0",
        "bandit-7", "bandit-shrink-3"])
def test_noiseless_residual_is_the_challenge_alone(make, challenge, position):
    # Without noise the read-back minus the adversary's own contributions is exactly the
    # challenge's: FTAL's data gradient -y X v (-+1 e_1 turned), PQFTL's y x = +-R^2 e_1,
    # the bandit's (n/zeta)(+-B) e_1, in every release from the challenge's on (the window
    # of a full-DP claim). Adaptive elements before and after p are all subtracted: a
    # wrong read-back or a missed contribution leaves them in.
    learner = make(0)
    if challenge is None:
        challenge = learner.dim / learner.zeta * learner.loss_bound
        n_rows = learner.n_releases - position // learner.batch_size
    else:
        n_rows = learner.horizon - position
    sign = -1.0 if isinstance(learner, PrivateFTAL) else 1.0
    for world, side in (("a", sign), ("b", -sign)):
        rows = adaptive_releases(make, 4, world=world, position=position, seed=1)
        expected = np.zeros((4, n_rows, learner.dim))
        expected[:, :, 0] = side * challenge
        np.testing.assert_allclose(rows, expected.reshape(4, -1), rtol=0, atol=1e-9)


def test_the_adversary_reacts_to_the_releases():
    # Noiseless FTAL, p = 0 (w_1 = 0, so v = e_2 in both worlds; mu = 1): an oblivious
    # adversary would keep the worlds' iterates apart by exactly the challenge's
    # -(g_a - g_b) / (mu t) = 2 v / t. Here the elements after p follow each world's own
    # iterate (world a: w_2 = e_2, so x_2 = e_2 and the sum cancels to w_3 = 0; world b
    # mirrors it), so the gap closes at t = 2 and stays off 2 v / t
    a, b = (adaptive_releases(ftal(np.inf), 1, world=w, release="raw", seed=2)
            for w in "ab")
    gap = (a - b).reshape(T, DIM)
    oblivious = np.zeros((T, DIM))
    oblivious[:, 0] = 2.0 / np.arange(1, T + 1)  # turned: v -> e_1
    np.testing.assert_allclose(gap[0], oblivious[0], atol=1e-12)
    assert np.allclose(gap[1], 0.0, atol=1e-12)
    assert not np.allclose(gap[1:], oblivious[1:], atol=0.1)


def test_a_window_claim_reads_only_the_window():
    # window W = 2: element p is protected in the releases p+1, p+2 only
    rows = adaptive_releases(ftal(np.inf, counter="window", window=2), 3, position=1,
                             window=2, seed=0)
    assert rows.shape == (3, 2 * DIM)


@pytest.mark.parametrize(("make", "kwargs", "word"), [
    (ftal(), {"release": "iterates"}, "release"),
    (ftal(), {"world": "c"}, "world"),
    (ftal(), {"position": T}, "position"),
    (bandit(), {"position": 20}, "position"),  # the last batch's sum is never released
    (ftal(domain=L2Ball(DIM, 1.0)), {}, "factory"),  # projected: not readable
    (ftal(noise_ridge=True, domain=L2Ball(DIM, 10.0)), {}, "factory"),
    (pqftl(noise_ridge=True), {}, "factory"),
    (_quiet(lambda s: PrivateFTAL(1, loss=Regularized(HingeLoss(0.5), 1.0),
                                  domain=L2Ball(1, 1e6), horizon=T, epsilon=1.0,
                                  delta=DELTA, seed=s)), {}, "factory"),
    (_quiet(lambda s: PrivateIGD(DIM, loss=Regularized(LogisticLoss(), 0.1),
                                 domain=L2Ball(DIM), horizon=T, epsilon=1.0, delta=DELTA,
                                 seed=s)), {}, "factory"),
])
def test_bad_input_names_the_argument(make, kwargs, word):
    with pytest.raises(InvalidInputError, match=word):
        adaptive_releases(make, 4, seed=0, **kwargs)


def test_raw_releases_are_allowed_where_the_read_back_is_not():
    # a projecting ball or noise_ridge only rule out the read-back
    rows = adaptive_releases(ftal(domain=L2Ball(DIM, 1.0)), 3, release="raw", seed=0)
    assert rows.shape == (3, T * DIM) and np.all(np.linalg.norm(
        rows.reshape(3, T, DIM), axis=2) <= 1.0 + 1e-12)


# ------------------------------------------------------------------------ the audits
CASES = {
    "ftal": (ftal, {}, 0),
    "pqftl": (pqftl, {"fixes": False}, 0),
    "bandit": (bandit, {}, BANDIT_POSITION),
}
PASS_CASES = {**CASES, "pqftl-fixes": (pqftl, {}, 0)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PASS_CASES))
@pytest.mark.usefixtures("memoized_gaussian_accounting")
def test_the_real_learner_passes(name):
    # 1000 held-out runs a world: a tight (1, 0.1) Gaussian residual is expected at 0.65
    # (se 0.10) by expected_gaussian_audit(mu*, 1000); the bound exceeds the true epsilon
    # with probability <= 5% (the audit's confidence). PQFTL with its default fixes shows
    # less (its iterates are clipped), and is run too.
    build, options, position = PASS_CASES[name]
    make = build(**options)
    claimed = make(0).privacy
    assert claimed.epsilon == pytest.approx(EPSILON) and claimed.delta == DELTA
    result = audit_adaptive(make, n_runs=N_RUNS, position=position, seed=4)
    assert result.passed, result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.usefixtures("memoized_gaussian_accounting")
def test_the_half_noise_twin_is_flagged(name):
    # The twin's residual has ratio 2 mu*(1, 0.1) = 1.84 (PQFTL: 0.94 of it, 1.74):
    # expected_gaussian_audit gives 2.18 (se 0.35) on 700 held-out runs a world, 3.3 se
    # above the claimed 1 (PQFTL 1.98, se 0.31: 3.2 se), so a twin escapes with
    # probability ~1e-3; 1000 runs (4.1 se) cost 30% more time for a margin not needed.
    # The bound must stay below the twin's true epsilon 3.32.
    build, options, position = CASES[name]
    real, twin = build(**options)(0), build(TWIN_EPSILON, **options)(0)
    if name == "bandit":
        assert twin.noise_scale == pytest.approx(real.noise_scale / 2.0, rel=1e-6)
    else:
        assert np.allclose(np.divide(_multipliers(twin), _multipliers(real)), 0.5, rtol=1e-6)
    expected, se = expected_gaussian_audit(2.0 * mu_star(EPSILON, DELTA), TWIN_RUNS // 2,
                                           delta=DELTA)
    assert expected - 3.0 * se > EPSILON
    result = audit_adaptive(build(TWIN_EPSILON, **options), n_runs=TWIN_RUNS,
                            claimed=real.privacy, position=position, seed=3)
    assert not result.passed, result.summary()
    assert result.epsilon_lower <= twin.privacy.epsilon
