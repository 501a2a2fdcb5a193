"""What a worker holds: one partition's rows, grouped by step once (layer L5).

After :meth:`Shard.place`, the rows of each step of the epoch are one contiguous slice
(in their order in the partition), so a step reads only its own rows: the work of a
step scales with the batch, not with the data.
"""

from __future__ import annotations

import numpy as np

from dpol._validation import fail
from dpol.learners.dp_matrix_factorization import StepIndex, gradient_sum

__all__ = ["Shard", "shard_sums"]


class Shard:
    """One partition's (X, y), held by a worker for the whole training.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [3.0, 0.0]])
    >>> y = np.array([1.0, -1.0, 1.0, 0.0])
    >>> s = Shard(0, X, y, "logistic", 1.0).place(0, 2, 0)
    >>> s.y.tolist()  # 0 is the label -1; rows sorted by step (row 2 alone in step 0)
    [1.0, 1.0, -1.0, -1.0]
    >>> vec, clipped = s.sums(1, np.zeros(2))  # rows 0, 1, 3; row 3's gradient clipped
    >>> vec.round(3).tolist(), clipped
    ([0.5, 0.5], 1)
    """

    def __init__(self, index: int, X: np.ndarray, y: np.ndarray, loss: str,
                 clip: float) -> None:
        self.index, self.loss, self.clip = index, loss, clip
        if loss == "logistic":
            if not np.all(np.isin(y, (-1.0, 0.0, 1.0))):
                bad = y[~np.isin(y, (-1.0, 0.0, 1.0))][0]
                raise fail(f"label of partition {index}", "be -1, 0 or 1 for the logistic "
                           "loss (0 is read as -1)", float(bad))
            y = np.where(y == 0.0, -1.0, y)
        self.X, self.y = X, y
        self.n_rows = X.shape[0]
        self._offsets: np.ndarray | None = None

    def place(self, offset: int, steps_per_epoch: int, shuffle_seed: int) -> Shard:
        """Give the rows their ids (``offset`` + position) and group them by step."""
        index = StepIndex(np.arange(offset, offset + self.n_rows), steps_per_epoch,
                          shuffle_seed)
        self.X, self.y = self.X[index.order], self.y[index.order]
        self._offsets = index.offsets
        return self

    def sums(self, batch: int, theta: np.ndarray) -> tuple[np.ndarray, int]:
        """The clipped gradient sum of this partition's rows of ``batch`` at ``theta``."""
        lo, hi = self._offsets[batch], self._offsets[batch + 1]
        return gradient_sum(self.X[lo:hi], self.y[lo:hi], theta, self.loss, self.clip)


def shard_sums(shards: list[Shard], batch: int, theta: np.ndarray) -> list[tuple]:
    """(partition index, gradient sum, rows clipped) of each shard, for one step."""
    return [(s.index, *s.sums(batch, theta)) for s in shards]
