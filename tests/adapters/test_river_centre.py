"""dpol/adapters/_river_centre.py: RiverRegressor(centre_budget > 0) holds back a first
block of rows, releases their labels' private mean, then predicts around it; its
arguments are checked and a refused learner keeps nothing of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.accounting.closed_forms import gaussian_share, resolve_delta
from dpol.adapters.river import RiverRegressor
from dpol.errors import InvalidInputError, NonPrivateWarning


def _labels_far_from_zero(model, n: int, seed: int = 0) -> list[float]:
    """Learn n rows with labels 150 + 80 a - 40 b (noise std 10); the prequential
    predictions."""
    rng = np.random.default_rng(seed)
    predictions = []
    for _ in range(n):
        a, b = rng.normal(size=2) / 2
        x = {"a": a, "b": b}
        predictions.append(model.predict_one(x))
        model.learn_one(x, 150.0 + 80.0 * a - 40.0 * b + 10.0 * rng.normal())
    return predictions


def test_the_centre_waits_for_its_block_then_predicts_around_it():
    model = RiverRegressor(epsilon=1.0, y_bound=400.0, horizon=400, seed=0,
                           centre_budget=0.1, centre_rows=200)
    predictions = _labels_far_from_zero(model, 200)
    # nothing released before the block is whole: 0, no guarantee, no learner
    assert predictions == [0.0] * 200
    centre = model.centre_.centre
    # the block's mean: std z_c 2 y_bound / 200 = 11.8 x 800 / 200 = 47 (z_c at a share
    # of 0.1 of epsilon 1: 11.8), the labels' mean 150 +- 3: kept beyond 3 stds (141)
    # with probability ~0.6 a draw; the seed is fixed, and the value checked against
    # its std: within 4 of them of 150
    assert centre.std == pytest.approx(11.797 * 800 / 200, rel=1e-3)
    assert centre.value != 0.0 and abs(centre.value - 150.0) < 4 * centre.std
    assert model.learner_.t == 200  # the held rows, streamed in order
    assert model.learner_.y_bound == pytest.approx(400.0 + abs(centre.value))
    assert model.privacy.epsilon == pytest.approx(1.0, rel=1e-6)
    events = [e.name for e in model.centre_.centre.privacy_events()]
    assert events == ["private label mean"]
    inner = model.learner_.predict_one(np.array([0.2, 0.1]))
    assert model.predict_one({"a": 0.2, "b": 0.1}) == pytest.approx(
        min(400.0, max(-400.0, inner + centre.value)))


def test_the_twin_fits_labels_far_from_zero_with_or_without_the_centre():
    # epsilon = inf: no noise anywhere (deterministic). Labels 150 + 80 a - 40 b + noise of
    # std 10 (variance 2,200 about their mean): least squares' prequential MSE on rows
    # 400-600 is about the noise's 100. The ridge (alpha = 0.001, REGRESSION_RIDGE_ALPHA)
    # barely shrinks an intercept of 150, so both twins stay below 150 (measured 133
    # without the centre, 136 with it; at alpha = 0.01 the intercept's shrinkage cost the
    # plain twin 257, which the centre cut to 125)
    with pytest.warns(NonPrivateWarning):
        plain = RiverRegressor(epsilon=math.inf, y_bound=400.0, horizon=600, seed=0)
        centred = RiverRegressor(epsilon=math.inf, y_bound=400.0, horizon=600, seed=0,
                                 centre_budget=0.1, centre_rows=100)
        p, c = (np.array(_labels_far_from_zero(m, 600)[400:]) for m in (plain, centred))
    rng, y = np.random.default_rng(0), []  # the labels, drawn as _labels_far_from_zero does
    for _ in range(600):
        a, b = rng.normal(size=2) / 2
        y.append(150.0 + 80.0 * a - 40.0 * b + 10.0 * rng.normal())
    y = np.array(y[400:])
    assert np.mean((p - y) ** 2) < 150.0 and np.mean((c - y) ** 2) < 150.0
    assert math.isinf(centred.privacy.epsilon)


def test_bad_centre_arguments_are_refused_at_construction():
    with pytest.raises(InvalidInputError, match="centre_budget must be"):
        RiverRegressor(centre_budget=1.0)
    with pytest.raises(InvalidInputError, match="centre_rows must be"):
        RiverRegressor(centre_budget=0.1, centre_rows=0)
    with pytest.raises(InvalidInputError, match="centre_budget must be 0 for add/remove"):
        RiverRegressor(centre_budget=0.1, learner_options={"neighbouring": "add_remove"})
    assert RiverRegressor().centre_budget == 0.0  # off by default: the same releases


def test_a_refused_learner_keeps_nothing_of_the_centre():
    model = RiverRegressor(centre_budget=0.1, centre_rows=2, counter="no-such-counter")
    model.learn_one({"a": 0.1}, 0.5)
    with pytest.raises(InvalidInputError, match="counter"):
        model.learn_one({"a": 0.2}, 0.4)
    assert model.centre_ is None and model.learner_ is None and model.privacy is None


def test_the_centre_noise_has_the_stated_scale_through_river_regressor():
    # the whole door: RiverRegressor's centre, released after its block of n = 20 rows
    # with labels 0.9 (y_bound 1), at epsilon 8 on half the Gaussian budget. The std the
    # derivation (dpol.adapters._river_centre, Privacy) states is z_c 2 y_bound / n, z_c
    # the share's multiplier computed here from the closed form, not read from the model.
    # z_c = 0.85 puts 0.9 at 10.6 stds, so the 3-std significance rule drops a draw with
    # probability 1.5e-14 (7.6 stds) and never biases the sample. 200 seeds: the sample variance
    # (about the known label) over a hypothesised one has std se = sqrt(2 / 200) = 0.1
    # about 1, so the right scale lies within 3.5 se (0.35; missed with probability 5e-4)
    # of 1. Then the ratio to 2/3 or 3/2 of the scale is >= 2.25 x 0.65 = 1.46 or
    # <= 0.44 x 1.35 = 0.6, both more than 0.35 from 1: the test tells them apart
    n, label, epsilon, share = 20, 0.9, 8.0, 0.5
    z = gaussian_share(epsilon, resolve_delta(None, n), share)[0]
    std = z * 2.0 / n
    values = []
    for seed in range(200):
        model = RiverRegressor(epsilon=epsilon, y_bound=1.0, horizon=n, seed=seed,
                               centre_budget=share, centre_rows=n)
        for _ in range(n):
            model.learn_one({"a": 0.1}, label)
        values.append(model.centre_.centre.value)
    assert model.centre_.centre.std == pytest.approx(std, rel=1e-9)
    variance = float(np.mean((np.array(values) - label) ** 2))
    tolerance = 3.5 * math.sqrt(2 / 200)
    assert abs(variance / std**2 - 1.0) < tolerance
    for wrong in (2 / 3, 3 / 2):
        assert abs(variance / (wrong * std) ** 2 - 1.0) > tolerance


@pytest.mark.parametrize("budget", [0.0, 0.1])
def test_a_declared_range_is_the_symmetric_bound_about_its_public_centre(budget):
    # y_bound=(150, 250) streams y - 200 within 50, the same seeds as y_bound=50 on the
    # shifted labels: the same predictions plus 200, the same guarantee
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 2)) / 2
    y = 200.0 + 40.0 * (X @ [0.5, -0.3]) + rng.normal(size=1200)
    ranged = RiverRegressor(horizon=1200, seed=0, y_bound=(150, 250), centre_budget=budget)
    shifted = RiverRegressor(horizon=1200, seed=0, y_bound=50.0, centre_budget=budget)
    for x, v in zip(X, y, strict=True):
        row = {"a": x[0], "b": x[1]}
        ranged.learn_one(row, v)
        shifted.learn_one(row, v - 200.0)
    test = [{"a": a, "b": b} for a, b in rng.normal(size=(50, 2)) / 2]
    np.testing.assert_allclose([ranged.predict_one(r) for r in test],
                               [shifted.predict_one(r) + 200.0 for r in test], rtol=0,
                               atol=1e-9)  # + 200 then - 200 rounds in the last bits
    assert str(ranged.privacy) == str(shifted.privacy)
    with pytest.raises(InvalidInputError, match="y_bound must be a bound > 0, 'auto' or a "
                       "range"):
        RiverRegressor(y_bound=(3, 1)).learn_one({"a": 1.0}, 2.0)
