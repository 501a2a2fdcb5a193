"""dpol/evaluation/audit_pairs.py: the worst-case neighbouring pairs attain each learner's
declared sensitivity, and the under-noised twins carry exactly the stated share of the
noise (the kernel learner's pair: test_kernel_pair.py)."""

from __future__ import annotations

import learner_cases
import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.evaluation import (
    learner_releases,
    sensitivity_attainment,
    under_noised,
    worst_case_learner_streams,
)
from dpol.evaluation.audit_suite import CASES


def test_worst_case_learner_streams_differ_in_one_element_of_norm_one():
    learner = learner_cases.make("pqftl", 4)
    (Xa, ya), (Xb, yb) = worst_case_learner_streams(learner, position=1)
    # null elements but at position 1: unit x, x' at <x, x'> = 1/2, labels +1 and -1
    others = [0, 2, 3]
    assert not np.any(Xa[others]) and not np.any(Xb[others]) and not np.any(ya[others])
    assert not np.any(yb[others]) and ya[1] == 1.0 == -yb[1]
    assert np.linalg.norm(Xa[1]) == pytest.approx(1.0) == np.linalg.norm(Xb[1])
    assert Xa[1] @ Xb[1] == pytest.approx(0.5)


# ------------------------------------------------------------------------ attainment
EXACT = [n for n, c in CASES.items() if c.counter is not None] + [
    "OutputPerturbation", "PrivateOfflineLearner"]


@pytest.mark.parametrize("name", EXACT)
def test_the_pairs_attain_the_declared_sensitivity(name):
    # counter learners: the change of the element fed to the counters (stacked for the
    # pairs of sums) equals the counter's element sensitivity, to float rounding (1e-9);
    # the bandit's batch sums, the running mean's release t (lam / t) and the offline
    # learner's average likewise
    found = sensitivity_attainment(CASES[name].build)
    np.testing.assert_allclose(found.ratio, 1.0, rtol=1e-9)


@pytest.mark.parametrize("x_bound, y_bound", [(1.0, 0.5), (0.8, 2.0), (3.0, 3.0)])
def test_pqftl_pair_attains_its_sensitivity_with_rows_and_labels_on_two_scales(x_bound,
                                                                              y_bound):
    # |y| <= Y apart from ||x|| <= R: labels +-Y enter the counters as +-R, and the stacked
    # element changes by exactly outer_product_sensitivity(R, R), whatever Y
    from dpol.learners import PrivateQuadraticFTL
    from dpol.learners._joint_counters import outer_product_sensitivity

    def build(seed):
        return PrivateQuadraticFTL(3, horizon=8, bound=x_bound, y_bound=y_bound,
                                   epsilon=1.0, delta=1e-5, seed=seed)

    found = sensitivity_attainment(build)
    np.testing.assert_allclose(found.ratio, 1.0, rtol=1e-9)
    assert found.declared[0] == pytest.approx(
        outer_product_sensitivity(x_bound, x_bound, "replace_one"), rel=1e-12)


def test_igd_attains_its_sensitivity_lam_over_t_plus_1_at_every_release():
    # PrivateIGD calibrates release t for Delta_t = lam / (t + 1), lam = 2 L / alpha. The
    # differing hinge element moves the prox point by exactly 2 L eta / (1 + eta alpha) =
    # lam / (t + 1) (eta = 1 / (alpha t)) and later null elements contract it by t / (t + 1):
    # release t differs by exactly Delta_t (up to lam's 1e-12 slack). With JKT Lemma 4's
    # lam / t the ratios would be t / (t + 1): the noise was (t + 1) / t too large.
    found = sensitivity_attainment(CASES["PrivateIGD"].build)
    np.testing.assert_allclose(found.ratio, 1.0, rtol=1e-9)


def test_giga_attains_its_sensitivity_at_the_first_data_release():
    # step t_q moves the iterate by (2 / (alpha t_q)) 2 L = lam / t_q exactly (margin 0, the
    # hinge's constant slope); the later null steps contract it by (1 - 2/t), faster than
    # lam / t falls, so the later releases attain less
    found = sensitivity_attainment(CASES["PrivateGIGA"].build)
    assert found.ratio[0] == pytest.approx(1.0, rel=1e-9)
    assert np.all(found.ratio[1:] < 1.0) and np.all(np.diff(found.ratio) < 0.0)


def test_erm_has_no_per_release_sensitivity():
    with pytest.raises(InvalidInputError, match="factory"):
        sensitivity_attainment(CASES["PrivateIncrementalERM"].build)


# ------------------------------------------------------------------------ twins
def test_under_noised_halves_every_noise_and_refuses_used_learners():
    def counters(learner):
        held = getattr(learner, "_counter", None) or learner._counters
        return held if isinstance(held, tuple) else (held,)

    for name in ("PrivateFTAL/binary_tree", "PrivateQuadraticFTL/blt",
                 "PrivateBanditFrankWolfe/window_tree"):
        real, twin = CASES[name].build(0), CASES[name].factory(0.5)(0)
        for r, t in zip(counters(real), counters(twin), strict=True):
            assert t.noise_scale == pytest.approx(0.5 * r.noise_scale, rel=1e-12)
            assert (type(t), t.horizon, t.dim, t.levels) == (type(r), r.horizon, r.dim, r.levels)
    # learners with their own noise: with the same seed the twin's release noise is
    # exactly half the real one (the releases are linear in it here: no projection)
    for name in ("OutputPerturbation", "PrivateIGD", "PrivateKernelRegression"):
        (X, y), _ = worst_case_learner_streams(CASES[name].build(0))
        real, twin, clean = (learner_releases(CASES[name].factory(f), X, y, 1, seed=3,
                                              fresh=True) for f in (1.0, 0.5, 0.0))
        np.testing.assert_allclose(twin - clean, 0.5 * (real - clean), rtol=1e-9,
                                   atol=1e-12)
    used = CASES["PrivateIGD"].build(0)
    used.learn_one(np.zeros(2), 0.0)
    with pytest.raises(InvalidInputError, match="fresh"):
        under_noised(used, 0.5)
    with pytest.raises(InvalidInputError, match="learner"):
        under_noised(object(), 0.5)
