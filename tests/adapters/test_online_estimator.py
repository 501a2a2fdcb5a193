"""dpol/adapters/_online_estimator.py: random_state of the scikit-learn estimators, fresh
OS entropy by default (never a 31-bit draw a search can enumerate), a seed only when
asked, and a guarantee that says which; labels mostly beyond y_bound are refused with
the bound to declare."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.adapters import OnlineClassifier, OnlineRegressor
from dpol.errors import InvalidInputError, LabelOffsetWarning


def _data(n: int = 500):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)) / 2
    return X, X @ [0.5, -0.3, 0.2]


def test_no_random_state_draws_fresh_entropy_every_fit():
    X, y = _data()
    a, b = (OnlineRegressor(epsilon=1.0).fit(X, y) for _ in range(2))
    assert not np.array_equal(a.learner_.weights, b.learner_.weights)
    assert a._seeds() == (None, None, None)  # learner's, centre's, fallback's: fresh entropy
    assert not a.privacy_.seeded and "seeded" not in str(a.privacy_)


def test_an_int_or_a_random_state_seeds_and_says_so():
    X, y = _data()
    a, b = (OnlineRegressor(epsilon=1.0, random_state=7).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.learner_.weights, b.learner_.weights)
    assert a.prep_.centre.value == b.prep_.centre.value  # the centre's noise is seeded too
    assert a.privacy_.seeded and "private only while the seed stays secret" in str(a.privacy_)
    clf = OnlineClassifier(epsilon=1.0, random_state=np.random.RandomState(3))
    seed, centre, fallback = clf._seeds()
    # 128 bits of the RandomState, not one 31-bit int; the learner, the centre and the
    # fallback draw from three children of it
    assert isinstance(seed, np.random.SeedSequence) and len(seed.entropy) == 4
    assert seed.entropy == centre.entropy == fallback.entropy
    assert len({seed.spawn_key, centre.spawn_key, fallback.spawn_key}) == 3
    again = OnlineClassifier(epsilon=1.0, random_state=np.random.RandomState(3))._seeds()[0]
    assert seed.entropy == again.entropy
    assert clf.fit(X, np.sign(y)).privacy_.seeded


def test_raw_labels_beyond_the_bound_are_refused_with_the_bound_to_declare():
    # river's ChickWeights-like labels (35-373) at the default y_bound=1: a model of
    # their clipped values only (measured R^2 -2.9, its non-private twin too)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 2)) / 3
    y = 120.0 + 60.0 * rng.standard_normal(400)
    reg = OnlineRegressor(epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"y_bound must bound most labels of y "
                       r"\(100% of them lie outside it.*declare their range, "
                       r"y_bound=\(-?\d+, 2\d0\)"):
        reg.fit(X, y)
    assert not hasattr(reg, "learner_") and not hasattr(reg, "prep_")
    declared = OnlineRegressor(epsilon=1.0, y_bound=300.0, random_state=0).fit(X, y)
    assert abs(declared.intercept_ - 120.0) < 3 * declared.prep_.centre.std + 5.0


def test_a_declared_range_is_the_symmetric_bound_about_its_public_centre():
    # y_bound=(lo, hi) runs exactly the estimator of y_bound=(hi - lo) / 2 on y - c,
    # c = (lo + hi) / 2 (the same seeds, so the same bits), predicting c + its own: the
    # guarantee is that of the bound h, and coef_ / intercept_ are the predictions' model
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 3)) / 2
    y = 200.0 + 40.0 * (X @ [0.5, -0.3, 0.2]) + rng.normal(size=600)
    for budget in (0.1, 0.0):  # centred privately, or not at all
        ranged = OnlineRegressor(epsilon=1.0, y_bound=(150, 250), centre_budget=budget,
                                 random_state=0).fit(X, y)
        shifted = OnlineRegressor(epsilon=1.0, y_bound=50.0, centre_budget=budget,
                                  random_state=0).fit(X, y - 200.0)
        np.testing.assert_array_equal(ranged.predict(X), shifted.predict(X) + 200.0)
        np.testing.assert_array_equal(ranged.coef_, shifted.coef_)
        assert ranged.intercept_ == shifted.intercept_ + 200.0
        assert str(ranged.privacy_) == str(shifted.privacy_)
        inside = np.abs(ranged.predict(X) - 200.0) < 50.0  # the centred clip: [lo, hi]
        np.testing.assert_allclose((X @ ranged.coef_ + ranged.intercept_)[inside],
                                   ranged.predict(X)[inside], rtol=1e-12)
    assert ranged.predict(X).min() >= 150.0 or budget == 0.0


@pytest.mark.parametrize("bad", [(5, 1), (1, float("nan")), (1, 2, 3), (1,), "big"])
def test_a_range_that_is_no_range_is_refused_by_name(bad):
    X, y = _data()
    reg = OnlineRegressor(y_bound=bad)
    with pytest.raises(InvalidInputError, match=r"y_bound must be a bound > 0, 'auto' or a "
                       r"range \(lo, hi\) of finite numbers with lo < hi"):
        reg.fit(X, y)
    assert not hasattr(reg, "learner_")
    with pytest.raises(InvalidInputError, match=r"y_bound must be a number for a classifier"):
        OnlineClassifier(y_bound=(0, 1)).fit(X, np.sign(y))


def test_labels_far_from_zero_in_a_symmetric_bound_are_told_their_range():
    # centred on their private mean b within y_bound = 300, labels 200 +- 16 leave the
    # learner a window of 300 + |b|; the advice names the range, and following it helps
    # (R^2 0.38 -> 0.83 on the class doctest's stream)
    X, y = _data(2000)
    grams = 200.0 + 100.0 * y
    with pytest.warns(LabelOffsetWarning, match=r"declare their range, y_bound=\(1\d0, 2\d0\)"):
        OnlineRegressor(epsilon=1.0, y_bound=300.0, random_state=0).fit(X, grams)
