"""dpol.clipping: rows scaled to the declared bound keep their direction, only real
overshoots are counted, huge rows survive, labels are clipped, the caller's arrays kept.

Tolerance: a scaled row's norm is the bound to within a relative 1e-12, the rounding
margin the module itself allows (a norm and a division, a few ulps at d <= 50, far below
it); directions agree to 1e-14 per entry of the unit vectors for the same reason. The
per-step test (``exceeds_l2``) against the vectorized one is in
tests/learners/test_fast_checks.py.
"""

from __future__ import annotations

import warnings

import numpy as np

from dpol.clipping import clip_examples, clip_norms, clip_rows_l2, scale_rows_l2

REL = 1e-12


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_rows_above_the_bound_reach_it_in_their_direction_the_rest_untouched():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 50)) * rng.uniform(0.01, 0.4, size=(200, 1))
    before = X.copy()
    out, n = clip_rows_l2(X, 2.5)
    over = np.linalg.norm(before, axis=1) > 2.5
    assert out is X and n == over.sum() and 0 < n < 200  # both kinds of row present
    assert np.allclose(np.linalg.norm(X[over], axis=1), 2.5, rtol=REL, atol=0.0)
    assert np.allclose(_unit(X[over]), _unit(before[over]), rtol=0.0, atol=1e-14)
    assert np.array_equal(X[~over], before[~over])  # bit for bit


def test_a_norm_a_rounding_step_above_the_bound_is_scaled_but_not_counted():
    row = np.array([[3.0, 4.0]])  # norm 5
    for excess, counted in ((1e-13, 0), (1e-11, 1)):
        rows = row * (1.0 + excess)
        _, n = clip_rows_l2(rows, 5.0)
        assert n == counted and np.linalg.norm(rows) <= 5.0 * (1.0 + 1e-15)


def test_huge_finite_rows_keep_their_direction():
    rows = np.array([[1e300, -1e300, 0.0], [1e300, 1.0, 0.0], [1e200, 1e200, 1e200]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning escapes
        norms = clip_norms(rows)
        assert np.isinf(norms).all()  # every norm overflowed: the rescue path
        scale_rows_l2(rows, norms, norms > 1.0, 1.0)
    want = np.array([[1.0, -1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    assert np.allclose(rows, _unit(want), rtol=0.0, atol=1e-14)


def test_clip_examples_clips_labels_and_counts_each_example_once():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [0.0, 0.1]])
    y = np.array([0.5, -3.0, 2.0, 1.0])
    X0, y0 = X.copy(), y.copy()
    Xc, yc, n = clip_examples(X, y, 1.0, 1.0)
    # rows 0 (x), 1 (y), 2 (both): three examples; row 3 is at the label bound, not over
    assert n == 3
    assert yc.tolist() == [0.5, -1.0, 1.0, 1.0]
    assert np.allclose(Xc[[0, 2]], [[0.6, 0.8], [0.6, 0.8]], rtol=REL, atol=0.0)
    assert np.array_equal(Xc[[1, 3]], X0[[1, 3]])
    assert np.array_equal(X, X0) and np.array_equal(y, y0)  # the caller's arrays kept


def test_nothing_over_the_bounds_comes_back_as_it_was():
    X, y = np.array([[0.6, 0.8]]), np.array([-1.0])
    Xc, yc, n = clip_examples(X, y, 1.0, 1.0)
    assert n == 0 and np.array_equal(Xc, X) and np.array_equal(yc, y)
    assert clip_rows_l2(np.zeros((3, 2)), 1.0)[1] == 0
