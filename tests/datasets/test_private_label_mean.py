"""dpol/datasets/private_label_mean.py: the labels' mean by the Gaussian mechanism, its
noise at the stated scale, its sensitivity attained, and its refusals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpol.datasets import private_label_mean
from dpol.errors import InvalidInputError


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
