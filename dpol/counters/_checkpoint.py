"""Checkpoints of a counter: get_state / from_state (layer L2)."""

from __future__ import annotations

import copy
import dataclasses
import warnings

import numpy as np

from dpol._seeding import lineage, note_restore
from dpol._validation import fail
from dpol.errors import NonPrivateWarning, PaperCalibrationWarning

__all__ = ["CounterCheckpoint"]


class CounterCheckpoint:
    """``get_state`` / ``from_state`` (or pickle): a rebuilt counter continues identically.

    Privacy
    -------
    A state holds the exact prefix sum and the noise generator's position: it can remove
    the noise from every release, so keep it like the raw data. A restored counter draws
    the noise the original would have drawn next (secure noise excepted: it is fresh OS
    randomness), so two continuations of one state are a fork whose releases differ
    without noise on different elements; a second restore of the same state in one
    process warns (:class:`~dpol.errors.ForkedStateWarning`).
    """

    def get_state(self) -> dict:
        """A deep copy of everything needed to continue identically (see :meth:`from_state`)."""
        return copy.deepcopy({
            "class": type(self).__name__,
            "params": self._params(),
            "t": self.t,
            "n_clipped_": self.n_clipped_,
            "sum": self._sum,
            "noise": self._source.get_state(),
            "structure": self._state_arrays(),
            "prefetched": self._prefetched,  # noise drawn ahead for the next add calls
            "seeded": self._privacy.seeded,  # the seed itself is not kept (params: None)
            "lineage": lineage(self),  # a second restore of this state is told apart
        })

    def _params(self) -> dict:
        return {
            "horizon": self.horizon, "dim": self.dim, "bound": self.bound,
            "noise_multiplier": self._noise_multiplier_arg, "epsilon": self.epsilon,
            "delta": self.delta, "neighbouring": self.neighbouring,
            "calibration": self.calibration, "noise": self.noise, "seed": None,
            "element_sensitivity": self.element_sensitivity,
            "participation": (self.participation.max_participations,
                              self.participation.min_separation),
        }

    @classmethod
    def from_state(cls, state: dict) -> CounterCheckpoint:
        """Rebuild a counter from :meth:`get_state`; its releases continue identically."""
        if state.get("class") != cls.__name__:
            raise fail("state", f"come from {cls.__name__}.get_state()", state.get("class"))
        state = copy.deepcopy(state)
        note_restore(state.get("lineage"), state["t"], cls.__name__)
        with warnings.catch_warnings():  # the original already warned when it was built
            warnings.simplefilter("ignore", NonPrivateWarning)
            warnings.simplefilter("ignore", PaperCalibrationWarning)
            obj = cls(**state["params"])
        obj.t = state["t"]
        if state.get("lineage") is not None:  # the same noise stream as the original's
            obj._lineage = state["lineage"]
        obj._privacy = dataclasses.replace(obj._privacy, seeded=state.get("seeded", False))
        obj.n_clipped_ = state["n_clipped_"]
        obj._sum = state["sum"]
        obj._source.set_state(state["noise"])
        obj._set_state_arrays(state["structure"])
        prefetched = state.get("prefetched")
        obj._prefetched = None if prefetched is None else np.asarray(prefetched, dtype=float)
        return obj

    def _state_arrays(self) -> dict:
        """Noise-correlation state (and secure-mode state) to checkpoint."""
        return dict(self._state)

    def _set_state_arrays(self, state: dict) -> None:
        """Restore :meth:`_state_arrays`."""
        self._state = self.strategy.restore_state(state, self.dim)

