"""Robustness of every public entry point, property-based (hypothesis).

NaN, +-inf, wrong shapes and dtypes, huge norms, empty streams and bad constructor
parameters are fed to every counter of ``counter_cases.COUNTERS`` and every learner of
``learner_cases.LEARNERS`` (and to the bandit learners, sets and losses). Each must get an
``InvalidInputError`` naming the argument -- never an error from deep inside numpy -- and
leave the object exactly as it was, so the next good step equals a fresh twin's; or, for
data over the declared bound, the documented clip (counted in ``n_clipped_``). State round
trips (``get_state``/``from_state`` and pickle) at random split points continue bit for bit.

Every test is derandomized (reproducible in CI) with a bounded number of examples.
"""

from __future__ import annotations

import inspect
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from learner_cases import DIM, LEARNERS, stream
from learner_cases import make as make_learner

from dpol.errors import InvalidInputError

from counter_cases import COUNTERS, assert_same_release, horizon_arg, noises
from counter_cases import make as make_counter

COUNTER_NAMES = sorted(COUNTERS)
LEARNER_NAMES = sorted(LEARNERS)
HORIZON = 12

FUZZ = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FEW = settings(FUZZ, max_examples=12)

NONFINITE = (math.nan, math.inf, -math.inf)
LONGDOUBLE_WIDER = np.finfo(np.longdouble).max > np.finfo(np.float64).max


# ---------------------------------------------------------------- strategies
def unit_entries():
    return st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def nonfinite_vectors(draw, dim):
    """A vector with one NaN or +-inf entry, as float64/32/16, list or tuple."""
    v = draw(hnp.arrays(np.float64, dim, elements=unit_entries()))
    v[draw(st.integers(0, dim - 1))] = draw(st.sampled_from(NONFINITE))
    kind = draw(st.sampled_from(["float64", "float32", "float16", "list", "tuple"]))
    if kind in ("list", "tuple"):
        return v.tolist() if kind == "list" else tuple(v.tolist())
    return v.astype(kind)


@st.composite
def wrong_shape_vectors(draw, dim):
    """Scalars (dim > 1), wrong lengths (empty included), 2-d, 3-d and 4-d arrays."""
    shape = draw(st.one_of(
        st.just(()),
        st.integers(0, dim + 3).filter(lambda n: n != dim).map(lambda n: (n,)),
        st.sampled_from([(1, dim), (dim, 1), (1, 1, dim), (dim, dim)]),
        hnp.array_shapes(min_dims=3, max_dims=4, min_side=1, max_side=3),
    ))
    arr = draw(hnp.arrays(np.float64, shape, elements=unit_entries()))
    return arr.tolist() if draw(st.booleans()) else arr


def _masked(dim):
    return np.ma.array(np.zeros(dim), mask=[True] + [False] * (dim - 1))


def wrong_dtype_vectors(dim):
    """Strings, bytes, bools, complex, objects, None, ragged lists, dates, masked entries,
    integers and long doubles beyond float64."""
    options = [
        st.text(max_size=4),
        st.binary(max_size=4),
        st.lists(st.text(max_size=2), min_size=dim, max_size=dim),
        st.lists(st.booleans(), min_size=dim, max_size=dim),
        hnp.arrays(np.bool_, dim),
        hnp.arrays(np.complex128, dim, elements=st.complex_numbers(max_magnitude=1.0)),
        st.lists(st.complex_numbers(max_magnitude=1.0, allow_nan=False), min_size=dim,
                 max_size=dim).filter(lambda v: any(isinstance(z, complex) for z in v)),
        st.lists(st.one_of(st.none(), st.floats(-1, 1)), min_size=dim, max_size=dim)
        .filter(lambda v: None in v),
        hnp.arrays(np.float64, dim, elements=unit_entries()).map(lambda a: a.astype(object)),
        st.sampled_from([None, {}, {"v": 1.0}, object(), [[1.0], [1.0, 2.0]], set()]),
        st.just(np.array(["2020-01-01"] * dim, dtype="datetime64[D]")),
        st.just(np.arange(dim).astype("timedelta64[s]")),
        st.just(_masked(dim)),
        st.integers(min_value=2**1100, max_value=2**1200).map(lambda n: [n] * dim),
    ]
    if LONGDOUBLE_WIDER:
        options.append(st.just(np.full(dim, np.longdouble("1e4000"))))
    return st.one_of(options)


def bad_vectors(dim):
    return st.one_of(nonfinite_vectors(dim), wrong_shape_vectors(dim), wrong_dtype_vectors(dim))


@st.composite
def bad_blocks(draw, dim, n=3):
    """Blocks (n, dim) with one bad cell, wrong shapes, empty streams, wrong dtypes."""
    kind = draw(st.sampled_from(["nonfinite", "shape", "empty", "dtype"]))
    if kind == "nonfinite":
        block = draw(hnp.arrays(np.float64, (n, dim), elements=st.floats(-1e300, 1e300)))
        block[draw(st.integers(0, n - 1)), draw(st.integers(0, dim - 1))] = draw(
            st.sampled_from(NONFINITE))
        with np.errstate(over="ignore"):  # float32: huge entries become inf, also bad
            return block.astype(draw(st.sampled_from(["float64", "float32"])))
    if kind == "shape":
        shape = draw(st.sampled_from([(n, dim + 1), (n, dim - 1), (dim,), (), (1, n, dim),
                                      (n, 1, dim)]))
        return draw(hnp.arrays(np.float64, shape, elements=unit_entries()))
    if kind == "empty":
        return draw(st.sampled_from([np.zeros((0, dim)), [], np.zeros((0,))]))
    row = draw(wrong_dtype_vectors(dim))
    return np.ma.vstack([row] * n) if isinstance(row, np.ma.MaskedArray) else [row] * n


@st.composite
def huge_vectors(draw, dim):
    """Finite vectors of norm from 10 to beyond 1e308 (the norm itself overflows)."""
    direction = draw(hnp.arrays(np.float64, dim, elements=unit_entries())
                     .filter(lambda v: np.max(np.abs(v)) > 0.1))
    scale = draw(st.one_of(st.floats(10.0, 1e300), st.sampled_from([1e154, 1e200, 1.7e308])))
    direction /= np.linalg.norm(direction)  # a unit direction: the norm is the scale, >= 10
    with np.errstate(over="ignore"):  # (not merely >= 1: [0.25, 0] x 10 passed a bound of 3)
        v = direction * scale
    v[~np.isfinite(v)] = np.sign(direction[~np.isfinite(v)]) * 1.7e308
    return v


def in_bound(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim))
    return 0.9 * v / np.maximum(1.0, np.linalg.norm(v, axis=1, keepdims=True))


def unit(v):
    m = np.max(np.abs(v))
    return (v / m) / np.linalg.norm(v / m)


def assert_same_state(a, b, path="state", _seen=None):
    """Structural, bit-exact equality of two object graphs (arrays by their bytes, floats
    by their bits, generators by their state); pickle bytes would also compare the
    identity of equal strings, which a round trip does not keep."""
    seen = set() if _seen is None else _seen
    if (id(a), id(b)) in seen:
        return
    seen.add((id(a), id(b)))
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        # the id of a noise stream (_seeding.lineage) is identity, not state: two learners
        # built alike have their own
        a, b = ({k: v for k, v in d.items() if k not in ("_lineage", "lineage")}
                for d in (a, b))
        assert list(a) == list(b), f"{path}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_same_state(a[k], b[k], f"{path}[{k!r}]", seen)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_same_state(u, v, f"{path}[{i}]", seen)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape}"
        if a.dtype == object:
            assert_same_state(a.tolist(), b.tolist(), path, seen)
        else:
            assert a.tobytes() == b.tobytes(), f"{path}: arrays differ"
    elif isinstance(a, (float, np.floating)):
        assert np.array(a).tobytes() == np.array(b).tobytes(), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, np.random.Generator):
        assert_same_state(a.bit_generator.state, b.bit_generator.state, path, seen)
    elif isinstance(a, np.random.SeedSequence):
        assert_same_state((a.entropy, a.spawn_key, a.pool_size, a.n_children_spawned),
                          (b.entropy, b.spawn_key, b.pool_size, b.n_children_spawned),
                          path, seen)
    elif inspect.ismethod(a):
        assert a.__func__ is b.__func__, f"{path}: {a!r} != {b!r}"
        assert_same_state(a.__self__, b.__self__, f"{path}.__self__", seen)
    elif (hasattr(a, "__dict__") and not callable(a)) or type(a).__module__.startswith("dpol"):
        assert_same_state(vars(a), vars(b), f"{path}.", seen)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


# ---------------------------------------------------------------- counters
def counter_after(name, dim, prefix, seed=5, **kw):
    c = make_counter(name, HORIZON, dim, seed=seed, **kw)
    for v in in_bound(prefix, dim):
        c.add(v)
    return c


@pytest.mark.parametrize("name", COUNTER_NAMES)
@FUZZ
@given(data=st.data())
def test_counter_add_refuses_bad_input_and_consumes_nothing(name, data):
    dim = data.draw(st.integers(2, 4), label="dim")
    prefix = data.draw(st.integers(0, 3), label="prefix")
    bad = data.draw(bad_vectors(dim), label="v")
    c = counter_after(name, dim, prefix)
    before = c.get_state()
    with pytest.raises(InvalidInputError, match=r"^v must .+; got "):
        c.add(bad)
    assert_same_state(c.get_state(), before)
    assert c.t == prefix
    good = in_bound(1, dim, seed=1)[0]
    assert_same_release(name, c.add(good), counter_after(name, dim, prefix).add(good))


@pytest.mark.parametrize("name", COUNTER_NAMES)
@FUZZ
@given(data=st.data())
def test_counter_run_refuses_bad_blocks_and_consumes_nothing(name, data):
    dim = data.draw(st.integers(2, 4), label="dim")
    prefix = data.draw(st.integers(0, 3), label="prefix")
    bad = data.draw(bad_blocks(dim), label="values")
    c = counter_after(name, dim, prefix)
    before = c.get_state()
    with pytest.raises(InvalidInputError, match=r"^values must .+; got "):
        c.run(bad)
    assert_same_state(c.get_state(), before)
    assert c.t == prefix
    good = in_bound(3, dim, seed=2)
    assert_same_release(name, c.run(good), counter_after(name, dim, prefix).run(good))


@pytest.mark.parametrize("name", COUNTER_NAMES)
@FUZZ
@given(data=st.data())
def test_counter_clips_huge_elements_to_the_bound(name, data):
    dim = data.draw(st.integers(2, 4), label="dim")
    bound = data.draw(st.sampled_from([0.5, 1.0, 3.0]), label="bound")
    v = data.draw(huge_vectors(dim), label="v")
    rows = data.draw(st.lists(huge_vectors(dim), min_size=1, max_size=3), label="block")
    # zero noise: the release is the running sum of the clipped elements, exactly visible
    c = make_counter(name, HORIZON, dim, bound=bound, noise_multiplier=0.0)
    out = c.add(v)
    assert c.n_clipped_ == 1
    np.testing.assert_allclose(out, bound * unit(v), rtol=1e-12, atol=1e-15)
    block = np.array(rows)
    sums = c.run(block)
    assert c.n_clipped_ == 1 + len(rows) and np.all(np.isfinite(sums))
    expected = bound * unit(v) + np.cumsum([bound * unit(r) for r in rows], axis=0)
    np.testing.assert_allclose(sums, expected, rtol=1e-12, atol=1e-12 * bound * len(rows))
    # with noise the releases stay finite and the clip is counted the same way
    noisy = make_counter(name, HORIZON, dim, bound=bound, seed=0)
    assert np.all(np.isfinite(noisy.add(v))) and np.all(np.isfinite(noisy.run(block)))
    assert noisy.n_clipped_ == c.n_clipped_


BAD_NUMBERS = [math.nan, -1.0, 0.0, "1", None, True, 1j, [1.0]]
BAD_COUNTER_PARAMS = {
    "horizon": [0, -3, 2.5, "8", None, True, math.nan, math.inf, np.float64(8.0)],
    "dim": [0, -2, 1.5, "2", None, False],
    "bound": [0.0, -1.0, math.nan, math.inf, "1", None, True, 1j],
    "noise_multiplier": [-1.0, -1e-300, math.nan, math.inf, "1", True, 1j, [1.0]],
    "epsilon": [0.0, -1.0, math.nan, "1", True, 1j, -math.inf],
    "delta": [-1e-9, 1.0, 2.0, math.nan, math.inf, "0", True],
    "neighbouring": ["swap", None, 1, ""],
    "calibration": ["loose", None, 0],
    "noise": ["cauchy", None, 3],
    "seed": [-1, 1.5, "0", True, [1, 2]],
}


@pytest.mark.parametrize("name", COUNTER_NAMES)
@FEW
@given(data=st.data())
def test_counter_constructor_refuses_bad_parameters_naming_them(name, data):
    param = data.draw(st.sampled_from(sorted(BAD_COUNTER_PARAMS)), label="param")
    value = data.draw(st.one_of(st.sampled_from(BAD_COUNTER_PARAMS[param]),
                                st.floats(max_value=-1e-300).filter(lambda _: param not in (
                                    "neighbouring", "calibration", "noise"))),
                      label="value")
    cls, extra = COUNTERS[name]
    kwargs = {"noise_multiplier": 1.0}
    if param == "epsilon":
        kwargs = {"delta": 1e-5}
    args = {"horizon": horizon_arg(name, 8), "dim": 2}  # endless counters: None
    (args if param in args else kwargs)[param] = value
    with pytest.raises(InvalidInputError, match=rf"^{param} must .+; got "):
        cls(args["horizon"], args["dim"], **extra, **kwargs)


@pytest.mark.parametrize("name", COUNTER_NAMES)
@FEW
@given(data=st.data())
def test_counter_state_round_trips_continue_bit_for_bit(name, data):
    noise = data.draw(st.sampled_from(noises(name)), label="noise")
    split = data.draw(st.integers(0, HORIZON - 1), label="split")
    by_run = data.draw(st.booleans(), label="prefix by run")
    values = in_bound(HORIZON, 3, seed=split) * 1.5  # some rows over the bound: clipped
    a = make_counter(name, HORIZON, 3, noise=noise, seed=17)
    if split and by_run:
        a.run(values[:split])
    else:
        for v in values[:split]:
            a.add(v)
    state = a.get_state()
    b = type(a).from_state(state)
    c = pickle.loads(pickle.dumps(a))
    assert_same_state(b.get_state(), state)
    assert_same_state(c.get_state(), state)
    rest = [x.run(values[split:]) for x in (a, b, c)]
    assert np.array_equal(rest[0], rest[1]) and np.array_equal(rest[0], rest[2])
    assert a.n_clipped_ == b.n_clipped_ == c.n_clipped_
    whole = make_counter(name, HORIZON, 3, noise=noise, seed=17).run(values)
    assert_same_release(name, rest[0], whole[split:])


# ---------------------------------------------------------------- learners
def learner_after(name, prefix, seed=3):
    X, y = stream(name, HORIZON)
    learner = make_learner(name, HORIZON, seed=seed)
    for i in range(prefix):
        learner.learn_one(X[i], y[i])
    return learner, X, y


BAD_LABELS = st.one_of(
    st.sampled_from([*NONFINITE, np.float64("nan"), np.float32("inf"), "1", "nan", None, True,
                     False, 1j, np.array(1.0), np.array([1.0]), [1.0], (1.0,), {}, 2**1100,
                     -(2**1100)]),
    st.text(max_size=3), st.complex_numbers(max_magnitude=2.0).map(lambda z: complex(z)),
)


@pytest.mark.parametrize("name", LEARNER_NAMES)
@FUZZ
@given(data=st.data())
def test_learner_learn_one_refuses_bad_input_and_consumes_nothing(name, data):
    prefix = data.draw(st.integers(0, 3), label="prefix")
    bad_x = data.draw(st.one_of(st.none(), bad_vectors(DIM)), label="x")
    bad_y = data.draw(BAD_LABELS, label="y")
    learner, X, y = learner_after(name, prefix)
    before = learner.get_state()
    if bad_x is not None:
        with pytest.raises(InvalidInputError, match=r"^x must .+; got "):
            learner.learn_one(bad_x, y[prefix])
        with pytest.raises(InvalidInputError, match=r"^x must .+; got "):
            learner.predict_one(bad_x)
    with pytest.raises(InvalidInputError, match=r"^y must .+; got "):
        learner.learn_one(X[prefix], bad_y)
    assert_same_state(learner.get_state(), before)
    twin, _, _ = learner_after(name, prefix)
    learner.learn_one(X[prefix], y[prefix])
    twin.learn_one(X[prefix], y[prefix])
    assert np.array_equal(learner.weights, twin.weights)
    assert_same_state(learner.get_state(), twin.get_state())


@pytest.mark.parametrize("name", LEARNER_NAMES)
@FUZZ
@given(data=st.data())
def test_learner_run_refuses_bad_blocks_and_consumes_nothing(name, data):
    prefix = data.draw(st.integers(0, 3), label="prefix")
    which = data.draw(st.sampled_from(["X", "y", "comparator"]), label="argument")
    learner, X, y = learner_after(name, prefix)
    Xb, yb, comparator = X[prefix:prefix + 3], y[prefix:prefix + 3], None
    if which == "X":
        Xb = data.draw(bad_blocks(DIM), label="bad X")
        pattern = r"^X must .+; got "
    elif which == "y":
        yb = data.draw(st.one_of(nonfinite_vectors(3), wrong_shape_vectors(3),
                                 wrong_dtype_vectors(3)), label="bad y")
        pattern = r"^y must .+; got "
    else:
        comparator = data.draw(bad_vectors(DIM).filter(lambda v: v is not None),
                               label="bad comparator")  # None: no comparator
        pattern = r"^comparator must .+; got "
    before = learner.get_state()
    with pytest.raises(InvalidInputError, match=pattern):
        learner.run(Xb, yb, comparator=comparator)
    assert_same_state(learner.get_state(), before)
    twin, _, _ = learner_after(name, prefix)
    good = (X[prefix:prefix + 3], y[prefix:prefix + 3])
    assert np.array_equal(learner.run(*good).weights, twin.run(*good).weights)
    assert_same_state(learner.get_state(), twin.get_state())


@pytest.mark.parametrize("name", LEARNER_NAMES)
@FEW
@given(data=st.data())
def test_learner_clips_huge_features_and_labels(name, data):
    x = data.draw(huge_vectors(DIM), label="x")
    if name == "frank-wolfe":
        x = np.abs(x)
    y_huge = data.draw(st.one_of(st.floats(10.0, 1.7e308), st.floats(-1.7e308, -10.0)),
                       label="y")
    learner, X, y = learner_after(name, 2)
    twin, _, _ = learner_after(name, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or other numpy warning on the way
        learner.learn_one(x, y_huge)
        if np.max(np.abs(x)) <= 1e300:  # predict_one is x . w, unclipped: finite here
            assert np.isfinite(learner.predict_one(x))
    assert learner.n_clipped_ == twin.n_clipped_ + 1
    assert np.all(np.isfinite(learner.weights))
    # the documented clip: the element enters exactly as its projection on the bounds
    # (random features clip only rows beyond row_bound, where float64 loses their phases:
    # there a rounding of x moves the features, so the twin gets the library's own clip)
    if hasattr(twin, "row_bound"):
        entered = twin._far(x[None, :], np.zeros(1))[0][0]
    else:
        entered = twin.x_bound * unit(x)
    twin.learn_one(entered, math.copysign(twin.y_bound, y_huge))
    np.testing.assert_allclose(learner.weights, twin.weights, rtol=1e-9, atol=1e-12)
    trace = make_learner(name, HORIZON, seed=3).run(np.vstack([X[:2], x]),
                                                    np.array([*y[:2], y_huge]))
    assert np.all(np.isfinite(trace.weights)) and np.all(np.isfinite(trace.losses))


BAD_LEARNER_PARAMS = {
    "horizon": [0, -1, 2.5, "10", None, math.nan, True],
    "epsilon": [0.0, -1.0, math.nan, "1", None, True, 1j, -math.inf],
    # None is not bad: it asks for the default rule (1e-5, or 1/T where smaller)
    "delta": [-1e-9, 1.0, 5.0, math.nan, math.inf, "0", True],
    "seed": [-1, 1.5, "0", True],
}


@pytest.mark.parametrize("name", LEARNER_NAMES)
@FEW
@given(data=st.data())
def test_learner_constructor_refuses_bad_parameters_naming_them(name, data):
    param = data.draw(st.sampled_from(sorted(BAD_LEARNER_PARAMS)), label="param")
    value = data.draw(st.sampled_from(BAD_LEARNER_PARAMS[param]), label="value")
    factory, _ = LEARNERS[name]
    kwargs = {"epsilon": 1.0, "delta": 0.0 if "gamma" in name else 1e-5, "seed": 0}
    horizon = value if param == "horizon" else HORIZON
    if param != "horizon":
        kwargs[param] = value
    with pytest.raises(InvalidInputError, match=rf"^{param} must .+; got "):
        factory(horizon, **kwargs)


@pytest.mark.parametrize("name", LEARNER_NAMES)
@FEW
@given(data=st.data())
def test_learner_state_round_trips_continue_bit_for_bit(name, data):
    split = data.draw(st.integers(0, HORIZON - 1), label="split")
    by_run = data.draw(st.booleans(), label="prefix by run")
    X, y = stream(name, HORIZON, seed=split)
    a = make_learner(name, HORIZON, seed=23)
    if split and by_run:
        a.run(X[:split], y[:split])
    else:
        for i in range(split):
            a.learn_one(X[i], y[i])
    state = a.get_state()
    b = type(a).from_state(state)
    c = pickle.loads(pickle.dumps(a))
    assert_same_state(b.get_state(), state)
    assert_same_state(c.get_state(), state)
    rest = [learner.run(X[split:], y[split:]) for learner in (a, b, c)]
    for other in rest[1:]:
        assert np.array_equal(other.weights, rest[0].weights)
        assert np.array_equal(other.losses, rest[0].losses)
    assert_same_state(b.get_state(), a.get_state())
    assert_same_state(c.get_state(), a.get_state())


# ---------------------------------------------------------------- bandit learners
def bandit(seed=4, horizon=30):
    from dpol.learners import PrivateBanditFrankWolfe
    from dpol.sets import Box

    return PrivateBanditFrankWolfe(Box(0.0, 1.0, dim=2), horizon=horizon, epsilon=1.0,
                                   delta=1e-6, seed=seed)


def bandit_after(prefix):
    learner = bandit()
    for _ in range(prefix):
        x = learner.ask()
        learner.tell(float(x @ [0.3, -0.2]))
    return learner


@FUZZ
@given(prefix=st.integers(0, 12), value=BAD_LABELS, C=bad_blocks(2))
def test_bandit_tell_and_run_linear_refuse_bad_input_and_consume_nothing(prefix, value, C):
    learner = bandit_after(prefix)
    before = learner.get_state()
    with pytest.raises(InvalidInputError, match=r"^C must .+; got "):
        learner.run_linear(C)
    assert_same_state(learner.get_state(), before)
    x = learner.ask()
    before = learner.get_state()
    with pytest.raises(InvalidInputError, match=r"^loss_value must .+; got "):
        learner.tell(value)
    assert_same_state(learner.get_state(), before)
    twin = bandit_after(prefix)
    assert np.array_equal(twin.ask(), x)
    learner.tell(0.1)
    twin.tell(0.1)
    assert_same_state(learner.get_state(), twin.get_state())


@FEW
@given(split=st.integers(0, 29), huge=st.floats(1e3, 1.7e308))
def test_bandit_clips_huge_losses_and_round_trips_at_any_split(split, huge):
    a = bandit_after(split)
    b = type(a).from_state(a.get_state())
    c = pickle.loads(pickle.dumps(a))
    points = []
    for learner in (a, b, c):
        x = learner.ask()
        learner.tell(huge)
        assert learner.n_clipped_ == 1
        if split < 29:
            points.append(learner.run_linear(np.tile([0.3, -0.2], (29 - split, 1))).points)
        else:
            points.append(x[None, :])
    assert np.array_equal(points[0], points[1]) and np.array_equal(points[0], points[2])
    assert np.all(np.isfinite(points[0]))


# ---------------------------------------------------------------- sets and losses
def all_sets(dim=4):
    from dpol.sets import Box, ConvexHull, L1Ball, L2Ball, NuclearNormBall, Simplex

    return [L2Ball(dim), L1Ball(dim, 2.0), Simplex(dim), Box(-1.0, 1.0, dim=dim),
            NuclearNormBall((2, dim // 2)), ConvexHull(np.vstack([np.eye(dim), -np.eye(dim)]))]


@FUZZ
@given(bad=bad_vectors(4), method=st.sampled_from(["project", "linear_oracle", "contains"]))
def test_sets_refuse_bad_vectors_naming_them(bad, method):
    name = "c" if method == "linear_oracle" else "x"
    for domain in all_sets():
        with pytest.raises(InvalidInputError, match=rf"^{name} must .+; got "):
            getattr(domain, method)(bad)


@FUZZ
@given(v=huge_vectors(4))
def test_sets_project_far_points_or_refuse_them_clearly(v):
    from dpol.sets._base import MAX_ENTRY

    for domain in all_sets():
        if np.max(np.abs(v)) > MAX_ENTRY:
            with pytest.raises(InvalidInputError, match="x must have entries of magnitude"):
                domain.project(v)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            p = domain.project(v)
            assert domain.contains(p, tol=1e-6) and np.all(np.isfinite(p))
            assert np.all(np.isfinite(domain.linear_oracle(v)))


LOSS_BAD_ARRAYS = st.one_of(
    nonfinite_vectors(3), wrong_dtype_vectors(3),
    st.integers(0, 6).filter(lambda n: n != 3).map(lambda n: np.zeros((n,)) if n else []),
    hnp.arrays(np.float64, (1, 1, 3), elements=unit_entries()),
)
LOSS_BAD_LABELS = st.sampled_from([*NONFINITE, "1", None, True, 1j, [math.nan], np.zeros(2),
                                   2**1100])


@FUZZ
@given(data=st.data(), where=st.sampled_from(["w", "x", "y"]))
def test_losses_refuse_bad_arrays_naming_them(data, where):
    from dpol.losses import HingeLoss, LogisticLoss, Regularized, SquaredLoss

    args = {"w": np.zeros(3), "x": np.full(3, 0.1), "y": 1.0}
    args[where] = data.draw(LOSS_BAD_LABELS if where == "y" else LOSS_BAD_ARRAYS, label=where)
    for loss in (SquaredLoss(), LogisticLoss(), HingeLoss(), Regularized(SquaredLoss(), 0.5)):
        for method in ("value", "grad"):
            with pytest.raises(InvalidInputError, match=rf"^{where} must .+; got "):
                getattr(loss, method)(**args)
