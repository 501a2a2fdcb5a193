"""PrivateMiniBatchFTRL's Privacy section, checked: the schedule gives the participation
(E, b), the counter's sensitivity covers every pattern (brute force), zero noise is plain
mini-batch gradient descent, and the noise has the stated scale."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpol.accounting.closed_forms import gaussian_epsilon
from dpol.counters.strategies._participation import Participation, brute_force_sensitivity_sq
from dpol.errors import InvalidInputError, NonPrivateWarning
from dpol.learners.dp_matrix_factorization import (
    PrivateMiniBatchFTRL,
    StepIndex,
    batch_steps,
    gradient_sum,
)

TINY = dict(n_rows=6, batch_size=2, epochs=2, epsilon=1.0, delta=1e-5, seed=0)


def test_each_row_is_in_one_step_of_every_epoch():
    """Row i is in batch s(i) of every epoch (steps s, s + b, ...: the pattern (E, b)), and
    the batches of an epoch partition the rows, whatever the partition the ids arrive in."""
    ids = np.arange(1000)
    index = StepIndex(ids, 7, shuffle_seed=3)
    rows = np.concatenate([index.rows(s) for s in range(7)])
    assert sorted(rows.tolist()) == ids.tolist()
    steps = batch_steps(ids, 7, shuffle_seed=3)
    for s in range(7):  # the step of a row is a function of its id alone
        assert (steps[index.rows(s)] == s).all()
    assert np.array_equal(np.concatenate([batch_steps(ids[:400], 7, 3),
                                          batch_steps(ids[400:], 7, 3)]), steps)


@pytest.mark.parametrize("counter", ["blt", "banded", "tree"])
def test_sensitivity_covers_every_participation_pattern(counter):
    """T = 6 steps, E = 2 epochs of b = 3: every pattern of <= 2 steps >= 3 apart,
    enumerated on the counter's encoder, times 2 C (a replaced record's clipped gradient
    changes by at most 2 C at each of its steps) is at most the counter's sensitivity;
    exactly it for the Toeplitz family (blt, banded), an upper bound for the tree."""
    m = PrivateMiniBatchFTRL(2, clip=0.5, counter=counter, **TINY)
    c = m._counter
    assert m.participation == Participation(2, 3)
    enc = np.column_stack([c.node_values(np.eye(6)[:, [j]]).ravel() for j in range(6)])
    brute = 2 * 0.5 * math.sqrt(brute_force_sensitivity_sq(enc, m.participation))
    assert brute <= c.sensitivity * (1 + 1e-12)
    if counter != "tree":
        assert c.sensitivity == pytest.approx(brute, rel=1e-9)


def _reference(X, y, *, lr, clip, steps, b, seed):
    """Non-private mini-batch gradient descent on the logistic loss, row by row in Python."""
    theta, total, out = np.zeros(X.shape[1]), np.zeros(X.shape[1]), []
    step_of = batch_steps(np.arange(len(y)), b, seed)
    for t in range(steps):
        for i in np.flatnonzero(step_of == t % b):
            g = -y[i] / (1 + math.exp(y[i] * (X[i] @ theta))) * X[i]
            total += g * min(1.0, clip / np.linalg.norm(g))
        theta = -lr * total / (len(y) // b)
        out.append(theta.copy())
    return np.array(out)


def test_zero_noise_is_mini_batch_gradient_descent():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.sign(X[:, 0] + 0.3)
    with pytest.warns(NonPrivateWarning):
        m = PrivateMiniBatchFTRL(3, n_rows=60, batch_size=10, epochs=3, epsilon=math.inf,
                                 clip=0.4, lr=0.7, shuffle_seed=2, counter="tree").fit(X, y)
    ref = _reference(X, y, lr=0.7, clip=0.4, steps=18, b=6, seed=2)
    assert np.allclose(np.array(m.iterates_), ref, rtol=0, atol=1e-12)
    assert m.n_clipped_ > 0  # the clipping rule was exercised


def test_noise_has_the_stated_scale():
    """Zero features: every gradient is 0 and theta_t = -lr / B * noise_t. The stated std
    is z * 2 C * sqrt(brute-force pattern sum) per tree node, popcount(t) nodes at step t
    (binary tree), z certified by dp-accounting at (epsilon, delta).

    Tolerance: N = T d = 4 * 4000 standardized draws; their mean square has std
    sqrt(2 / N) = 0.011 if independent and at most sqrt(2 / d) = 0.022 if the 4 steps
    of a coordinate were fully correlated: 0.1 is > 4.5 sigma, while a scale 2/3 or 3/2
    times the stated one gives a mean square 2.25 or 0.444, 1.25 or 0.56 away."""
    d = 4000
    m = PrivateMiniBatchFTRL(d, n_rows=4, batch_size=2, epochs=2, epsilon=1.0, delta=1e-5,
                             counter="tree", clip=1.0, lr=3.0, seed=5)
    m.fit(np.zeros((4, d)), np.ones(4))
    z = m._counter.noise_multiplier
    assert gaussian_epsilon(z, 1e-5) == pytest.approx(1.0, rel=1e-3)
    enc = np.column_stack([m._counter.node_values(np.eye(4)[:, [j]]).ravel()
                           for j in range(4)])
    sigma = z * 2.0 * math.sqrt(brute_force_sensitivity_sq(enc, Participation(2, 2)))
    nodes = np.array([bin(t).count("1") for t in range(1, 5)])
    stated = 3.0 / 2 * sigma * np.sqrt(nodes)
    assert np.allclose(stated, [m.iterate_std(t) for t in range(1, 5)], rtol=1e-12)
    theta = np.array(m.iterates_)
    accepted = [abs(np.mean((theta / (s * stated[:, None])) ** 2) - 1) < 0.1
                for s in (2 / 3, 1.0, 3 / 2)]
    assert accepted == [False, True, False]


def test_state_round_trip_continues_identically():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 2))
    y = np.sign(X[:, 1])
    full = PrivateMiniBatchFTRL(2, n_rows=40, batch_size=8, epochs=2, epsilon=2.0,
                                seed=4).fit(X, y)
    half = PrivateMiniBatchFTRL(2, n_rows=40, batch_size=8, epochs=2, epsilon=2.0, seed=4)
    index = StepIndex(np.arange(40), half.steps_per_epoch)
    for _ in range(4):
        rows = index.rows(half.batch())
        half.step(*gradient_sum(X[rows], y[rows], half.weights, "logistic", 1.0))
    resumed = PrivateMiniBatchFTRL(2, n_rows=40, batch_size=8, epochs=2, epsilon=2.0)
    resumed.set_state(half.get_state())
    while resumed.t_ < resumed.horizon:
        rows = index.rows(resumed.batch())
        resumed.step(*gradient_sum(X[rows], y[rows], resumed.weights, "logistic", 1.0))
    assert np.array_equal(np.array(resumed.iterates_), np.array(full.iterates_))


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(batch_size=7), "batch_size must be at most the 6 rows of the data; got 7"),
    (dict(neighbouring="add_remove"),
     "neighbouring must be 'replace_one' for PrivateMiniBatchFTRL"),
    (dict(counter_options={"participation": (1, 1)}), "counter_options must not set "
     "participation"),
    (dict(loss="hinge"), "loss must be one of"),
])
def test_bad_arguments_are_refused_by_name(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        PrivateMiniBatchFTRL(2, **{**TINY, **kwargs})
