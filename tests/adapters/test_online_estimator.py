"""dpol/adapters/_online_estimator.py: random_state of the scikit-learn estimators, fresh
OS entropy by default (never a 31-bit draw a search can enumerate), a seed only when
asked, and a guarantee that says which; labels mostly beyond y_bound are refused with
the bound to declare."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.adapters import OnlineClassifier, OnlineRegressor
from dpol.errors import InvalidInputError


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
                       r"\(100% of them exceed it.*declare y_bound=2\d0"):
        reg.fit(X, y)
    assert not hasattr(reg, "learner_") and not hasattr(reg, "prep_")
    declared = OnlineRegressor(epsilon=1.0, y_bound=300.0, random_state=0).fit(X, y)
    assert abs(declared.intercept_ - 120.0) < 3 * declared.prep_.centre.std + 5.0
