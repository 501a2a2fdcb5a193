"""The sweep configuration: the old learner and counter names are read as their
canonical ones, and a store written under the old names is found by their keys."""

from __future__ import annotations

from sweep_cases import config

from dpol.experiments.sweeps.config import cell_key
from dpol.experiments.sweeps.store import ResultStore
from dpol.experiments.sweeps.sweep import sweep


def test_a_store_written_under_the_old_names_is_found_by_a_grid_of_either_names(tmp_path):
    old = {"horizon": 50, "grid": {"learners": ["pqftl", "frank-wolfe"], "epsilons": [1.0],
                                   "counters": ["tree", "window"], "seeds": 1,
                                   "datasets": ["synthetic-regression"]}}
    cfg = config(old)  # the old names are read as their canonical names
    assert {(c["learner"], c["counter"]) for c in cfg.cells} == {
        (learner, counter) for learner in ("pqftl", "online_frank_wolfe")
        for counter in ("binary_tree", "window_tree")}
    renamed = {"binary_tree": "tree", "window_tree": "window", "online_frank_wolfe":
               "frank-wolfe"}
    store = tmp_path / "old.sqlite"
    with ResultStore(store) as s:  # as a sweep before the renames wrote it
        for c in cfg.cells:
            was = {**c, **{k: renamed.get(c[k], c[k]) for k in ("learner", "counter")}}
            s.put(cell_key(was), was, {"status": "done"}, "local")
    summary = sweep(cfg, workers=1, store=store)
    assert (summary.skipped, summary.done) == (len(cfg.cells), 0)
    with ResultStore(store) as s:
        assert {(r["learner"], r["counter"]) for r in s.rows()} == {
            (c["learner"], c["counter"]) for c in cfg.cells}
