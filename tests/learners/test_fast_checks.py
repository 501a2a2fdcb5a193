"""The per-step checks decide exactly as the vectorized ones (issue 8's learn_one speed).

``as_vector`` and ``point_argument`` answer the common case with a cheaper test than
before (a finite ``x . x``; the ufunc's own max-reduce), ``exceeds_l2`` is the one
per-step clip test. These tests aim at the edges: norms within a few ulps of the bound,
entries whose squares overflow, NaN and inf (``point_argument``'s: tests/sets/test_sets_base.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpol._validation import as_vector
from dpol.clipping import clip_examples, exceeds_l2
from dpol.counters import BinaryTreeCounter
from dpol.errors import InvalidInputError
from dpol.learners import PrivateFTAL
from dpol.losses import Regularized, SquaredLoss
from dpol.sets import L2Ball


def _einsum_decision(vec: np.ndarray, bound: float) -> bool:
    """clip_rows_l2's test, written out: the einsum row norm above the bound."""
    rows = vec[None, :]
    with np.errstate(over="ignore"):
        return bool(np.sqrt(np.einsum("ij,ij->i", rows, rows))[0] > bound)


def _borderline(rng: np.random.Generator, d: int, bound: float, n: int) -> np.ndarray:
    """n vectors of norm bound, each then moved by -8..8 ulps entrywise (both sides of it)."""
    V = rng.normal(size=(n, d))
    V *= (bound / np.linalg.norm(V, axis=1))[:, None]
    steps = rng.integers(-8, 9, size=(n, 1))
    return V + steps * np.spacing(np.abs(V))


@pytest.mark.parametrize("d", [1, 2, 10, 90, 4095])
@pytest.mark.parametrize("bound", [1.0, 0.3, 7.5])
def test_exceeds_l2_is_the_einsum_test_at_the_bound(d, bound):
    rng = np.random.default_rng(d)
    V = _borderline(rng, d, bound, 400)
    got = [exceeds_l2(v, bound) for v in V]
    want = [_einsum_decision(v, bound) for v in V]
    assert got == want
    # the sample straddles the bound, else it would not test the decision
    assert 0 < sum(want) < len(want)


def test_exceeds_l2_on_overflowing_and_infinite_bounds():
    huge = np.array([1e200, -1e200, 3.0])  # finite, its squares overflow
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning escapes
        assert exceeds_l2(huge, 1.0) is True
        assert exceeds_l2(huge, np.inf) is False
        assert exceeds_l2(np.zeros(3), 0.0) is False


@pytest.mark.parametrize("d", [2, 10, 90])
def test_counter_add_loop_and_run_clip_borderline_elements_alike(d):
    # elements at the bound to within ulps: add's per-step test and run's vectorized clip
    # must choose the same rows, so the releases are bit for bit equal and so are the counts
    rows = _borderline(np.random.default_rng(1), d, 1.0, 64)
    a = BinaryTreeCounter(64, dim=d, epsilon=1.0, delta=1e-5, seed=3)
    b = BinaryTreeCounter(64, dim=d, epsilon=1.0, delta=1e-5, seed=3)
    loop = np.stack([a.add(r) for r in rows])
    np.testing.assert_array_equal(loop, b.run(rows))
    assert a.n_clipped_ == b.n_clipped_


def test_learn_one_and_run_clip_borderline_features_alike():
    d, n = 10, 64
    X = _borderline(np.random.default_rng(2), d, 1.0, n)
    y = np.random.default_rng(3).uniform(-1, 1, n)

    def make():
        return PrivateFTAL(d, loss=Regularized(SquaredLoss(), 1.0), domain=L2Ball(d),
                           horizon=n, epsilon=1.0, delta=1e-5, counter="tree", seed=0)

    a, b = make(), make()
    loop = []
    for x, label in zip(X, y, strict=True):
        loop.append(a.weights)
        a.learn_one(x, label)
    np.testing.assert_array_equal(np.array(loop), b.run(X, y).weights)
    assert a.n_clipped_ == b.n_clipped_


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_as_vector_fast_path_refuses_nonfinite_entries(bad):
    v = np.array([0.5, bad, -0.5])
    with pytest.raises(InvalidInputError, match=r"^x must contain only finite values"):
        as_vector("x", v, 3)
    w = np.array([np.inf, -np.inf, 1.0])  # inf - inf: the sum of squares is still inf
    with pytest.raises(InvalidInputError, match="finite"):
        as_vector("x", w, 3)


def test_as_vector_keeps_finite_entries_whose_squares_overflow():
    v = np.array([1e300, -1e300, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = as_vector("x", v, 3)
    np.testing.assert_array_equal(out, v)
    assert out is not v


def test_clip_examples_copies_unless_told_the_rows_are_its_own():
    # copy=True (default): the caller's X is kept; copy=False: the same array, clipped in
    # place (run's own copy); both give the same clipped rows and count
    X = np.array([[3.0, 4.0], [0.1, 0.0]])
    y = np.array([0.5, -2.0])
    kept, _, n_kept = clip_examples(X, y, 1.0, 1.0)
    assert kept is not X and X[0].tolist() == [3.0, 4.0]
    own, _, n_own = clip_examples(X, y, 1.0, 1.0, copy=False)
    assert own is X and np.array_equal(own, kept) and n_own == n_kept == 2
