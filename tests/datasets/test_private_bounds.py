"""Private bounds: OpenDP's private quantile of row norms and labels, its replace-one
epsilon, its accuracy, its composition with a learner's events and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

dp = pytest.importorskip("opendp.prelude")

from dpol.accounting.events import compose_guarantee  # noqa: E402
from dpol.adapters.registry import make_learner  # noqa: E402
from dpol.datasets.private_bounds import GRID, parse_bound, private_bounds  # noqa: E402
from dpol.errors import InvalidInputError  # noqa: E402


def _scale_one_map(alpha, size, d_in):
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    return dp.m.make_private_quantile(domain, dp.symmetric_distance(), dp.max_divergence(),
                                      candidates=list(GRID), alpha=alpha, scale=1.0).map(d_in)


@pytest.mark.parametrize("alpha", [0.5, 0.95, 0.98])
def test_replace_one_epsilon_is_two_over_scale_on_the_sized_domain(alpha):
    # docs/derivations/private_bounds.md: score sensitivity 1 under one replacement (sized
    # domain), non-monotone exponential mechanism: epsilon = 2 * 1 / scale; the unsized
    # domain reads a replacement as symmetric distance 2, sensitivity 2 max(a, 1 - a)
    assert _scale_one_map(alpha, 1000, 2) == pytest.approx(2.0, rel=1e-12)
    assert _scale_one_map(alpha, None, 2) == pytest.approx(4.0 * max(alpha, 1 - alpha),
                                                           rel=1e-12)


def test_events_are_pure_replace_one_and_split_the_epsilon():
    rng = np.random.default_rng(1)
    b = private_bounds(rng.normal(size=(500, 3)), rng.normal(size=500), epsilon=0.3)
    events = b.privacy_events()
    assert len(events) == 2 and b.epsilon == pytest.approx(0.3, rel=1e-12)
    for e in events:
        assert e.neighbouring == "replace_one" and e.name == "private quantile"
        assert e.pure_epsilon == pytest.approx(0.15, rel=1e-12) and e.pure_epsilon <= 0.15
    g = compose_guarantee(events, 1e-5)
    assert (g.epsilon, g.delta) == (pytest.approx(0.3, rel=1e-12), 0.0)
    only_y = private_bounds(None, rng.normal(size=500), epsilon=0.3)
    assert only_y.x_bound is None and only_y.epsilons == (pytest.approx(0.3),)


def test_estimate_is_within_the_noisy_max_utility_of_the_quantile():
    # 10,000 rows, epsilon 1 split in two (0.5 per release). With no ties the score is
    # |#{v < c} - a n|; with probability >= 1 - beta the release is within
    # m + (2 / 0.5) ln(K / beta) of the best candidate's score m (a union bound over the
    # K candidates of the noisy max with exponential noise of scale 2 / 0.5, as for the
    # exponential mechanism). beta = 1e-9 per release: 4 ln(181e9) = 104 rows. OpenDP
    # cannot be seeded.
    rng = np.random.default_rng(2)
    n, a = 10_000, 0.95
    X = rng.normal(size=(n, 5)) * rng.uniform(0.5, 2.0, size=(n, 1))
    y = 3.0 * rng.standard_t(4, size=n)
    b = private_bounds(X, y, epsilon=1.0, quantile=a)
    grid = np.array(GRID)
    slack = (2.0 / 0.5) * math.log(len(grid) / 1e-9)
    for values, released in ((np.linalg.norm(X, axis=1), b.x_bound), (np.abs(y), b.y_bound)):
        below = np.searchsorted(np.sort(values), grid)  # #{v < c} per candidate
        best = np.min(np.abs(below - a * n))
        rank = np.sum(values < released)
        assert released in GRID
        assert abs(rank - a * n) <= best + slack, (released, rank, best)
    assert b.note() is None and b.min_rows() < n


def test_events_compose_with_a_learners_into_one_guarantee():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(2000, 3)), rng.normal(size=2000)
    b = private_bounds(X, y, epsilon=0.1)
    model = make_learner("pqftl", 3, horizon=2000, epsilon=0.9, seed=0,
                         x_bound=b.x_bound, y_bound=b.y_bound)
    g = compose_guarantee([*b.privacy_events(), *model.privacy_events()], 1e-5)
    learner = compose_guarantee(model.privacy_events(), 1e-5)
    # pure epsilons add to the (epsilon, delta) of the rest (basic composition)
    assert g.epsilon == pytest.approx(learner.epsilon + 0.1, rel=1e-9)
    assert g.delta == 1e-5 and g.neighbouring == "replace_one"
    assert compose_guarantee([*b.privacy_events(), *model.privacy_events()], 1e-5,
                             target=1.0).epsilon == 1.0


def test_few_rows_are_said_to_be_unreliable():
    b = private_bounds(np.ones((442, 2)), None, epsilon=0.05)
    # 2 ln(181 / 0.05) / (0.05 * 0.05) = 6556 rows
    assert b.min_rows() == 6556 and "442 rows" in b.note() and "6556" in b.note()


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": math.inf}, "epsilon"),
    ({"epsilon": 1.0, "quantile": 1.0}, "quantile"),
    ({"epsilon": 1.0, "candidates": [1.0]}, "candidates"),
    ({"epsilon": 1.0, "candidates": [1.0, -2.0]}, "candidates"),
    ({"epsilon": 1.0, "candidates": "ab"}, "candidates"),
])
def test_bad_arguments_are_named(kwargs, name):
    with pytest.raises(InvalidInputError, match=f"^{name} must"):
        private_bounds(np.ones((5, 2)), np.ones(5), **kwargs)


def test_bad_data_is_named():
    with pytest.raises(InvalidInputError, match=r"^X must"):
        private_bounds(np.ones(5), None, epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"^X must"):
        private_bounds(np.array([[1.0, np.nan]]), None, epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"^y must"):
        private_bounds(np.ones((5, 2)), np.ones(4), epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"^y must"):
        private_bounds(None, np.array([1.0, np.inf]), epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"^X must"):
        private_bounds(None, None, epsilon=1.0)
    with pytest.raises(InvalidInputError, match=r"^x_bound must"):
        parse_bound("x_bound", "-1")


def test_a_huge_finite_row_counts_above_every_candidate_and_is_not_refused():
    # its norm overflows to inf (as in the learner's clip): refusing it would tell a
    # neighbour with such a row apart by an error, not by a noisy release; above every
    # candidate, it scores as any row above the grid does
    X = np.random.default_rng(0).normal(size=(2000, 2))
    X[0] = [1e200, 1e200]
    y = X[:, 1].copy()
    y[1] = 1.7e308
    b = private_bounds(X, y, epsilon=4.0)
    assert b.x_bound in GRID and b.y_bound in GRID and b.x_bound < 10.0
