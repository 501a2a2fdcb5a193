"""ENV's projection-free bandit learners, their shared machinery: ask/tell, run, modes, regret.

The sphere estimator and the Frank-Wolfe step: test_bandit_geometry.py; the private
learner's calibration: test_private_bandit_frank_wolfe.py; its non-private twin:
test_bandit_frank_wolfe.py.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from learner_cases import bandit_private as private
from learner_cases import bandit_twin as twin
from learner_cases import distance_loss

from dpol.errors import (
    HorizonExceededError,
    InvalidInputError,
)
from dpol.experiments.reproductions.env_bandit import (
    box_leading_constant,
    linear_instance,
    make_polytope,
)
from dpol.learners.bandit_frank_wolfe import BanditFrankWolfe
from dpol.learners.private_bandit_frank_wolfe import PrivateBanditFrankWolfe
from dpol.sets import Box, ConvexHull, L2Ball, Simplex

VERTICES = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0],
                     [1.0, 1.0, 0.0], [0.6, 0.6, 1.2], [-0.4, 0.5, 0.5]])


class OracleOnly:
    """A polytope known only through its linear oracle; counts calls, traps projections."""

    def __init__(self, vertices: np.ndarray) -> None:
        self.vertices = np.asarray(vertices, dtype=float)
        self.dim = self.vertices.shape[1]
        diff = self.vertices[:, None, :] - self.vertices[None, :, :]
        self.diameter = float(np.sqrt((diff**2).sum(axis=2)).max())
        self.calls = 0

    def linear_oracle(self, c):
        self.calls += 1
        return self.vertices[int(np.argmin(self.vertices @ c))].copy()

    def project(self, x):  # a projection-free learner must never get here
        raise AssertionError("the bandit learner called project()")

    def contains(self, x, tol=1e-9):
        raise AssertionError("the bandit learner called contains()")


def loop(learner, loss, n):
    """The ask/tell loop; returns points, iterates and observed values."""
    pts, its, vals = [], [], []
    for _ in range(n):
        its.append(learner.iterate)
        x = learner.ask()
        v = loss(x[None, :], np.array([learner.t]))[0]
        learner.tell(v)
        pts.append(x)
        vals.append(v)
    return np.array(pts), np.array(its), np.array(vals)


def linear_loss(C, b=None):
    b = np.zeros(len(C)) if b is None else b
    return lambda X, steps: np.einsum("ij,ij->i", C[steps], X) + b[steps]


# ---------------------------------------------------------------- learning


def test_learner_moves_towards_the_low_loss_vertex():
    # loss <(0.5, -0.5, 0), x - c>: the centre must end near (0, 1, 1/2), never near (1, 0, .)
    T = 4096
    C = np.tile([0.5, -0.5, 0.0], (T, 1))
    learner = twin(Box(0.0, 1.0, dim=3), T, seed=6)
    trace = learner.run_linear(C, -C @ np.full(3, 0.5))
    assert learner.iterate[0] < 0.15 and learner.iterate[1] > 0.85
    assert np.array_equal(trace.comparator, [0.0, 1.0, 0.0])
    assert trace.regret[-1] < 0.1 * T  # playing the centre costs 0.5 T


# ---------------------------------------------------------------- oracle-only access
def test_only_the_linear_oracle_is_called_once_per_round():
    T, K = 50, 8  # K = ceil(sqrt 50) = 8, batches 8 x 6 + 2; the last batch runs no FW
    dom = OracleOnly(VERTICES)
    learner = private(dom, T, center=VERTICES.mean(axis=0), seed=0)
    assert (learner.batch_size, learner.n_batches, dom.calls) == (K, 7, 0)
    hull = ConvexHull(VERTICES)
    calls = []
    for _ in range(T):
        x = learner.ask()
        learner.tell(float(x @ [0.2, -0.3, 0.1]))
        calls.append(dom.calls)
        assert hull.contains(learner.iterate, tol=1e-9)
    steps = np.diff([0, *calls])
    assert np.all(steps[:48] == 1) and np.all(steps[48:] == 0)
    assert dom.calls == learner.n_oracle_calls_ == T - 2
    # the default centre costs 2n calls, all at construction, and is a point of D
    dom2 = OracleOnly(VERTICES)
    learner2 = private(dom2, T, seed=0)
    assert dom2.calls == 2 * 3 and hull.contains(learner2.iterate, tol=1e-12)


def test_extended_mode_geometry():
    # extended mode (ENV-3): points at distance zeta from a feasible centre that is constant
    # within a batch and changes only between batches
    dom = Box(0.0, 1.0, dim=4)
    learner = private(dom, 300, seed=1)
    C, b = np.tile([0.3, -0.2, 0.1, 0.0], (300, 1)), np.zeros(300)
    trace = learner.run_linear(C, b)
    np.testing.assert_allclose(np.linalg.norm(trace.points - trace.iterates, axis=1),
                               learner.zeta, rtol=1e-12)
    assert all(dom.contains(x, tol=1e-12) for x in trace.iterates)
    K = learner.batch_size
    for start in range(0, 300, K):
        block = trace.iterates[start:start + K]
        assert np.array_equal(block, np.broadcast_to(block[0], block.shape))
    assert len(np.unique(trace.iterates, axis=0)) > 5


@pytest.mark.parametrize(("domain", "ball"), [
    (Box(0.0, 1.0, dim=3), (np.full(3, 0.5), 0.5)),
    (L2Ball(3, 1.0), (np.zeros(3), 1.0)),
    (OracleOnly(VERTICES), (np.array([0.3, 0.3, 0.3]), 0.2)),  # checked: r = 0.2 fits
], ids=["box", "ball", "oracle-only-polytope"])
def test_shrink_mode_plays_only_feasible_points(domain, ball):
    # App. D: y = phi(x~ + zeta u) = (1 - zeta/r) x~ + (zeta/r)(c' + (r - zeta) u) lies in D;
    # ||y - phi(x~)|| = (1 - zeta/r) zeta
    T = 2000
    learner = private(domain, T, mode="shrink", inner_ball=ball, seed=2)
    assert learner.zeta <= ball[1] / 2
    C = np.tile([0.4, -0.3, 0.2], (T, 1))
    trace = learner.run_linear(C)
    member = ConvexHull(VERTICES) if isinstance(domain, OracleOnly) else domain
    assert all(member.contains(p, tol=1e-9) for p in trace.points)
    phi = ball[0] + learner.shrink * (trace.iterates - ball[0])
    np.testing.assert_allclose(np.linalg.norm(trace.points - phi, axis=1),
                               (1 - learner.zeta / ball[1]) * learner.zeta, rtol=1e-10)
    assert learner.loss_bound == learner.lipschitz * learner.diameter


def test_shrink_mode_refusals():
    box = Box(0.0, 1.0, dim=3)
    with pytest.raises(InvalidInputError, match="inner_ball"):
        private(box, 100, mode="shrink")
    with pytest.raises(InvalidInputError, match=r"zeta must be < 0\.5"):
        private(box, 100, mode="shrink", inner_ball=(np.full(3, 0.5), 0.5), zeta=0.5)


# ---------------------------------------------------------------- run == ask/tell
CONFIGS = {
    "twin": lambda dom, T, **kw: twin(dom, T, **kw),
    "gaussian": lambda dom, T, **kw: private(dom, T, **kw),
    "laplace": lambda dom, T, **kw: private(dom, T, noise="laplace", **kw),
    "gamma-add-remove": lambda dom, T, **kw: private(dom, T, noise="gamma",
                                                     neighbouring="add_remove", **kw),
    "honaker": lambda dom, T, **kw: private(dom, T, counter="honaker", **kw),
    "shrink": lambda dom, T, **kw: private(dom, T, mode="shrink",
                                           inner_ball=(np.full(3, 0.5), 0.5), **kw),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_run_equals_the_ask_tell_loop(name):
    T, dom = 150, Box(0.0, 1.0, dim=3)
    a = CONFIGS[name](dom, T, seed=7, loss_bound=0.45)  # small bound: some values clip
    b = CONFIGS[name](dom, T, seed=7, loss_bound=0.45)
    pts, its, vals = loop(b, distance_loss, T)
    trace = a.run(distance_loss)
    np.testing.assert_allclose(trace.points, pts, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.iterates, its, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(trace.losses, vals, rtol=1e-12, atol=1e-14)
    assert a.n_clipped_ == b.n_clipped_ > 0
    assert a.n_oracle_calls_ == b.n_oracle_calls_ and a.privacy == b.privacy
    # run_linear is run on linear losses
    C = np.random.default_rng(1).normal(size=(T, 3)) / 3
    c, d = CONFIGS[name](dom, T, seed=9), CONFIGS[name](dom, T, seed=9)
    lin = c.run_linear(C)
    pts, _, vals = loop(d, linear_loss(C), T)
    np.testing.assert_allclose(lin.points, pts, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lin.losses, vals, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lin.regret, np.cumsum(vals - C @ lin.comparator), rtol=1e-10)


def test_checkpoint_continues_identically_mid_batch_and_between_ask_and_tell():
    T, dom = 120, Box(0.0, 1.0, dim=3)
    ref = private(dom, T, seed=3)
    full = ref.run(distance_loss).points
    a = private(dom, T, seed=3)
    a.run(distance_loss, 37)  # K = 11: mid-batch
    x = a.ask()
    np.testing.assert_array_equal(x, full[37])
    restored = PrivateBanditFrankWolfe.from_state(a.get_state())
    pickled = pickle.loads(pickle.dumps(a))
    outs = []
    for learner in (a, restored, pickled):
        learner.tell(distance_loss(x[None], np.array([37]))[0])
        outs.append(learner.run(distance_loss).points)
    np.testing.assert_allclose(outs[0], full[38:], rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[2], outs[0])
    with pytest.raises(InvalidInputError, match="state"):
        BanditFrankWolfe.from_state(a.get_state())


# ---------------------------------------------------------------- bad input
def test_bad_input_raises_clearly_and_consumes_nothing():
    T, dom = 40, Box(0.0, 1.0, dim=3)
    a, clean = private(dom, T, seed=11), private(dom, T, seed=11)
    with pytest.raises(InvalidInputError, match="tell must follow ask"):
        a.tell(0.5)
    x = a.ask()
    with pytest.raises(InvalidInputError, match="ask must be followed by tell"):
        a.ask()
    for bad in (float("nan"), float("inf"), "0.5", None, [0.5], True, 1 + 2j):
        with pytest.raises(InvalidInputError, match="loss_value must"):
            a.tell(bad)
    with pytest.raises(InvalidInputError, match="run must not start between ask"):
        a.run(distance_loss)
    a.tell(float(x.sum()))
    xc = clean.ask()
    clean.tell(float(xc.sum()))
    with pytest.raises(InvalidInputError, match=r"loss_fn\(X, steps\) must"):
        a.run(lambda X, s: np.full(len(X), np.nan))
    with pytest.raises(InvalidInputError, match=r"loss_fn\(X, steps\) must have shape"):
        a.run(lambda X, s: np.zeros(len(X) + 1))
    with pytest.raises(InvalidInputError, match="C must"):
        a.run_linear(np.zeros((5, 2)))
    with pytest.raises(InvalidInputError, match="offsets must"):
        a.run_linear(np.zeros((5, 3)), np.zeros(4))
    with pytest.raises(HorizonExceededError):
        a.run(distance_loss, T)
    assert a.n_oracle_calls_ == clean.n_oracle_calls_
    np.testing.assert_array_equal(a.run(distance_loss).points, clean.run(distance_loss).points)
    with pytest.raises(HorizonExceededError):
        a.ask()


def test_bad_construction_arguments():
    box = Box(0.0, 1.0, dim=2)
    with pytest.raises(InvalidInputError, match="domain must provide linear_oracle"):
        private(object(), 10)
    with pytest.raises(InvalidInputError, match="epsilon must"):
        private(box, 10, epsilon=0.0)
    with pytest.raises(InvalidInputError, match="delta must be > 0 for Gaussian"):
        private(box, 10, delta=0.0)
    with pytest.raises(InvalidInputError, match="horizon must"):
        private(box, 0)
    with pytest.raises(InvalidInputError, match="mode must"):
        private(box, 10, mode="inside")
    with pytest.raises(InvalidInputError, match="center must"):
        private(box, 10, center=[0.5])
    with pytest.raises(InvalidInputError, match="counter must"):
        private(box, 10, counter="nope")
    with pytest.warns(UserWarning, match="zeta=.* exceeds the diameter"):
        private(box, 3)  # T < n^2 with the paper's zeta (A16)


def test_values_are_clipped_to_the_loss_bound_and_counted():
    # ENV-3 (Lemma C.2): a value of 1e9 enters the batch sum as B, so ||F_t u_t|| <= (n/zeta) B
    T, dom = 16, Box(0.0, 1.0, dim=2)  # K = 4: the 4th round closes the first batch
    a = twin(dom, T, seed=0)
    U = []
    for v in (1e9, -1e9, 0.3):
        x = a.ask()
        U.append((x - a.iterate) / a.zeta)
        a.tell(v)
    trace = a.run(lambda X, s: np.full(len(X), 5.0), 1)
    U.append((trace.points[0] - trace.iterates[0]) / a.zeta)
    assert a.n_clipped_ == 3 and trace.n_clipped == 3
    B, g = a.loss_bound, np.zeros(2)
    for v, u in zip((B, -B, 0.3, B), U, strict=True):
        g += (2 / a.zeta) * v * u
    np.testing.assert_allclose(trace.noisy_sums[0], g, rtol=1e-12)  # exact: the twin's sum


# ---------------------------------------------------------------- parameters


def test_spec_worked_example_parameters():
    # ENV Algorithm 1's parameters: T = 1e4, n = 4, L = 1, D = 2 gives m = K = 100,
    # eta = 0.001, zeta = 0.4
    learner = twin(L2Ball(4, 1.0), 10_000)
    assert (learner.batch_size, learner.n_batches) == (100, 100)
    assert learner.eta == pytest.approx(0.001) and learner.zeta == pytest.approx(0.4)
    assert learner.loss_bound == pytest.approx(2.4)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(1, 150), n=st.integers(2, 4), K=st.integers(1, 20))
def test_any_horizon_and_batch_size_play_feasible_centres(T, n, K):
    dom = Simplex(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zeta > D for small T (A16)
        learner = private(dom, T, batch_size=K, seed=T)
    trace = learner.run(lambda X, s: X.sum(axis=1) - 1.0)
    m = -(-T // K)
    assert learner.n_batches == m and len(trace.noisy_sums) == m - 1
    assert learner.n_oracle_calls_ == T - (T - (m - 1) * K)
    assert all(dom.contains(x, tol=1e-12) for x in trace.iterates)
    assert len(trace.points) == T == learner.t


# ---------------------------------------------------------------- regret growth
def _box_regret(epsilon, horizons, seeds):
    domain, center = make_polytope("box")
    out = np.empty((len(horizons), seeds))
    for i, T in enumerate(horizons):
        for s in range(seeds):
            C, b = linear_instance("box", T, s)
            learner = (twin(domain, T, center=center, seed=s) if math.isinf(epsilon) else
                       private(domain, T, epsilon=epsilon, center=center, seed=s))
            out[i, s] = learner.run_linear(C, b).regret[-1]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [math.inf, 100.0])
def test_bandit_regret_grows_like_t_to_three_quarters(epsilon):
    # Derivation (reproductions/env_bandit.py): on [0, 1]^5 with the centre c = 1/2, without
    # estimation noise the FTRL point moves each coordinate linearly to its best bound, which
    # costs 1/(8 eta) per coordinate: R = a T^(3/4), a = n^(3/2) L / (8 D) = 0.625. The rest
    # (batch lag <= K ||theta||_1 ~ T^(1/2), inexact FW, estimate and privacy noise) adds
    # non-negative terms of exponents in [1/2, 3/4), so (i) R(T) >= a T^(3/4) and (ii) the
    # log-log slope lies in [3/4 - s/4, 3/4], s = max_T (1 - a T^(3/4) / R) the measured share
    # of lower-order terms. Tolerances: 3 standard errors of the seed means (pooled relative
    # sd across T; the slope's through the least-squares weights). (iii) ENV Lemma 3.1 with
    # constant 1: R <= T^(3/4) sqrt(n) L D (the spec's prototype ratio is about 0.15).
    horizons, seeds = np.array([2**10, 2**12, 2**14, 2**16]), 3
    R = _box_regret(epsilon, horizons, seeds)
    mean = R.mean(axis=1)
    rel = math.sqrt(np.mean((R.std(axis=1, ddof=1) / mean) ** 2) / seeds)
    a = box_leading_constant()
    assert a == 0.625
    assert np.all(mean >= a * horizons**0.75 * (1 - 3 * rel))  # (i)
    x = np.log(horizons)
    w = (x - x.mean()) / ((x - x.mean()) ** 2).sum()
    slope, slope_se = float(w @ np.log(mean)), rel * float(np.linalg.norm(w))
    share = float(np.max(1 - a * horizons**0.75 / mean))
    assert 0.0 < share < 0.5
    assert 0.75 - share / 4 - 3 * slope_se <= slope <= 0.75 + 3 * slope_se  # (ii)
    assert np.all(mean <= horizons**0.75 * math.sqrt(5) * math.sqrt(5))  # (iii)
    assert mean[-1] < 0.1 * horizons[-1]  # far below the trivial 0.5 T of the centre
