"""Checkpoints of a learner: ``get_state`` / ``from_state`` by deep copy (layer L4)."""

from __future__ import annotations

import copy

from dpol._seeding import lineage, note_restore
from dpol.errors import fail

__all__ = ["Checkpointable"]


class Checkpointable:
    """``get_state`` / ``from_state`` by deep copy: generators, counters and pending
    state included, so a restored object continues exactly like the original.

    A subclass keeps all its state in instance attributes; ``from_state`` restores them
    without calling ``__init__``.

    Privacy
    -------
    A state holds the un-noised sums and the generators' positions: keep it like the raw
    data. A restored object draws the noise the original would have drawn next, so two
    continuations of one state fork one noise stream (their releases' difference carries
    no noise): the guarantee covers one continuation only. Restore a state once, where
    the original stopped; a second restore in one process warns
    (:class:`~dpol.errors.ForkedStateWarning`; ``copy.deepcopy`` and pickle do not).

    Examples
    --------
    >>> import numpy as np
    >>> class Walk(Checkpointable):
    ...     def __init__(self, seed):
    ...         self.rng, self.x, self.t = np.random.default_rng(seed), 0.0, 0
    ...     def step(self):
    ...         self.x, self.t = self.x + self.rng.normal(), self.t + 1
    ...         return self.x
    >>> walk = Walk(0); _ = walk.step()
    >>> restored = Walk.from_state(walk.get_state())
    >>> restored.step() == walk.step(), restored.rng is walk.rng
    (True, False)
    """

    def get_state(self) -> dict:
        """A deep copy of the object's whole state."""
        lineage(self)  # kept in the state: a second restore of it is told apart
        return {"class": type(self).__name__, "state": copy.deepcopy(self.__dict__)}

    @classmethod
    def from_state(cls, state: dict):
        """Rebuild an object from :meth:`get_state`; it continues identically."""
        if not isinstance(state, dict) or state.get("class") != cls.__name__:
            raise fail("state", f"come from {cls.__name__}.get_state()",
                       state.get("class") if isinstance(state, dict) else state)
        obj = cls.__new__(cls)
        obj.__dict__.update(copy.deepcopy(state["state"]))
        note_restore(obj.__dict__.get("_lineage"), obj.__dict__.get("t_", obj.__dict__.get(
            "t")), cls.__name__)
        return obj
