"""WindowTreeCounter: the binary tree when the window covers the stream, expired elements,
its window argument.

Every counter's contract is tests/counters/test_counters.py; the window tree against the
pseudo-code is tests/counters/test_counters_reference.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpol.counters import BinaryTreeCounter, WindowTreeCounter
from dpol.errors import InvalidInputError

from counter_cases import in_bound_stream


def test_window_counter_equals_binary_tree_when_window_covers_horizon():
    values = in_bound_stream(13, 2)
    a = WindowTreeCounter(13, 2, window=16, noise_multiplier=1.0, seed=4).run(values)
    b = BinaryTreeCounter(13, 2, noise_multiplier=1.0, seed=4).run(values)
    assert np.array_equal(a, b)
    # no window given: W = T, the whole stream protected (what `--counter window` runs)
    default = WindowTreeCounter(13, 2, noise_multiplier=1.0, seed=4)
    assert default.window == 13 and default.privacy.window is None
    assert np.array_equal(default.run(values), b)
    with pytest.raises(InvalidInputError, match="window must be given for an endless"):
        WindowTreeCounter(None, noise_multiplier=1.0)


def test_window_old_element_shifts_later_releases_by_the_clean_difference():
    window, horizon, i = 4, 30, 6
    values = in_bound_stream(horizon, 2)
    changed = values.copy()
    changed[i - 1] = -changed[i - 1]
    a = WindowTreeCounter(horizon, 2, window=window, noise_multiplier=1.0, seed=8).run(values)
    b = WindowTreeCounter(horizon, 2, window=window, noise_multiplier=1.0, seed=8).run(changed)
    diff = changed[i - 1] - values[i - 1]
    assert np.array_equal(a[: i - 1], b[: i - 1])  # before i: untouched
    # from i on (in and after the window) the same noise is reused, no fresh noise enters
    np.testing.assert_allclose(b[i - 1:] - a[i - 1:], np.broadcast_to(diff, (horizon - i + 1, 2)),
                               rtol=0, atol=1e-12)


def test_window_must_be_a_positive_integer():
    with pytest.raises(InvalidInputError, match="window must be an integer >= 1"):
        WindowTreeCounter(4, window=0, noise_multiplier=1.0)
