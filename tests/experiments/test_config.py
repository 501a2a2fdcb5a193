"""The sweep configuration: the old learner and counter names are read as their
canonical ones (a store written under them is found by their keys), counters multiply
only the learners that take one, and the store path is read beside the config. Its
refusals are the command line's: tests/cli/test_cli_sweep.py."""

from __future__ import annotations

from sweep_cases import config

from dpol.experiments.sweeps.config import cell_key, load_config
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


def test_counters_multiply_only_the_learners_that_take_one_and_the_store_sits_beside(
        tmp_path):
    (tmp_path / "grid.toml").write_text(
        'horizon = 50\nstore = "out/results.sqlite"\n[grid]\nlearners = ["pqftl", "igd"]\n'
        'counters = ["binary_tree", "honaker_tree"]\nepsilons = [1.0]\nseeds = [4]\n'
        'datasets = ["synthetic-regression", "synthetic-classification"]\n')
    cfg = load_config(tmp_path / "grid.toml")
    # igd adds its noise without a counter: one cell, not one per counter
    assert [(c["learner"], c["dataset"], c["counter"]) for c in cfg.cells] == [
        ("pqftl", "synthetic-regression", "binary_tree"),
        ("pqftl", "synthetic-regression", "honaker_tree"),
        ("igd", "synthetic-classification", None)]
    assert cfg.store == tmp_path / "out" / "results.sqlite"  # relative to the config
    (tmp_path / "grid.toml").write_text('[grid]\nlearners = ["pqftl"]\nepsilons = [1.0]\n'
                                        'seeds = 1\ndatasets = ["synthetic-regression"]\n')
    assert load_config(tmp_path / "grid.toml").store == tmp_path / "grid.sqlite"
