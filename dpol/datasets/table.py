"""A table already in memory, named, to pass where a data file is taken (layer L4).

``dpol run --by KEY`` splits one file into the streams of its keys and runs each as its
own ``dpol run``; a :class:`Table` carries one key's rows (to a worker process, a Ray
or a Dask worker, pickled) with the name its report shows, through the same reader as a
file (:func:`~dpol.datasets.files.read_table`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpol._validation import fail

__all__ = ["Table"]


@dataclass(frozen=True, eq=False)
class Table:
    """Rows (n, k) of finite numbers, their column names, and the name a report shows.

    Examples
    --------
    >>> t = Table(np.array([[1.0, 2.0], [3.0, 4.0]]), ("a", "y"), "d.csv [tenant=7]")
    >>> str(t), t.values.shape, t.names
    ('d.csv [tenant=7]', (2, 2), ('a', 'y'))
    >>> Table(np.ones((2, 2)), ("a",), "t")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: names must be one per column (2); got ('a',)
    """

    values: np.ndarray
    names: tuple[str, ...]
    name: str

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim != 2 or not np.all(np.isfinite(values)):
            raise fail("values", "be a 2-d array of finite numbers", self.values)
        if len(self.names) != values.shape[1]:
            raise fail("names", f"be one per column ({values.shape[1]})", self.names)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "names", tuple(self.names))

    def __str__(self) -> str:
        return self.name
