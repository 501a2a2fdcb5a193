"""dpol/datasets/synthetic.py: the seeded streams hold the model their docstrings state,
within the unit bounds, and a Stream splits into disjoint seeded halves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.datasets import Stream, linear_regression_stream, logistic_stream
from dpol.errors import InvalidInputError


def test_regression_rows_and_truth_have_norm_one_and_labels_follow_the_truth():
    s = linear_regression_stream(200, 4, noise_std=0.0, seed=3)
    np.testing.assert_allclose(np.linalg.norm(s.X, axis=1), 1.0, rtol=1e-12)
    assert np.linalg.norm(s.truth) == pytest.approx(1.0, rel=1e-12)
    # without noise |<x, x*>| <= 1 (Cauchy-Schwarz): the clip never binds, y is exact
    np.testing.assert_allclose(s.y, s.X @ s.truth, rtol=0, atol=1e-15)
    noisy = linear_regression_stream(200, 4, noise_std=5.0, seed=3)
    assert np.all(np.abs(noisy.y) <= 1.0) and np.any(np.abs(noisy.y) == 1.0)  # clipped
    np.testing.assert_array_equal(noisy.truth, s.truth)  # the noise is drawn after it


def test_logistic_labels_are_the_separators_sign_flipped_at_the_stated_rate():
    clean = logistic_stream(2000, 5, label_noise=0.0, seed=4)
    np.testing.assert_allclose(np.linalg.norm(clean.X, axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(clean.y, np.where(clean.X @ clean.truth >= 0, 1.0, -1.0))
    noisy = logistic_stream(2000, 5, label_noise=0.2, seed=4)
    # each label flips with probability 0.2: the flipped share has std sqrt(0.16 / 2000)
    # = 0.0089 about 0.2; 4 of them (0.036) bound it with probability > 0.9999
    flipped = np.mean(noisy.y != np.where(noisy.X @ noisy.truth >= 0, 1.0, -1.0))
    assert abs(flipped - 0.2) < 4 * math.sqrt(0.2 * 0.8 / 2000)


def test_a_seed_fixes_the_stream_and_another_seed_changes_it():
    a, b = (linear_regression_stream(50, 3, seed=7) for _ in range(2))
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(linear_regression_stream(50, 3, seed=8).X, a.X)
    c, d = (logistic_stream(50, 3, seed=7) for _ in range(2))
    np.testing.assert_array_equal(c.y, d.y)


def test_split_is_a_seeded_partition_of_the_rows():
    s = Stream(np.arange(20.0).reshape(10, 2), np.arange(10.0), "toy", "none")
    train, test = s.split(0.3, seed=1)
    assert (len(train.y), len(test.y)) == (7, 3) and test.name == "toy (held out)"
    assert sorted([*train.y, *test.y]) == list(range(10))  # disjoint, nothing lost
    np.testing.assert_array_equal(train.X[:, 0], 2 * train.y)  # rows keep their labels
    np.testing.assert_array_equal(s.split(0.3, seed=1)[1].y, test.y)
    with pytest.raises(InvalidInputError, match=r"^test_fraction must"):
        s.split(1.5)


@pytest.mark.parametrize(("call", "name"), [
    (lambda: linear_regression_stream(0), "horizon"),
    (lambda: linear_regression_stream(5, 0), "dim"),
    (lambda: linear_regression_stream(5, noise_std=-0.1), "noise_std"),
    (lambda: logistic_stream(5, 0), "dim"),
    (lambda: logistic_stream(5, label_noise=0.6), "label_noise"),
])
def test_bad_arguments_are_named(call, name):
    with pytest.raises(InvalidInputError, match=f"^{name} must"):
        call()
