"""Contract tests run over every counter (tests/counter_cases.py).

A counter's own cases are in its file (test_binary_tree.py, test_toeplitz.py, ...);
checkpoints in test_counters_checkpoint.py, calibration in test_counters_privacy.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter
from dpol.errors import HorizonExceededError, InvalidInputError, NonPrivateWarning

from counter_cases import (
    COUNTERS,
    NO_HORIZON,
    UNBOUNDED,
    assert_same_release,
    cases_with_noise,
    horizon_arg,
    in_bound_stream,
    make,
    takes_noise,
)

ALL = sorted(COUNTERS)
HORIZONS = (1, 2, 3, 7, 8, 9, 37, 100)


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


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"noise_multiplier": 1.0, "bound": 0.0}, "bound must be > 0"),
        ({"noise_multiplier": 1.0, "delta": 1.0}, "delta must be < 1"),
        ({"noise_multiplier": 1.0, "noise": "cauchy"}, "noise must be one of"),
        ({"noise_multiplier": 1.0, "neighbouring": "swap"}, "neighbouring must be one of"),
        ({"noise_multiplier": 1.0, "calibration": "loose"}, "calibration must be one of"),
        ({"noise_multiplier": 1.0, "seed": -3}, "seed must be"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        BinaryTreeCounter(8, **kwargs)


def test_constructor_rejects_bad_horizon_and_dim():
    with pytest.raises(InvalidInputError, match="horizon must be an integer >= 1; got 0"):
        BinaryTreeCounter(0, noise_multiplier=1.0)
    with pytest.raises(InvalidInputError, match="dim must be an integer"):
        BinaryTreeCounter(4, 2.5, noise_multiplier=1.0)


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
