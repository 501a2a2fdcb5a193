"""Seeds to generators, and independent child seeds for sub-components (layer L0).

Every object that draws randomness takes ``seed`` (None, an int >= 0, a SeedSequence or
a Generator) and turns it into its streams here, so equal seeds give equal bits
everywhere in the library.
"""

from __future__ import annotations

import copy
import secrets
import warnings
from numbers import Integral

import numpy as np

from dpol.errors import ForkedStateWarning, fail

__all__ = ["lineage", "note_restore", "replica", "resolve_rng", "spawn_seeds"]

#: (lineage, position) of every state restored in this process
_RESTORED: set[tuple[str, object]] = set()


def replica(seed: object) -> object:
    """A seed that draws what ``seed`` would draw next, taken before ``seed`` is used: to
    build a component again as if its first build (thrown away) had not happened.

    A SeedSequence advances as it spawns and a Generator as it draws, so building twice
    from the same one gives other bits the second time; its replica gives the first
    build's. None and ints are returned as they are (an int replays by itself; None is
    fresh entropy each time).

    Examples
    --------
    >>> seq = np.random.SeedSequence(7)
    >>> copy_of = replica(seq)
    >>> first = seq.spawn(1)[0]
    >>> bool(copy_of.spawn(1)[0].generate_state(1)[0] == first.generate_state(1)[0])
    True
    """
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key,
                                      pool_size=seed.pool_size,
                                      n_children_spawned=seed.n_children_spawned)
    if isinstance(seed, np.random.Generator):
        return copy.deepcopy(seed)
    return seed


def resolve_rng(seed: object) -> np.random.Generator:
    """An ``np.random.Generator`` from ``None``, an int, a SeedSequence or a Generator.

    A Generator is returned as it is (shared, not copied); an int must be >= 0.

    Examples
    --------
    >>> rng = resolve_rng(0)
    >>> resolve_rng(rng) is rng, int(rng.integers(100)) == int(resolve_rng(0).integers(100))
    (True, True)
    >>> resolve_rng(-1)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: seed must be None, a non-negative int, a SeedSequence
    or a Generator; got -1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (Integral, np.random.SeedSequence)):
        if isinstance(seed, bool) or (isinstance(seed, Integral) and int(seed) < 0):
            raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)
        return np.random.default_rng(seed)
    raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)


def spawn_seeds(seed: object, n: int) -> list[np.random.SeedSequence | np.random.Generator]:
    """``n`` independent child seeds of ``seed`` (None, int, SeedSequence, Generator).

    Sub-components (two counters, a projection and a noise stream) get their own
    streams, so adding draws to one never shifts another's. An int gives the same
    children on every call; a SeedSequence or Generator spawns from its own seed
    sequence, which advances (as ``SeedSequence.spawn`` does), so a second call gives
    new children.

    The children are SeedSequences, except for a Generator: then Generators of its bit
    generator's kind, as numpy's ``Generator.spawn`` makes them (numpy >= 1.25). Every
    consumer takes either (``np.random.default_rng`` returns a Generator unchanged), and
    a PCG64 Generator's children draw what ``default_rng`` of the child sequences draws.
    So ``seed=np.random.Generator(np.random.SFC64(s))`` puts every stream of a learner on
    SFC64, whose normals cost 17% less than PCG64's (docs/benchmarks/performance.md).

    Examples
    --------
    >>> a, b = spawn_seeds(0, 2)
    >>> a.spawn_key, b.spawn_key, a.entropy
    ((0,), (1,), 0)
    >>> c = spawn_seeds(0, 2)[0]  # an int seed: reproducible
    >>> int(np.random.default_rng(a).integers(1000)) == int(np.random.default_rng(c).integers(1000))
    True
    >>> sfc = np.random.Generator(np.random.SFC64(0))
    >>> [type(g.bit_generator).__name__ for g in spawn_seeds(sfc, 2)]
    ['SFC64', 'SFC64']
    >>> spawn_seeds(-1, 2)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: seed must be None, a non-negative int, a SeedSequence
    or a Generator; got -1
    """
    if isinstance(seed, np.random.Generator):
        kind = type(seed.bit_generator)
        return [np.random.Generator(kind(child)) for child in seed.bit_generator.seed_seq.spawn(n)]
    if isinstance(seed, np.random.SeedSequence):
        seq = seed
    elif seed is None or (isinstance(seed, Integral) and not isinstance(seed, bool)
                          and int(seed) >= 0):
        seq = np.random.SeedSequence(None if seed is None else int(seed))
    else:
        raise fail("seed", "be None, a non-negative int, a SeedSequence or a Generator", seed)
    return seq.spawn(n)


def lineage(owner: object) -> str:
    """The id of ``owner``'s noise stream, made at its first checkpoint and carried by
    every state of it (restored objects keep it: they continue the same stream)."""
    return owner.__dict__.setdefault("_lineage", secrets.token_hex(8))


def note_restore(stream: str | None, position: object, what: str) -> None:
    """Record that a state at ``position`` (the step count) of the noise stream
    ``stream`` was restored, and warn (:class:`~dpol.errors.ForkedStateWarning`) when it
    was restored before in this process: two objects would draw the same noise.

    Examples
    --------
    >>> import warnings
    >>> note_restore("doctest-stream", 3, "Walk")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     note_restore("doctest-stream", 3, "Walk")
    >>> caught[0].category.__name__
    'ForkedStateWarning'
    """
    if stream is None or position is None:  # no lineage or step count: nothing to compare
        return
    if (stream, position) in _RESTORED:
        warnings.warn(f"{what}.from_state: this state (step {position}) was restored before; "
                      "both objects continue the same noise stream (a counter's releases on "
                      "different elements then differ by the elements, without noise), and "
                      "the guarantee covers one continuation only", ForkedStateWarning,
                      stacklevel=3)
    _RESTORED.add((stream, position))
