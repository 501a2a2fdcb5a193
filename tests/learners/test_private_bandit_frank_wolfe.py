"""PrivateBanditFrankWolfe's calibration: the tree noise's scale, one summand per
neighbour, tight and paper presets, the Privacy section.

The sensitivity searched over tiny instances and the other noise laws:
test_private_bandit_frank_wolfe_privacy.py.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from learner_cases import bandit_private as private
from learner_cases import bandit_twin as twin
from learner_cases import distance_loss
from scipy import stats

from dpol.accounting import certified_epsilon, mu_star
from dpol.accounting.presets import (
    env_bandit_gaussian_sigma,
    env_bandit_laplace_exact_epsilon,
    env_bandit_laplace_scale,
    env_bandit_tree_levels,
)
from dpol.errors import InvalidInputError, PaperCalibrationWarning
from dpol.learners.private_bandit_frank_wolfe import PrivateBanditFrankWolfe
from dpol.sets import Box, L2Ball


@pytest.mark.parametrize("T", [1, 2])
def test_a_single_batch_releases_nothing(T):
    learner = private(Box(0.0, 1.0, dim=1), T, seed=0)
    assert learner.n_batches == 1 and learner.privacy.epsilon == 0.0
    trace = learner.run(distance_loss)
    assert len(trace.points) == T and trace.noisy_sums.shape == (0, 1)
    assert type(learner.dp_event()).__name__ == "NoOpDpEvent"


def _first_release_noise(noise, runs, n=20, T=400):
    """Tree noise of the first release: private minus twin with the same seed (same u's)."""
    dom = Box(0.0, 1.0, dim=n)
    C = np.random.default_rng(0).normal(size=(40, n)) / math.sqrt(n)  # two batches of 20
    out = []
    for seed in range(runs):
        p = private(dom, T, noise=noise, seed=seed)
        q = twin(dom, T, seed=seed)
        out.append(p.run_linear(C).noisy_sums[0] - q.run_linear(C).noisy_sums[0])
    return np.concatenate(out), p


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_tree_noise_has_the_calibrated_scale(noise):
    # T = 400, n = 20: K = 20, m = 20, 19 released sums, h = floor(log2 19) + 1 = 5 levels;
    # zeta = D sqrt(n)/T^(1/4), B = L (D + zeta), Delta_2 = 2 (n/zeta) B, Delta_1 = sqrt(n)
    # Delta_2. Tight: Gaussian std Delta_2 sqrt(h)/mu*(1, 1e-6), Laplace scale h Delta_1 / 1.
    # The first release carries one node: 100 runs x 20 i.i.d. coordinates. KS at 2000
    # samples: the right scale passes (p > 1e-3); 2/3 or 3/2 of it moves the cdf by >= 0.1,
    # far beyond the 1e-6 critical distance 0.054, so both are rejected.
    n, T = 20, 400
    D = math.sqrt(n)
    zeta = D * math.sqrt(n) / T**0.25
    delta_2 = 2 * n / zeta * (D + zeta)
    if noise == "gaussian":
        scale, dist = delta_2 * math.sqrt(5) / mu_star(1.0, 1e-6), "norm"
    else:
        scale, dist = 5 * math.sqrt(n) * delta_2, "laplace"
    z, learner = _first_release_noise(noise, 100)
    assert learner._counter.levels == 5
    assert learner.noise_scale == pytest.approx(scale, rel=1e-9)
    assert stats.kstest(z / scale, dist).pvalue > 1e-3
    for wrong in (2 / 3, 3 / 2):
        assert stats.kstest(z / (wrong * scale), dist).pvalue < 1e-6


def test_coupled_neighbouring_runs_differ_by_one_summand():
    # ENV-2's per-summand argument: same seed (same u's and node noise), losses differ
    # only at round t0 = 19 of batch R0 = 3 (K = 8): released sums before R0 are equal, at R0
    # they differ by exactly (n/zeta)(B - (-B)) u_t0, of l2 norm Delta_2 = element_sensitivity
    # and l1 norm <= sqrt(n) Delta_2; centres of batches <= R0 + 1 are equal (batch R0 + 1
    # plays x~_R0, computed from s~_{R0-1}), the next ones move
    T, n, t0 = 64, 3, 19
    dom = Box(0.0, 1.0, dim=n)
    base = lambda X, s: np.where(s == t0, 1e9, 0.0)  # noqa: E731
    other = lambda X, s: np.where(s == t0, -1e9, 0.0)  # noqa: E731
    a, b = private(dom, T, epsilon=100.0, seed=2), private(dom, T, epsilon=100.0, seed=2)
    ta, tb = a.run(base), b.run(other)
    np.testing.assert_array_equal(ta.noisy_sums[:2], tb.noisy_sums[:2])
    diff = ta.noisy_sums[2] - tb.noisy_sums[2]
    u = (ta.points[t0] - ta.iterates[t0]) / a.zeta
    np.testing.assert_allclose(diff, (n / a.zeta) * 2 * a.loss_bound * u, rtol=1e-9)
    assert np.linalg.norm(diff) == pytest.approx(a.element_sensitivity, rel=1e-9)
    assert np.abs(diff).sum() <= math.sqrt(n) * a.element_sensitivity * (1 + 1e-12)
    np.testing.assert_array_equal(ta.iterates[:32], tb.iterates[:32])
    assert not np.array_equal(ta.iterates[32:40], tb.iterates[32:40])


def test_tight_calibration_certifies_the_target():
    dom = Box(0.0, 1.0, dim=4)
    g = private(dom, 1000, epsilon=1.0, delta=1e-6, seed=0)
    assert (g.privacy.epsilon, g.privacy.delta) == (1.0, 1e-6)
    assert g.privacy.neighbouring == "replace_one" and "loss function" in g.privacy.unit
    assert certified_epsilon(g.dp_event(), 1e-6) == pytest.approx(1.0, abs=5e-3)
    lap = private(dom, 1000, noise="laplace", epsilon=2.0, seed=0)
    h = lap._counter.levels
    assert (lap.privacy.epsilon, lap.privacy.delta) == (2.0, 0.0)
    # h Delta_1 / epsilon, Delta_1 = sqrt(n) Delta_2
    assert lap.noise_scale == pytest.approx(h * math.sqrt(4) * lap.element_sensitivity / 2.0,
                                            rel=1e-12)
    half = private(dom, 1000, neighbouring="add_remove", seed=0)
    assert half.noise_scale == pytest.approx(g.noise_scale / 2, rel=1e-12)


@pytest.mark.parametrize(("T", "n"), [(16, 2), (100, 10)])
def test_paper_laplace_preset_warns_where_it_falls_short(T, n):
    # ENV-2: lambda_paper / lambda_per-summand = 0.54 and 0.73 (with the
    # spec's h = ceil(log2 m) + 1); our counter has h' = floor(log2(m - 1)) + 1 levels, so the
    # real epsilon is the preset's exact epsilon times h'/h, still above the requested 1
    dom = Box(0.0, 1.0, dim=n)
    with pytest.warns(PaperCalibrationWarning, match="Lemma 5.1.* gives only"):
        learner = private(dom, T, noise="laplace", calibration="paper", log="ln", seed=0)
    lam = env_bandit_laplace_scale(1.0, T, n, 1.0, log="ln")
    assert learner.noise_scale == pytest.approx(lam, rel=1e-12)
    h, h_spec = learner._counter.levels, env_bandit_tree_levels(T)
    exact = env_bandit_laplace_exact_epsilon(lam, T, n, 1.0, math.sqrt(n)) * h / h_spec
    assert learner.privacy.epsilon == pytest.approx(exact, rel=1e-9)
    assert learner.privacy.epsilon > 1.0


def test_paper_presets_that_suffice_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lap = private(Box(0.0, 1.0, dim=10), 10_000, noise="laplace", calibration="paper",
                      log="ln", seed=0)
        gau = private(L2Ball(4, 1.0), 10_000, calibration="paper", log="ln", seed=0)
    assert 0.1 < lap.privacy.epsilon < 1.0
    # Lemma 5.4's sigma (about 2.01e5 here, ENV-2) is hugely over-noised
    assert gau.noise_scale == pytest.approx(
        env_bandit_gaussian_sigma(1.0, 1e-6, 10_000, 4, 1.0, log="ln"), rel=1e-12)
    assert gau.noise_scale == pytest.approx(2.01e5, rel=5e-3)
    assert gau.privacy.epsilon < 0.01 and gau.privacy.delta == 1e-6


def test_paper_calibration_refusals():
    box = Box(0.0, 1.0, dim=2)
    with pytest.raises(InvalidInputError, match="counter must be 'binary_tree'"):
        private(box, 100, calibration="paper", counter="honaker")
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian' or 'laplace'"):
        private(box, 100, calibration="paper", noise="gamma")


def test_privacy_docstring_states_the_guarantee_and_the_erratum_decisions():
    doc = PrivateBanditFrankWolfe.__doc__
    privacy = " ".join(doc[doc.index("Privacy\n    -------"):doc.index("Examples\n")].split())
    for phrase in ("Replace-one", "2 (n/zeta) B", "mu*(epsilon, delta)", "h Delta_1 / epsilon",
                   "Lemmas 5.1, 5.4", "PaperCalibrationWarning",
                   "docs/derivations/bandit_frank_wolfe.md"):
        assert phrase in privacy, phrase
    # the derivation it links holds every decision of docs/errata.md's ENV entries, by
    # its ID and the paper's location
    page = Path(__file__).resolve().parents[2] / "docs/derivations/bandit_frank_wolfe.md"
    flat = " ".join(page.read_text().split())
    for decision in ("errata.md", "oblivious", "ENV-1, Algorithm 1 line 14",
                     "1/2 ||x - c||^2 + eta <s~, x>", "ENV-2, Lemmas 5.1 and 5.4",
                     "per-summand sensitivities", "ENV-3",
                     "Lemma C.4, exactly one FW iteration per round", "x~_0 = c, s~_0 = 0",
                     "Algorithm 1 line 1, K = ceil(sqrt T)", "Algorithms 3-5, a binary tree",
                     "Lemma C.2, an explicit loss bound B", "zeta > D warns",
                     "Definition 2.1, the guarantees", "never enter its own FW solve",
                     "leave D by up to zeta", "simplex (Section 1)", "(Section 2) is not offered"):
        assert decision in flat, decision
