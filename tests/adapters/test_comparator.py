"""The regret's comparator of registry learners: lifted coordinates, K outputs, kernels."""

from __future__ import annotations

import numpy as np

from dpol.adapters import make_learner
from dpol.adapters._comparator import comparator, zero_point
from dpol.evaluation import best_fixed_point
from dpol.losses import Regularized, SquaredLoss


def _stream(n: int = 60, d: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-0.5, 0.5, size=(n, d))
    return X, np.clip(X @ np.array([0.6, -0.4, 0.2]) + 0.1, -1.0, 1.0)


def test_zero_point_is_in_the_coordinates_the_comparator_uses():
    assert zero_point(make_learner("ridge", 3, horizon=10, epsilon=1.0, seed=0,
                                   fit_intercept=True)).shape == (4,)  # lifted
    assert zero_point(make_learner("kernel", 3, horizon=10, epsilon=1.0, seed=0)).shape == (3,)
    k_outputs = make_learner("pqftl", 3, horizon=10, epsilon=1.0, seed=0, options={"outputs": 2})
    assert zero_point(k_outputs).shape == (3, 2)


def test_comparator_with_an_intercept_is_the_inner_learners_on_the_lifted_rows():
    X, y = _stream()
    model = make_learner("ridge", 3, horizon=len(y), epsilon=1.0, seed=0, fit_intercept=True)
    np.testing.assert_array_equal(comparator(model, X, y),
                                  comparator(model.learner, model.rows(X), y))
    assert comparator(model, X, y).shape == (4,)


def test_comparator_of_k_outputs_is_each_columns_best_point():
    X, y = _stream()
    Y = np.column_stack([y, -y])
    model = make_learner("pqftl", 3, horizon=len(y), epsilon=1.0, seed=0,
                         options={"outputs": 2})
    loss = Regularized(SquaredLoss(x_bound=model.x_bound), model.alpha)
    u = comparator(model, X, Y)
    for k in range(2):
        np.testing.assert_allclose(u[:, k], best_fixed_point(loss, X, Y[:, k]), rtol=1e-10)
    # the columns' problems mirror each other: so do their points
    np.testing.assert_allclose(u[:, 1], -u[:, 0], rtol=1e-8, atol=1e-12)
