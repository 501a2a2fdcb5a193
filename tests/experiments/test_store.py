"""The results store of a sweep: each cell committed as it arrives (a new connection
sees it), a failed cell not finished and replaced by its rerun's result."""

from __future__ import annotations

from dpol.experiments.sweeps.store import ResultStore, finished_cells

CELL = {"learner": "pqftl", "dataset": "synthetic-regression", "counter": None,
        "epsilon": 1.0, "delta": None, "seed": 0, "horizon": 50, "calibration": "tight",
        "options": {"alpha": 0.5}}


def test_a_failed_cell_is_rerun_and_its_result_replaces_the_failure(tmp_path):
    path = tmp_path / "s.sqlite"
    with ResultStore(path) as store:
        store.put("k", CELL, {"status": "failed", "error": "ValueError: x"}, "local")
        # committed at once: another connection (a reader, a rerun) sees it
        assert finished_cells(path) == set()  # failed: to run again
        with ResultStore(path) as reader:
            assert [r["status"] for r in reader.rows()] == ["failed"]
        store.put("k", CELL, {"status": "done", "mean_loss": 0.25}, "local")
    assert finished_cells(path) == {"k"}
    with ResultStore(path) as reader:
        (row,) = reader.rows()  # one row per key: the failure is gone
    assert (row["status"], row["error"], row["mean_loss"]) == ("done", None, 0.25)
    assert row["options"] == {"alpha": 0.5} and row["backend"] == "local"
