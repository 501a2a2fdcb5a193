"""dpol._seeding: every seed form turned into the same streams, independent children, and
the record of restored states that warns of a forked noise stream.

All exact: equal seeds must give equal bits, so draws are compared with ``==``.
"""

from __future__ import annotations

import uuid
import warnings

import numpy as np
import pytest

from dpol._seeding import lineage, note_restore, replica, resolve_rng, spawn_seeds
from dpol.errors import ForkedStateWarning, InvalidInputError

BAD_SEEDS = [-1, True, False, 1.5, "0", np.random.RandomState(0)]


def _draws(seed) -> list[int]:
    return np.random.default_rng(seed).integers(2**62, size=4).tolist()


def test_every_seed_form_resolves_to_numpys_own_generator():
    want = _draws(7)
    for seed in (7, np.int64(7), np.uint8(7), np.random.SeedSequence(7)):
        assert resolve_rng(seed).integers(2**62, size=4).tolist() == want
    rng = np.random.default_rng(7)
    assert resolve_rng(rng) is rng  # shared, not copied: the caller's stream advances
    assert isinstance(resolve_rng(None), np.random.Generator)


@pytest.mark.parametrize("bad", BAD_SEEDS)
def test_a_bad_seed_is_refused_by_name(bad):
    rule = r"seed must be None, a non-negative int, a SeedSequence or a Generator; got "
    for call in (lambda: resolve_rng(bad), lambda: spawn_seeds(bad, 2)):
        with pytest.raises(InvalidInputError, match=rule):
            call()


def test_an_int_seed_spawns_the_same_children_every_time():
    a, b = spawn_seeds(3, 2), spawn_seeds(np.int64(3), 2)
    assert [(c.entropy, c.spawn_key) for c in a] == [(3, (0,)), (3, (1,))]
    assert [_draws(c) for c in a] == [_draws(c) for c in b]
    assert _draws(a[0]) != _draws(a[1])  # 2^-248 to collide by chance: never


def test_a_seed_sequence_or_generator_spawns_new_children_on_each_call():
    seq = np.random.SeedSequence(3)
    first, second = spawn_seeds(seq, 1), spawn_seeds(seq, 1)
    assert (first[0].spawn_key, second[0].spawn_key) == ((0,), (1,))
    for kind in (np.random.PCG64, np.random.SFC64, np.random.Philox):
        gen = np.random.Generator(kind(3))
        one, two = spawn_seeds(gen, 2), spawn_seeds(gen, 1)
        assert all(type(g.bit_generator) is kind for g in one + two)
        assert len({tuple(g.integers(2**62, size=4)) for g in one + two}) == 3
    # a PCG64 Generator's children draw what default_rng of its sequence's children draws
    children = np.random.SeedSequence(3).spawn(2)
    spawned = spawn_seeds(np.random.Generator(np.random.PCG64(3)), 2)
    assert [g.integers(2**62, size=4).tolist() for g in spawned] == [_draws(c)
                                                                     for c in children]


def test_a_lineage_is_made_once_per_owner_and_kept():
    class Owner:
        pass

    a, b = Owner(), Owner()
    first = lineage(a)
    assert lineage(a) == first == a._lineage and len(first) == 16
    assert lineage(b) != first  # 2^-64 to collide by chance


def test_a_second_restore_of_one_position_warns_and_others_do_not():
    stream = f"test-seeding-{uuid.uuid4().hex}"  # a stream no other test restores
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on a first restore of each position
        note_restore(stream, 3, "Thing")
        note_restore(stream, 4, "Thing")
        for _ in range(2):  # without a lineage or a step count nothing can be compared
            note_restore(None, 3, "Thing")
            note_restore(stream, None, "Thing")
    with pytest.warns(ForkedStateWarning, match=r"^Thing\.from_state: this state \(step 3\) "
                      "was restored before"):
        note_restore(stream, 3, "Thing")


def test_a_replica_draws_what_its_seed_would_draw_next_and_leaves_it_alone():
    # a SeedSequence spawns, a Generator draws: both advance, so a second build from the
    # same one differs; the replica, taken before the first, gives the first's bits
    seq = np.random.SeedSequence(11)
    seq.spawn(2)  # a used sequence: the replica continues from where it stands
    again = replica(seq)
    first = [c.generate_state(2).tolist() for c in seq.spawn(3)]
    assert [c.generate_state(2).tolist() for c in again.spawn(3)] == first
    rng = np.random.default_rng(5)
    rng.normal(size=3)
    twin = replica(rng)
    np.testing.assert_array_equal(twin.normal(size=4), rng.normal(size=4))
    assert replica(3) == 3 and replica(None) is None
