"""A non-private twin fed its private learner's exact sums (dpol.learners._shared_sums)
releases what it releases summing them itself: the same bits, the same saved state."""

import math
import warnings

import numpy as np
import pytest

from dpol.adapters.registry import make_learner
from dpol.counters._base import EXACT_TAPS
from dpol.errors import NonPrivateWarning
from dpol.learners._shared_sums import _SHARED, share_exact_sums


def _pair(share: bool, **options):
    build = dict(horizon=900, seed=3, fit_intercept=True, y_bound=2.0, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        private = make_learner("ridge", 4, epsilon=1.0, **build)
        twin = make_learner("ridge", 4, epsilon=math.inf, calibration="tight", **build)
    if share:
        assert share_exact_sums(private, twin)
    return private, twin


def _chunks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4)) / 2
    X[[5, 400]] *= 10  # out of bounds: clipped, and counted by both sides
    y = X @ [0.5, -0.2, 0.1, 0.3] + 0.1 * rng.normal(size=900)
    return [(X[lo:hi], y[lo:hi]) for lo, hi in ((0, 250), (250, 251), (251, 700), (700, 900))]


def _state(model):
    counters = model.base._counters
    return [(c.t, c.n_clipped_, c._sum.tobytes()) for c in counters] + [model.base.t_]


@pytest.mark.parametrize("options", [{}, {"solves_per_doubling": None}])
def test_shared_twin_is_bit_identical(options):
    # exact equality, no tolerance: the twin's sums are the private counters' additions
    # in the same order (a running sum from the same elements), so every bit agrees
    shared, alone = _pair(True, **options), _pair(False, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (p1, t1), (p2, t2) = shared, alone
        tap = EXACT_TAPS[p1.base._counters[0]]
        for X, y in _chunks():
            a, b = p1.run(X, y), p2.run(X, y)  # private first, as a chunked run does
            assert np.array_equal(a.weights, b.weights)
            a, b = t1.run(X, y), t2.run(X, y)
            assert not tap.steps  # the shared twin took every row kept for it
            for name in ("weights", "losses", "predictions", "model_predictions"):
                assert np.array_equal(getattr(a, name), getattr(b, name)), name
            assert _state(t1) == _state(t2)
        assert t1.n_clipped_ == t2.n_clipped_ > 0


def test_saved_twin_does_not_share():
    # a twin's saved state holds no private learner: restored, it sums for itself
    private, twin = _pair(True)
    X, y = _chunks()[0]
    private.run(X, y)
    twin.run(X, y)
    restored = type(twin).from_state(twin.get_state())
    assert twin.base in _SHARED and restored.base not in _SHARED
    counter = type(private).from_state(private.get_state()).base._counters[0]
    assert private.base._counters[0] in EXACT_TAPS and counter not in EXACT_TAPS


def test_not_shared():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        private = make_learner("ridge", 4, horizon=90, epsilon=1.0, seed=0)
        other = make_learner("ridge", 4, horizon=91, epsilon=math.inf, seed=0)
        secure = make_learner("ridge", 4, horizon=90, epsilon=1.0, noise="secure")
        twin = make_learner("ridge", 4, horizon=90, epsilon=math.inf, seed=0)
        lifted = make_learner("ridge", 4, horizon=90, epsilon=math.inf, fit_intercept=True)
    assert not share_exact_sums(private, other)  # another schedule's horizon
    assert not share_exact_sums(private, private)  # private: not a twin
    assert not share_exact_sums(secure, twin)  # the secure grid rounds the elements
    assert not share_exact_sums(private, lifted)  # other rows
    assert share_exact_sums(private, twin) and not share_exact_sums(private, twin)  # once
