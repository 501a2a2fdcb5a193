"""One cell of a sweep: the same bits at every run (everything comes from its
configuration), and a failure recorded with its error, never raised."""

from __future__ import annotations

import math

from dpol.experiments.sweeps.cell import METRICS, run_cell

CELL = {"learner": "pqftl", "dataset": "synthetic-regression", "counter": None,
        "epsilon": 1.0, "delta": None, "seed": 3, "horizon": 100, "calibration": "tight",
        "options": {}}


def test_a_cell_gives_the_same_bits_at_every_run():
    first, again = run_cell(CELL), run_cell(CELL)
    assert first["status"] == "done" and first["rows"] == 100
    assert {k: first[k] for k in METRICS} == {k: again[k] for k in METRICS}
    assert first["accuracy"] is None  # a regression learner


def test_a_cell_that_fails_is_recorded_with_its_traceback():
    record = run_cell({**CELL, "dataset": "no-such-set"})
    assert record["status"] == "failed" and "dataset must be one of" in record["error"]
    assert record["traceback"].startswith("Traceback")
    assert all(record[k] is None for k in METRICS) and math.isfinite(record["seconds"])


def test_warnings_are_kept_in_the_record_not_raised():
    # POL's paper calibration warns (docs/errata.md, JKT-6): in a worker process the
    # warning would be lost, so the record keeps it
    record = run_cell({**CELL, "learner": "pol", "dataset": "synthetic-classification",
                       "calibration": "paper"})
    assert record["status"] == "done"
    assert record["warnings"].startswith("PaperCalibrationWarning: ")
