"""Contract tests run over every counter (tests/counter_cases.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter, HonakerTreeCounter, WindowTreeCounter
from dpol.errors import HorizonExceededError, InvalidInputError, NonPrivateWarning

from counter_cases import (
    COUNTERS,
    NO_HORIZON,
    UNBOUNDED,
    assert_same_release,
    cases_with_noise,
    horizon_arg,
    make,
    takes_noise,
)

ALL = sorted(COUNTERS)
HORIZONS = (1, 2, 3, 7, 8, 9, 37, 100)


def in_bound_stream(horizon, dim, seed=0):
    """Elements of l2 norm < 1, so that no clipping happens."""
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(horizon, dim))
    return 0.9 * v / np.maximum(1.0, np.linalg.norm(v, axis=1, keepdims=True))


@pytest.mark.parametrize(("name", "noise"), cases_with_noise(ALL))
@pytest.mark.parametrize("horizon", HORIZONS)
def test_run_equals_add_loop_bit_for_bit(name, noise, horizon):
    # catches any divergence in draw order, node bookkeeping or summation order between
    # the vectorized and the streaming path
    values = in_bound_stream(horizon, 3, seed=horizon)
    a = make(name, horizon, 3, noise=noise, seed=11)
    b = make(name, horizon, 3, noise=noise, seed=11)
    assert_same_release(name, a.run(values), np.stack([b.add(v) for v in values]))
    # and both leave the same state, so later adds continue identically
    if horizon > 1:
        c = make(name, horizon + 5, 3, noise=noise, seed=11)
        d = make(name, horizon + 5, 3, noise=noise, seed=11)
        c.run(values)
        for v in values:
            d.add(v)
        extra = in_bound_stream(5, 3, seed=99)
        assert_same_release(name, c.run(extra), np.stack([d.add(v) for v in extra]))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("noise", ["gaussian", "secure"])
def test_run_owned_is_run_on_a_validated_copy(name, noise):
    # _run_owned (a learner's own element rows, no second validation) gives run's
    # releases, state and clip count; it may overwrite the rows it is given
    if not takes_noise(name, noise):
        # the class refuses it by its row of the table; an endless BLT, whose class takes
        # secure noise, refuses it for horizon=None
        refusal = ("noise must not be secure" if name == "blt-unbounded"
                   else "noise must be 'gaussian'")
        with pytest.raises(InvalidInputError, match=refusal):
            make(name, 45, 3, noise=noise)
        return
    values = in_bound_stream(40, 3, seed=5)
    values[[3, 17]] *= 4.0  # two rows above the bound: clipped and counted
    a = make(name, 45, 3, noise=noise, seed=2)
    b = make(name, 45, 3, noise=noise, seed=2)
    owned = a._run_owned(values.copy())
    released = b.run(values)
    after_a, after_b = a.add(values[0] / 2), b.add(values[0] / 2)
    if noise == "secure":  # OS randomness: the same path and clipping, not the same draws
        assert owned.shape == released.shape and np.all(np.isfinite(owned))
    else:
        assert_same_release(name, owned, released)
        assert_same_release(name, after_a, after_b)
    assert a.t == b.t == 41 and a.n_clipped_ == b.n_clipped_ == 2


@pytest.mark.parametrize("name", ALL)
def test_run_in_pieces_equals_one_run(name):
    values = in_bound_stream(50, 2)
    a = make(name, 50, 2, seed=3)
    b = make(name, 50, 2, seed=3)
    pieces = np.vstack([a.run(values[:17]), a.run(values[17:18]), a.run(values[18:])])
    assert_same_release(name, pieces, b.run(values))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("horizon", HORIZONS)
def test_zero_noise_is_exact_cumsum(name, horizon):
    values = in_bound_stream(horizon, 2)
    cls, extra = COUNTERS[name]
    with pytest.warns(NonPrivateWarning, match="adds no noise"):
        a = cls(horizon_arg(name, horizon), 2, noise_multiplier=0.0, **extra)
    assert np.array_equal(a.run(values), np.cumsum(values, axis=0))
    b = make(name, horizon, 2, noise_multiplier=0.0)
    assert np.array_equal(np.stack([b.add(v) for v in values]), np.cumsum(values, axis=0))
    # (zero noise is exact for every counter: no rounding enters an all-zero noise path)
    assert not b.privacy.is_private


@pytest.mark.parametrize("name", ALL)
def test_add_returns_fresh_array_never_a_view(name):
    c = make(name, 10, 2, seed=0)
    out = c.add([0.1, 0.2])
    saved = out.copy()
    out[:] = 1e9  # a view of internal state would corrupt the next release
    nxt = c.add([0.0, 0.0])
    ref = make(name, 10, 2, seed=0)
    ref.add([0.1, 0.2])
    assert_same_release(name, nxt, ref.add([0.0, 0.0]))
    assert not np.shares_memory(saved, nxt)


def test_binary_tree_node_counts_and_loss():
    c = BinaryTreeCounter(8, noise_multiplier=1.0)
    counts = c.variance(np.arange(1, 9)) / c.noise_scale**2
    assert counts.tolist() == [1, 1, 2, 1, 2, 2, 3, 1]
    assert BinaryTreeCounter(2**16, noise_multiplier=1.0).loss() == 272.0
    padded = BinaryTreeCounter(100, noise_multiplier=1.0, padded=True)
    # padding as ENV's TreeBasedAgg: every release carries ceil(log2 100) = 7 draws
    assert set((padded.variance(np.arange(1, 101)) / padded.noise_scale**2).tolist()) == {7.0}
    one = BinaryTreeCounter(1, noise_multiplier=1.0, padded=True)
    assert one.variance(1) == one.noise_scale**2


def test_honaker_variance_values():
    c = HonakerTreeCounter(8, noise_multiplier=1.0)
    unit = c.noise_scale**2
    assert c.variance(4) / unit == pytest.approx(4 / 7, rel=1e-12)
    assert c.variance(8) / unit == pytest.approx(8 / 15, rel=1e-12)
    binary = BinaryTreeCounter(2**16, noise_multiplier=1.0)
    honaker = HonakerTreeCounter(2**16, noise_multiplier=1.0)
    assert honaker.loss() < binary.loss()  # the point of the estimator


def test_window_counter_equals_binary_tree_when_window_covers_horizon():
    values = in_bound_stream(13, 2)
    a = WindowTreeCounter(13, 2, window=16, noise_multiplier=1.0, seed=4).run(values)
    b = BinaryTreeCounter(13, 2, noise_multiplier=1.0, seed=4).run(values)
    assert np.array_equal(a, b)
    # no window given: W = T, the whole stream protected (what `--counter window` runs)
    default = WindowTreeCounter(13, 2, noise_multiplier=1.0, seed=4)
    assert default.window == 13 and default.privacy.window is None
    assert np.array_equal(default.run(values), b)
    with pytest.raises(InvalidInputError, match="window must be given for an endless"):
        WindowTreeCounter(None, noise_multiplier=1.0)


def test_window_old_element_shifts_later_releases_by_the_clean_difference():
    window, horizon, i = 4, 30, 6
    values = in_bound_stream(horizon, 2)
    changed = values.copy()
    changed[i - 1] = -changed[i - 1]
    a = WindowTreeCounter(horizon, 2, window=window, noise_multiplier=1.0, seed=8).run(values)
    b = WindowTreeCounter(horizon, 2, window=window, noise_multiplier=1.0, seed=8).run(changed)
    diff = changed[i - 1] - values[i - 1]
    assert np.array_equal(a[: i - 1], b[: i - 1])  # before i: untouched
    # from i on (in and after the window) the same noise is reused, no fresh noise enters
    np.testing.assert_allclose(b[i - 1:] - a[i - 1:], np.broadcast_to(diff, (horizon - i + 1, 2)),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(
    "bad",
    [[np.nan, 0.0], [np.inf, 0.0], [0.0, -np.inf], [1.0], [1.0, 2.0, 3.0], [[1.0, 2.0]],
     ["a", "b"], [True, False], [1 + 2j, 0.0], None],
)
def test_bad_input_raises_and_consumes_nothing(name, bad):
    c = make(name, 5, 2, seed=0)
    c.add([0.1, 0.1])
    before = c.get_state()
    with pytest.raises(ValueError, match=r"^v must .*; got "):
        c.add(bad)
    assert c.t == 1 and c.n_clipped_ == 0
    ref = make(name, 5, 2, seed=0)
    ref.add([0.1, 0.1])
    assert np.array_equal(c.add([0.2, 0.0]), ref.add([0.2, 0.0]))
    assert before["t"] == 1


@pytest.mark.parametrize("name", ALL)
def test_bad_block_raises_and_consumes_nothing(name):
    c = make(name, 5, 2, seed=0)
    block = np.zeros((3, 2))
    block[2, 1] = np.nan
    with pytest.raises(InvalidInputError, match="values must contain only finite values"):
        c.run(block)
    with pytest.raises(InvalidInputError, match=r"values must have shape \(n, 2\)"):
        c.run(np.zeros((3, 3)))
    with pytest.raises(InvalidInputError, match="values must contain at least one row"):
        c.run(np.zeros((0, 2)))
    assert c.t == 0
    assert_same_release(name, c.run(np.zeros((2, 2))),
                        make(name, 5, 2, seed=0).run(np.zeros((2, 2))))


@pytest.mark.parametrize("name", ALL)
def test_clipping_is_applied_and_counted(name):
    c = make(name, 6, 2, noise_multiplier=0.0, bound=2.0)
    c.add([3.0, 4.0])  # norm 5 -> scaled to norm 2
    c.run(np.array([[0.0, 10.0], [1.0, 1.0]]))
    assert c.n_clipped_ == 2
    np.testing.assert_allclose(c.add([0.0, 0.0]), [1.2 + 0.0 + 1.0, 1.6 + 2.0 + 1.0])


@pytest.mark.parametrize("name", ALL)
def test_horizon_is_enforced_without_consuming(name):
    if name in UNBOUNDED:
        pytest.skip(NO_HORIZON)
    c = make(name, 3, 1, seed=0)
    c.run(np.zeros((2, 1)))
    with pytest.raises(HorizonExceededError):
        c.run(np.zeros((2, 1)))
    assert c.t == 2
    c.add(0.0)
    with pytest.raises(HorizonExceededError):
        c.add(0.0)
    assert c.t == 3


@pytest.mark.parametrize(("name", "noise"), cases_with_noise(ALL))
def test_state_round_trip_continues_identically(name, noise):
    values = in_bound_stream(40, 2)
    a = make(name, 40, 2, noise=noise, seed=21)
    a.run(values[:13])
    state = a.get_state()
    b = type(a).from_state(state)
    c = pickle.loads(pickle.dumps(a))
    rest_a = a.run(values[13:])
    assert np.array_equal(rest_a, b.run(values[13:]))  # same path, same state: exact
    assert_same_release(name, rest_a, np.stack([c.add(v) for v in values[13:]]))
    ref = make(name, 40, 2, noise=noise, seed=21)
    assert_same_release(name, ref.run(values)[13:], rest_a)


@pytest.mark.parametrize("name", ALL)
def test_a_generator_seed_keeps_its_bit_generator(name):
    # seed=Generator(SFC64(s)): every stream of the counter is SFC64 (spawn_seeds, as
    # numpy's Generator.spawn), run still equals the add loop, and a checkpoint restores
    # SFC64 although from_state rebuilds the counter from its parameters (on PCG64)
    def sfc():
        return np.random.Generator(np.random.SFC64(4))

    values = in_bound_stream(30, 2, seed=8)
    a, b = make(name, 30, 2, seed=sfc()), make(name, 30, 2, seed=sfc())
    pcg = make(name, 30, 2, seed=np.random.Generator(np.random.PCG64(4)))
    assert type(a._source._rng.bit_generator).__name__ == "SFC64"
    assert_same_release(name, a.run(values[:11]), np.stack([b.add(v) for v in values[:11]]))
    assert not np.array_equal(pcg.run(values[:11]), make(name, 30, 2, seed=sfc()).run(
        values[:11]))  # another generator, other draws
    restored = type(a).from_state(a.get_state())
    assert np.array_equal(restored.run(values[11:]), a.run(values[11:]))


def test_from_state_refuses_a_foreign_state():
    state = BinaryTreeCounter(4, noise_multiplier=1.0).get_state()
    with pytest.raises(InvalidInputError, match="state must come from HonakerTreeCounter"):
        HonakerTreeCounter.from_state(state)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"noise_multiplier": 1.0, "epsilon": 1.0}, "exactly one"),
        ({}, "exactly one"),
        ({"epsilon": 1.0}, "delta must be > 0 for Gaussian"),
        ({"epsilon": -1.0, "delta": 1e-5}, "epsilon must be > 0"),
        ({"epsilon": float("nan"), "delta": 1e-5}, "epsilon must not be NaN"),
        ({"noise_multiplier": -1.0}, "noise_multiplier must be >= 0"),
        ({"noise_multiplier": 1.0, "bound": 0.0}, "bound must be > 0"),
        ({"noise_multiplier": 1.0, "delta": 1.0}, "delta must be < 1"),
        ({"noise_multiplier": 1.0, "noise": "cauchy"}, "noise must be one of"),
        ({"noise_multiplier": 1.0, "neighbouring": "swap"}, "neighbouring must be one of"),
        ({"noise_multiplier": 1.0, "calibration": "loose"}, "calibration must be one of"),
        ({"noise_multiplier": 1.0, "calibration": "paper"}, "calibration must be 'tight' when"),
        ({"noise_multiplier": 1.0, "seed": -3}, "seed must be"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        BinaryTreeCounter(8, **kwargs)


def test_constructor_rejects_bad_horizon_dim_window():
    with pytest.raises(InvalidInputError, match="horizon must be an integer >= 1; got 0"):
        BinaryTreeCounter(0, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="dim must be an integer"):
        BinaryTreeCounter(4, 2.5, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="window must be an integer >= 1"):
        WindowTreeCounter(4, window=0, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="padded must be a bool"):
        BinaryTreeCounter(4, padded="yes", noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="calibration must be 'tight': HonakerTree"):
        HonakerTreeCounter(4, epsilon=1.0, delta=1e-5, calibration="paper")


def test_variance_rejects_steps_outside_the_horizon():
    c = BinaryTreeCounter(8, noise_multiplier=1.0)
    for bad in (0, 9, 1.5, np.array([1, 9])):
        with pytest.raises(InvalidInputError, match=r"t must be an integer step in 1..8"):
            c.variance(bad)


@pytest.mark.parametrize("name", ALL)
def test_memory_is_logarithmic_for_trees(name):
    # O(d log T) state for the trees; O(W d) for the window tree (inherent, WDP spec 3.3)
    if name in ("toeplitz", "dense-mean"):
        pytest.skip("the square-root Toeplitz and dense counters keep all T noise rows by "
                    "design (O(T d)); BltCounter is their O(d) streaming counterpart")
    # the banded matrix counter stops at T = 2048 (its optimiser); its state is O(b d)
    horizon = 2**11 if name == "banded-matrix" else 2**20
    c = make(name, horizon, 4)
    c.run(np.zeros((min(5000, horizon), 4)))
    floats = sum(np.asarray(v).size for v in c.get_state()["structure"].values()
                 if v is not None)
    limit = 4 * 21 if not name.startswith("window") else 4 * (2 * 1024 + 24)
    assert floats <= limit


@pytest.mark.parametrize("name", ALL)
def test_run_in_random_pieces_equals_one_run(name):
    # the binary trees continue vectorized from any state (base values of the parents
    # before the block come from the stored level noise); the others fall back to add()
    rng = np.random.default_rng(7)
    values = in_bound_stream(100, 2, seed=5)
    whole = make(name, 100, 2, seed=9).run(values)
    for _ in range(20):
        cuts = np.sort(rng.choice(np.arange(1, 100), size=rng.integers(1, 8), replace=False))
        counter = make(name, 100, 2, seed=9)
        pieces = np.vstack([counter.run(part) for part in np.split(values, cuts)])
        assert_same_release(name, pieces, whole)


def test_toeplitz_loss_matches_the_published_figures_and_refuses_pure_noise():
    from dpol.counters import ToeplitzCounter

    # issue 5: within 1% of 10.71, 21.13, 30.02 at T = 2^10, 2^16, 2^20 (exact here)
    for horizon, figure in [(2**10, 10.71), (2**16, 21.13), (2**20, 30.02)]:
        assert ToeplitzCounter(horizon, noise_multiplier=1.0).loss() == pytest.approx(
            figure, rel=1e-3)
    with pytest.raises(InvalidInputError, match="noise must be 'gaussian'"):
        ToeplitzCounter(8, epsilon=1.0, noise="laplace")
    # 13x less worst-case variance than the binary tree at 2^16 (272 / 21.13)
    assert BinaryTreeCounter(2**16, noise_multiplier=1.0).loss() / ToeplitzCounter(
        2**16, noise_multiplier=1.0).loss() > 12.8


@pytest.mark.parametrize("horizon", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_toeplitz_bruteforce_sensitivity(horizon, neighbouring):
    # over all streams in {-1, 0, 1}^T and every single change (replace: any other value;
    # add/remove: set to 0), the encoder C x moves by at most -- and for the first element
    # exactly -- the declared sensitivity Delta ||C e_1||
    from dpol.counters import ToeplitzCounter

    from counter_cases import brute_force_sensitivity

    counter = ToeplitzCounter(horizon, noise_multiplier=1.0, neighbouring=neighbouring)
    best = brute_force_sensitivity(counter, horizon, neighbouring)
    assert best == pytest.approx(counter.sensitivity, rel=1e-12)


@pytest.mark.parametrize("name", ALL)
def test_noise_multiplier_is_public_and_resolved(name):
    calibrated = make(name, 16, epsilon=1.0, delta=1e-5)
    given = make(name, 16, noise_multiplier=calibrated.noise_multiplier)
    assert isinstance(calibrated.noise_multiplier, float) and calibrated.noise_multiplier > 0
    assert given.noise_scale == calibrated.noise_scale
    with pytest.warns(NonPrivateWarning):
        assert make(name, 16, epsilon=float("inf")).noise_multiplier == 0.0
    clone = type(calibrated).from_state(calibrated.get_state())  # rebuilt from epsilon
    assert clone.noise_multiplier == calibrated.noise_multiplier and clone.epsilon == 1.0


@pytest.mark.parametrize("name", ALL)
def test_capability_tags_are_public_and_read_only(name):
    cls = COUNTERS[name][0]
    assert isinstance(cls.tags, frozenset)
    assert cls.tags <= {"bit_identical_run", "secure_exact", "continues_vectorized"}
    # secure noise is offered exactly where it is sound
    assert ("secure_exact" in cls.tags) == bool(cls.supported_noises(secure=True))
    c = make(name, 8)
    assert c.tags is cls.tags
    assert ("continues_vectorized" in c.tags) == c.strategy.continues_vectorized
    with pytest.raises(AttributeError):
        c.tags.add("x")
