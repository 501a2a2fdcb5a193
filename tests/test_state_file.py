"""dpol._state_file: checkpoints that hold learners whole and cannot run code when read."""

from __future__ import annotations

import io
import json
import os
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dpol._state_file import StateFileError, read_state, write_state
from dpol.adapters import LEARNERS, make_learner
from dpol.counters import COUNTER_NAMES, make_counter
from dpol.errors import NonPrivateWarning


def _roundtrip(obj):
    buf = io.BytesIO()
    write_state(buf, obj)
    buf.seek(0)
    return read_state(buf)


def _stream(task: str, n: int = 60, d: int = 3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) / 3
    y = np.sign(rng.normal(size=n)) if task == "classification" else X @ [0.5, -0.2, 0.1]
    return X, y


@pytest.mark.parametrize("features", [{}, {"fit_intercept": True}, {"random_features": 8}])
@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_continues_bit_for_bit_after_a_round_trip(name, features):
    if name == "kernel" and features:
        pytest.skip("the kernel learner takes no intercept nor random features")
    X, y = _stream(LEARNERS[name].task)
    model = make_learner(name, 3, horizon=60, epsilon=1.0, seed=0, **features)
    model.run(X[:20], y[:20])
    back = _roundtrip(model)
    assert type(back) is type(model) and back.privacy == model.privacy
    np.testing.assert_array_equal(back.run(X[20:], y[20:]).weights,
                                  model.run(X[20:], y[20:]).weights)
    assert back.predict_one(X[0]) == model.predict_one(X[0])


@pytest.mark.parametrize("name", COUNTER_NAMES)
def test_every_counter_continues_bit_for_bit_after_a_round_trip(name):
    c = make_counter(name, 64, 2, epsilon=1.0, delta=1e-5, seed=1)
    V = np.random.default_rng(2).uniform(-0.5, 0.5, (64, 2))
    c.run(V[:10])
    back = _roundtrip(c)
    np.testing.assert_array_equal(back.run(V[10:]), c.run(V[10:]))


def test_a_state_file_of_commit_021cd44_still_reads_and_continues_bit_for_bit():
    # written before the modules were renamed (tests/fixtures/make_state_021cd44.py): the
    # module paths it names are read through _state_file's table of moved modules
    here = Path(__file__).parent / "fixtures"
    state = read_state(here / "state_021cd44.npz")
    expected = json.loads((here / "state_021cd44.json").read_text())
    V = np.random.default_rng(2).uniform(-0.5, 0.5, (16, 2))
    X = np.random.default_rng(0).normal(size=(16, 3)) / 3
    y = X @ [0.5, -0.2, 0.1]
    for name, want in expected.items():
        got = (state[name].run(X[8:], y[8:]).weights if name in ("incremental_erm",
               "frank-wolfe") else state[name].run(V[6:]))  # a learner, else a counter
        if name in ("toeplitz", "blt"):
            # the same draws, summed in another order since ToeplitzCounter.run's blocked
            # product (bounded memory): equal to rounding, as its docs promise (relative
            # 1e-12, the blocked-vs-direct bound of tests/counters/test_toeplitz.py).
            # BLT's run: products over blocks of BLOCK_ROWS = 32 steps since they replaced
            # its first-order filters; a release sums at most 32 + 5 + (its blocks)
            # rounded terms, each at most the largest release: under 100 eps relative,
            # well inside 1e-12
            np.testing.assert_allclose(got, np.array(want), rtol=0.0,
                                       atol=1e-12 * np.abs(want).max(), err_msg=name)
            continue
        np.testing.assert_array_equal(got, np.array(want), err_msg=name)


def test_shared_objects_stay_shared_and_plain_values_keep_their_kinds():
    shared = np.arange(3.0)
    state = {"a": shared, "b": shared, "t": (1, 2.5, "x", None, True), "s": {1, 2},
             "f": frozenset({3}), "k": {(1, 2): [np.float64(0.5), np.int64(7)]},
             "big": 2**127 + 1, "inf": float("inf")}
    back = _roundtrip(state)
    assert back["a"] is back["b"]
    assert back["t"] == state["t"] and back["s"] == {1, 2} and back["f"] == frozenset({3})
    assert type(back["k"][(1, 2)][0]) is np.float64 and type(back["k"][(1, 2)][1]) is np.int64
    assert back["big"] == 2**127 + 1 and back["inf"] == float("inf")


def test_a_generator_keeps_its_stream_and_its_seed_sequence():
    rng = np.random.default_rng(7)
    rng.normal(size=5)
    back = _roundtrip(rng)
    assert back.normal() == rng.normal()
    # children spawned afterwards are the same too (learners spawn their streams)
    assert back.spawn(1)[0].normal() == rng.spawn(1)[0].normal()


def test_objects_from_outside_dpol_are_not_written():
    with pytest.raises(TypeError, match="only classes and functions defined in dpol"):
        _roundtrip({"f": lambda x: x})
    with pytest.raises(TypeError, match="only classes"):
        _roundtrip(io.StringIO())


def _crafted(document: dict) -> io.BytesIO:
    buf = io.BytesIO()
    text = json.dumps({"format": "dpol-state-1", "root": document})
    np.savez(buf, **{"state.json": np.frombuffer(text.encode(), dtype=np.uint8)})
    buf.seek(0)
    return buf


@pytest.mark.parametrize("document", [
    # a class outside dpol, one a dpol module merely imports, and a function that runs code
    {"$id": 0, "$object": "os:PathLike", "attrs": {"$id": 1, "$dict": []}},
    {"$id": 0, "$object": "dpol.experiments.runs.output:Path", "attrs": {"$id": 1, "$dict": []}},
    {"$id": 0, "$function": "os:system"},
    {"$id": 0, "$function": "dpol.experiments.runs.output:shutil.rmtree"},
    {"$id": 0, "$type": "builtins:eval"},
    {"$id": 0, "$method": "system", "self": {"$id": 1, "$path": "x"}},
    # a real method of an object outside dpol: it wrote a .pth file (code at next start)
    {"$id": 0, "$method": "write_bytes", "self": {"$id": 1, "$path": "pwned.pth"}},
    {"$id": 0, "$type": "dp_accounting.not_loaded_module:Thing"},
    {"$id": 0, "$array": "state.json"},
    {"$id": 0, "$__init__": []},
    {"$id": 0, "$object": "dpol.errors:DpolError", "attrs": {"$id": 1, "$dict": []}},
    {"$id": 0, "$generator": "os", "seed": None, "state": None},
])
def test_a_crafted_file_is_refused_without_running_anything(document, tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(os, "system", lambda *a: ran.append(a))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StateFileError):
        read_state(_crafted(document))
    assert not ran and not list(tmp_path.iterdir())


def test_a_truncated_or_foreign_file_is_refused(tmp_path):
    buf = io.BytesIO()
    write_state(buf, {"w": np.arange(1000.0)})
    whole = buf.getvalue()
    for broken in (whole[: len(whole) // 2], b"", b"\x80\x04K\x01.", whole[:-30]):
        with pytest.raises(StateFileError):
            read_state(io.BytesIO(broken))
    plain = io.BytesIO()
    np.savez(plain, x=np.arange(3))  # an npz, but not a state file
    plain.seek(0)
    with pytest.raises(StateFileError):
        read_state(plain)


def test_the_non_private_twin_round_trips_too():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonPrivateWarning)
        twin = make_learner("ridge", 3, horizon=60, epsilon=float("inf"), seed=0)
    X, y = _stream("regression")
    twin.run(X, y)
    np.testing.assert_array_equal(_roundtrip(twin).weights, twin.weights)


def test_an_array_claiming_a_huge_shape_is_one_refusal():
    # the header of a stored array may claim any shape: reading it must end in one
    # StateFileError (numpy raises MemoryError or ValueError), never a traceback
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {
        "descr": "<f8", "fortran_order": False, "shape": (10**7, 10**7)})
    member = header.getvalue() + b"\0" * 64
    text = json.dumps({"format": "dpol-state-1", "root": {"$id": 0, "$array": "a0"}})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("state.json.npy", _npy(np.frombuffer(text.encode(), dtype=np.uint8)))
        z.writestr("a0.npy", member)
    buf.seek(0)
    with pytest.raises(StateFileError):
        read_state(buf)


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()
