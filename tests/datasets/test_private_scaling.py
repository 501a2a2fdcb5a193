"""dpol/datasets/private_scaling.py: per-feature private quantiles recover the features'
ranges, spend the epsilon in shares that need the same rows, and bad input is named."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("opendp")

from dpol.datasets.private_bounds import GRID
from dpol.datasets.private_scaling import private_scaling
from dpol.errors import InvalidInputError

STEP = GRID[1] / GRID[0]  # ratio between neighbouring candidates, 10 ** (1 / 20)
MEANS, SDS = np.array([500.0, -3.0, 0.0]), np.array([200.0, 1.0, 0.01])


def test_scaling_recovers_the_features_ranges_and_spends_epsilon():
    # the rows of test_private_prep.py's regression stream (seed 0)
    rng = np.random.default_rng(0)
    X = rng.normal(MEANS, SDS, size=(60_000, 3))
    y = 100.0 + 40.0 * (((X - MEANS) / SDS) @ [0.6, -0.5, 0.3]) + rng.normal(0.0, 5.0, 60_000)
    s = private_scaling(X, y, epsilon=2.0)
    # the 10% / 90% quantiles of N(m, sd) are m -+ 1.2816 sd: centre m, half-spread 1.28 sd.
    # A release is a grid point: within one grid ratio (12%) of the true quantile when the
    # rows suffice (60,000 > min_rows, so the exponential mechanism lands next to it)
    assert s.note() is None and s.n >= s.min_rows()
    assert np.all(np.abs(s.center - [500.0, -3.0, 0.0]) < (STEP - 1) * 1.2816 * np.array(
        [200.0, 1.0, 0.01]) + np.abs([500.0, 3.0, 0.0]) * (STEP - 1))
    assert np.all(np.abs(np.log(s.scale / (1.2816 * np.array([200.0, 1.0, 0.01]))))
                  < 2 * math.log(STEP))
    assert math.isclose(s.epsilon, 2.0, rel_tol=1e-9) and len(s.epsilons) == 2 * 3 + 4
    # every release needs the same rows: shares in proportion to 1 / min(a, 1 - a)
    ratio = np.array(s.epsilons) * np.minimum(s.levels, 1 - np.array(s.levels))
    assert np.allclose(ratio, ratio[0], rtol=1e-6)


def test_classification_scales_the_features_only():
    # no labels: 2 d + 1 releases (d features' two quantiles, the norms' bound), which
    # spend the whole epsilon; the label's centre, scale and bound are not released
    X = np.random.default_rng(1).normal(size=(500, 2))
    s = private_scaling(X, epsilon=0.5)
    assert (s.y_center, s.y_scale, s.y_bound) == (None, None, None)
    assert len(s.epsilons) == 5 and math.isclose(s.epsilon, 0.5, rel_tol=1e-9)
    assert s.center.shape == s.scale.shape == (2,) and s.x_bound in GRID


@pytest.mark.parametrize(("args", "kwargs", "name"), [
    ((np.ones((5, 2)),), {"epsilon": 0.0}, "epsilon"),
    ((np.ones((5, 2)),), {"epsilon": 1.0, "quantile": 0.5}, "quantile"),
    ((np.ones(5),), {"epsilon": 1.0}, "X"),
    ((np.array([[1.0, np.inf]]),), {"epsilon": 1.0}, "X"),
    ((np.ones((5, 2)), np.ones(4)), {"epsilon": 1.0}, "y"),
    ((np.ones((2, 2)), np.array([1.0, np.nan])), {"epsilon": 1.0}, "y"),
])
def test_bad_arguments_are_named(args, kwargs, name):
    with pytest.raises(InvalidInputError, match=rf"^{name} must"):
        private_scaling(*args, **kwargs)
