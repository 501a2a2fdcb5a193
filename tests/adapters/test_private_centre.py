"""The labels' private mean (the trivial model) and the estimators that centre on it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpol.accounting.closed_forms import gaussian_share, mu_star
from dpol.accounting.events import compose_guarantee
from dpol.adapters import OnlineClassifier, OnlineRegressor
from dpol.adapters._private_prep import CENTRE_BUDGET
from dpol.datasets import private_label_mean
from dpol.errors import ClippingWarning, InvalidInputError


def test_the_noise_has_the_stated_scale_and_not_two_thirds_or_three_halves_of_it():
    # z = 0.5, 50 labels in [-0.9, 0.9], bound 1: by the derivation (module Privacy) the
    # mean's noise std is z * 2 / n = 0.02, and the clip to [-1, 1] never binds (50
    # stds). 2,000 seeded releases: the sample variance over a hypothesised variance has
    # std sqrt(2 / 2000) = 0.032 about its expectation, so the right scale lies within 4
    # of them (0.13) of 1, while a hypothesis of 2/3 or 3/2 of the scale puts the ratio at
    # 2.25 or 0.44
    z, y = 0.5, np.linspace(-0.9, 0.9, 50)
    values = np.array([private_label_mean(y, bound=1.0, noise_multiplier=z, seed=s).value
                       for s in range(2000)])
    variance = float(np.var(values - y.mean()))
    std = z * 2.0 / len(y)
    tolerance = 4 * math.sqrt(2 / 2000)
    assert abs(variance / std**2 - 1.0) < tolerance
    for wrong in (2 / 3, 3 / 2):
        assert abs(variance / (wrong * std) ** 2 - 1.0) > tolerance


@pytest.mark.parametrize("one_hot", [False, True])
def test_the_sensitivity_is_the_largest_change_of_the_clipped_sum(one_hot):
    # brute force over tiny streams: every replace-one neighbour of every stream of
    # 3 labels from a grid that reaches beyond the bound (scalars) or of one-hot rows
    if one_hot:
        grid = [np.eye(3)[k] for k in range(3)]
    else:
        grid = [np.array([v]) for v in (-3.0, -1.0, -0.4, 0.0, 0.7, 1.0, 2.5)]
    largest = 0.0
    for stream in itertools.product(range(len(grid)), repeat=3):
        for i, other in itertools.product(range(3), range(len(grid))):
            a = np.array([grid[k] for k in stream])
            b = a.copy()
            b[i] = grid[other]
            sums = [private_label_mean(m if one_hot else m[:, 0], bound=1.0,
                                       noise_multiplier=0.0, one_hot=one_hot).value * 3
                    for m in (a, b)]
            largest = max(largest, float(np.linalg.norm(np.subtract(*sums))))
    release = private_label_mean(np.eye(3) if one_hot else np.zeros(3), bound=1.0,
                                 noise_multiplier=1.0, one_hot=one_hot, seed=0)
    assert largest == pytest.approx(release.sensitivity)  # attained: the bound is tight
    assert release.sensitivity == (math.sqrt(2.0) if one_hot else 2.0)
    add_remove = private_label_mean(np.zeros(3), bound=1.0, noise_multiplier=1.0,
                                    neighbouring="add_remove")
    assert add_remove.sensitivity == 1.0


def test_zero_noise_is_the_exact_mean_of_the_clipped_labels_and_has_no_event():
    y = np.array([0.5, 3.0, -0.25, -4.0])
    exact = private_label_mean(y, bound=2.0, noise_multiplier=0.0)
    assert exact.value == pytest.approx((0.5 + 2.0 - 0.25 - 2.0) / 4)
    assert exact.privacy_events() == ()
    with pytest.raises(InvalidInputError, match="y must be a non-empty finite array"):
        private_label_mean(np.array([1.0, np.nan]), bound=1.0, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="y must hold one-hot rows"):  # sqrt(2) is
        private_label_mean(np.array([[1.0, -1.0]]), bound=1.0, noise_multiplier=1.0,
                           one_hot=True)  # only theirs: [1, -1] - [-1, 1] has norm 2 sqrt 2


def test_the_share_and_the_learner_compose_to_the_target_exactly():
    z, rest = gaussian_share(1.0, 1e-5, CENTRE_BUDGET)
    assert 1 / z**2 == pytest.approx(CENTRE_BUDGET * mu_star(1.0, 1e-5) ** 2, rel=1e-9)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3)) / 3
    y = X @ [0.5, -0.3, 0.2] + 0.4
    reg = OnlineRegressor(epsilon=1.0, random_state=0).fit(X, y)
    events = [*reg.prep_.events(), *reg.learner_.privacy_events()]
    assert len(reg.prep_.events()) == 1 and reg.learner_.epsilon == pytest.approx(rest)
    assert reg.privacy_ == compose_guarantee(events, reg.learner_.delta, target=1.0,
                                             seeded=True)
    assert reg.privacy_.epsilon == 1.0  # the learner's event is one Gaussian: exact
    # the model predicts the centre plus the learner's own prediction, within y_bound
    b = reg.prep_.centre.value
    assert abs(b - 0.4) < 3 * reg.prep_.centre.std + 0.05 and reg.prep_.y_bound == 1 + abs(b)
    np.testing.assert_allclose(reg.predict(X[:20]), np.clip(
        [reg.learner_.predict_one(x) + b for x in X[:20]], -1, 1), rtol=1e-12, atol=1e-15)


def test_a_centre_within_three_stds_of_zero_is_dropped():
    # 40 rows at epsilon 0.1: the centre's std is about 2 * 97 / 40 = 4.9 label bounds,
    # so only a draw beyond 3 stds (0.3%) would be kept; 3,000 rows at epsilon 1 (std
    # 0.01) keep a true mean of 0.5
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2)) / 3
    reg = OnlineRegressor(epsilon=0.1, random_state=0).fit(X, X[:, 0] * 0.1)
    assert reg.prep_.centre.value == 0.0 and reg.prep_.y_bound == 1.0
    assert reg.prep_.centre.std > 4.0
    kept = OnlineRegressor(epsilon=1.0, random_state=0).fit(np.zeros((3000, 2)),
                                                            np.full(3000, 0.5))
    assert abs(kept.prep_.centre.value - 0.5) < 4 * kept.prep_.centre.std


def test_labels_the_centre_clips_are_counted_and_warned():
    # 36% of the labels above y_bound = 1: the learner's window y_bound + |b| keeps most
    # of them, but the centre's sum reads them clipped, which must not pass in silence
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 2)) / 3
    y = 0.8 + 0.5 * rng.standard_normal(3000)
    with pytest.warns(ClippingWarning, match=r"OnlineRegressor: 10\d\d of 3000 labels "
                      r"\(3\d%\) exceed y_bound=1 and enter the labels' private mean"):
        reg = OnlineRegressor(epsilon=1.0, random_state=0).fit(X, y)
    assert reg.prep_.centre.n_clipped == np.sum(np.abs(y) > 1.0)


def test_raw_labels_beyond_the_bound_are_refused_with_the_bound_to_declare():
    # river's ChickWeights-like labels (35-373) at the default y_bound=1: a model of
    # their clipped values only (measured R^2 -2.9, its non-private twin too)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2)) / 3
    y = 120.0 + 60.0 * rng.standard_normal(400)
    reg = OnlineRegressor(epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"y_bound must bound most labels of y "
                       r"\(100% of them exceed it.*declare y_bound=2\d0"):
        reg.fit(X, y)
    assert not hasattr(reg, "learner_") and not hasattr(reg, "prep_")
    declared = OnlineRegressor(epsilon=1.0, y_bound=300.0, random_state=0).fit(X, y)
    assert abs(declared.intercept_ - 120.0) < 3 * declared.prep_.centre.std + 5.0


def test_a_centred_classifier_falls_back_to_the_private_prior_where_noise_drowns_it():
    # 1,800 rows, 14% positive, features that say little, epsilon 0.1 (river's
    # ImageSegments one-vs-rest measured 0.75-0.86 uncentred against a majority of
    # 0.84-0.88): centred, the margin is the prior's sign
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1800, 8)) / 3
    y = np.where(rng.random(1800) < 0.14 + 0.05 * np.tanh(X[:, 0]), "rare", "common")
    clf = OnlineClassifier(epsilon=0.1, random_state=0, centre_budget=CENTRE_BUDGET)
    clf.fit(X, y)
    assert clf.score(X, y) == pytest.approx(np.mean(y == "common"))
    assert clf.prep_.centre.value < 0 and clf.classes_[0] == "common"
