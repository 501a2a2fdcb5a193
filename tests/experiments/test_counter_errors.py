"""``dpol counters``' logic: every counter of the registry in the table (the binary tree
also padded, the window tree at its window), and a counter that cannot protect the asked
participation gets its reason in its row instead of failing the table."""

from __future__ import annotations

import numpy as np

from dpol.counters import COUNTER_NAMES
from dpol.experiments.counter_errors import COUNTER_VARIANTS, counter_table


def test_every_registered_counter_has_a_variant():
    names = {name for name, _ in COUNTER_VARIANTS.values()}
    assert names == set(COUNTER_NAMES)
    assert COUNTER_VARIANTS["binary_tree-padded"] == ("binary_tree", {"padded": True})


def test_a_counter_that_cannot_protect_the_pattern_is_skipped_with_its_reason():
    # 2 participations 8 steps apart: the window tree's window DP and the endless tree
    # (no horizon bounds a participant's steps) cannot protect it; every other runs
    rows = counter_table(16, 1.0, 1e-5, participation=(2, 8))
    assert [r["counter"] for r in rows] == list(COUNTER_VARIANTS)
    skipped = {r["counter"]: r["skipped"] for r in rows if "skipped" in r}
    assert sorted(skipped) == ["unbounded_tree", "window_tree-64"]
    assert all(s.startswith("participation must be 'single'") for s in skipped.values())
    ran = [r for r in rows if "skipped" not in r]
    assert all(np.isfinite(r["measured_rms"]) and r["loss"] > 0 for r in ran)
