"""The estimators that centre the labels on their private mean (the trivial model);
the mean itself: tests/datasets/test_private_label_mean.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from dpol.accounting.closed_forms import gaussian_share, mu_star
from dpol.accounting.events import compose_guarantee
from dpol.adapters import OnlineClassifier, OnlineRegressor
from dpol.adapters._private_prep import CENTRE_BUDGET
from dpol.errors import ClippingWarning


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
                      r"\(3\d%\) lie outside y_bound and enter the labels' private mean.*"
                      r"declare their range y_bound=\(-0\.\d+, 2\)"):
        reg = OnlineRegressor(epsilon=1.0, random_state=0).fit(X, y)
    assert reg.prep_.centre.n_clipped == np.sum(np.abs(y) > 1.0)


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
