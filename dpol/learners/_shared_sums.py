"""A non-private twin's prefix sums, taken from its private learner's counters.

A chunked run (``dpol run --chunk-rows``) learns each chunk with the private PQFTL and then
with its non-private twin (epsilon = inf) on the same rows. The twin's counters release
the exact running sums S_t of the same elements, and the private counters compute those
very sums (the same additions, in the same order) before they add their noise. So the
private counters hand them over (:data:`dpol.counters._base.EXACT_TAPS`): the
twin keeps the rows of the steps it solves at, its counters' state moves on as their own
``run`` would have moved it, and the twin builds no elements and sums nothing. Its
releases are the same bits (tests/learners/test_shared_sums.py); what is released
privately is untouched (the tap only reads the private counters' sums).
"""

from __future__ import annotations

import weakref

import numpy as np

from dpol.counters._base import EXACT_TAPS
from dpol.learners import _solve_schedule as schedule
from dpol.learners._wrapper import LearnerWrapper

__all__ = ["share_exact_sums", "shared_sums"]

#: twin learner -> its SharedSums; like EXACT_TAPS, outside the learner's state (a saved
#: and restored twin sums for itself until shared again)
_SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Tap:
    """Takes a private counter's exact running sums of each chunk for the twin's counter
    ``twin``: the rows of the steps the twin solves at, and the twin counter's sum, step
    and clipped count."""

    def __init__(self, twin, per_doubling: int | None, horizon: int) -> None:
        self.twin, self.per_doubling, self.horizon = twin, per_doubling, horizon
        self.steps: list[np.ndarray] = []  # the kept rows' steps, oldest first
        self.rows: list[np.ndarray] = []

    def __call__(self, sums: np.ndarray, start: int, clipped: int) -> None:
        twin = self.twin
        if twin.t != start:
            raise RuntimeError(f"shared sums out of step: the twin's counter is at step "
                               f"{twin.t}, the private one at {start}")
        steps = np.arange(start + 1, start + len(sums) + 1)
        keep = schedule.solved_steps(steps, self.per_doubling, self.horizon)
        if keep.any():
            self.steps.append(steps[keep])
            self.rows.append(sums[keep])  # a copy: the private counter adds its noise next
        twin._sum = sums[-1].copy()  # what the twin's own run leaves (S_t + 0.0 is S_t)
        twin.t = start + len(sums)
        twin.n_clipped_ += clipped

    def take(self, steps: np.ndarray) -> np.ndarray:
        """The kept rows of ``steps``: the oldest ones kept, checked to be those steps
        (piece by piece: every step kept is a whole chunk, not copied again a block)."""
        got_steps, got, left = [], [], len(steps)
        while left and self.steps:
            part = min(left, len(self.steps[0]))
            got_steps.append(self.steps[0][:part])
            got.append(self.rows[0][:part])
            self.steps[0], self.rows[0] = self.steps[0][part:], self.rows[0][part:]
            if not len(self.steps[0]):
                del self.steps[0], self.rows[0]
            left -= part
        if left or not np.array_equal(np.concatenate([[], *got_steps]), steps):
            raise RuntimeError("shared sums out of step: the twin asks for other steps "
                               "than the private counter kept")
        if len(got) == 1:
            return got[0].copy()
        return np.concatenate(got) if got else np.empty((0, self.twin.dim))


class SharedSums:
    """The taps of a twin PQFTL's two counters (V, u), as its ``_run`` reads them."""

    def __init__(self, taps: tuple[_Tap, _Tap]) -> None:
        self.taps = taps

    def fed(self, start: int, n: int) -> bool:
        """Whether the private counters handed over rows start+1 .. start+n (True), or
        did not run on them (False: the twin sums them itself, as it would unshared)."""
        at = {tap.twin.t for tap in self.taps}
        if at == {start + n}:
            return True
        if at == {start}:
            return False
        raise RuntimeError(f"shared sums out of step: the twin's counters are at steps "
                           f"{sorted(at)}, its learner at {start} (+{n})")

    def take(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(V, u): the exact sums at ``steps`` (fresh arrays, overwritten by the solve)."""
        return self.taps[0].take(steps), self.taps[1].take(steps)


def _inner(model):
    """The learner inside ``model``: itself, or the one inside an intercept (whose lift
    is the same on both sides for the same options); None inside any other wrapper."""
    from dpol.learners.intercept import WithIntercept

    if not isinstance(model, LearnerWrapper):
        return model
    if type(model) is not WithIntercept or isinstance(model.learner, LearnerWrapper):
        return None
    return model.learner


def share_exact_sums(private, twin) -> bool:
    """Let ``twin``, the non-private twin of ``private`` fed the same rows right after
    it, take its prefix sums from ``private``'s counters (module docstring). True if
    shared: PQFTL with ``fixes`` on both sides, the same wrappers (intercepts of one
    scaling), bounds, schedule and step, float noise (no secure grid) on a counter that
    runs vectorized from any state. Anything else is left as it is (False).

    Examples
    --------
    >>> import warnings
    >>> from dpol.learners import PrivateQuadraticFTL
    >>> p = PrivateQuadraticFTL(3, horizon=100, epsilon=1.0, delta=1e-5, seed=0)
    >>> with warnings.catch_warnings(action="ignore"):  # the twin's NonPrivateWarning
    ...     t = PrivateQuadraticFTL(3, horizon=100, epsilon=float("inf"), seed=0)
    >>> share_exact_sums(p, t)
    True
    """
    p, q = _inner(private), _inner(twin)
    if p is None or q is None or type(p) is not type(q) or q in _SHARED \
            or not hasattr(q, "_counters"):
        return False
    chain = [(m.intercept_scaling, m.x_bound) for m in (private, twin)
             if isinstance(m, LearnerWrapper)]
    same = (len(chain) in (0, 2) and len(set(chain)) <= 1
            and all(getattr(m, "fixes", False) for m in (p, q))
            and all(getattr(p, k) == getattr(q, k) for k in (
                "dim", "horizon", "bound", "y_bound", "outputs", "solves_per_doubling", "t_")))
    if not same or q.is_private:
        return False
    pairs = list(zip(p._counters, q._counters, strict=True))
    if any(type(a) is not type(b) or a.dim != b.dim or a.bound != b.bound or a.t != b.t
           or getattr(a, "grid", None) is not None or a in EXACT_TAPS
           or not a.strategy.continues_vectorized or b._source.scale != 0.0
           for a, b in pairs):
        return False
    taps = tuple(_Tap(b, q.solves_per_doubling, q.horizon) for _, b in pairs)
    for (a, _), tap in zip(pairs, taps, strict=True):
        EXACT_TAPS[a] = tap
    _SHARED[q] = SharedSums(taps)
    return True


def shared_sums(learner, start: int, n: int) -> SharedSums | None:
    """What ``learner``'s ``run`` of rows start+1 .. start+n takes its sums from: the
    private counters' taps if they ran on those rows, None if it sums them itself."""
    shared = _SHARED.get(learner)
    return shared if shared is not None and shared.fed(start, n) else None
