"""random_state of the estimators: fresh OS entropy by default (never a 31-bit draw a
search can enumerate), a seed only when asked, and a guarantee that says which."""

from __future__ import annotations

import numpy as np

from dpol.adapters import OnlineClassifier, OnlineRegressor, RiverRegressor


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


def test_river_models_are_unseeded_by_default():
    model = RiverRegressor(horizon=10)
    model.learn_one({"a": 0.1}, 0.2)
    assert not model.privacy.seeded
    seeded = RiverRegressor(horizon=10, seed=1)
    seeded.learn_one({"a": 0.1}, 0.2)
    assert seeded.privacy.seeded
