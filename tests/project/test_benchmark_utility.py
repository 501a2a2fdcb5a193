"""Smoke test of benchmarks/utility.py: its smallest mode, on tiny streams, in seconds.

It checks the plumbing (every method and seed reaches the JSON, the summaries are the
records' means, the trivial baseline is the majority class, diffprivlib's columns say
when it is absent, the table fits 100 columns), not the learners' utility: that is what
the benchmark itself reports.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import utility
    finally:
        sys.path.pop(0)
    return utility


def test_smallest_mode_writes_consistent_outputs(bench, tmp_path, capsys):
    datasets = ["synthetic-logistic", "synthetic-regression"]
    result = bench.main(["--datasets", ",".join(datasets), "--epsilons", "1",
                         "--seeds", "2", "--learners", "default", "--max-rows", "300",
                         "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 100

    on_disk = json.loads((tmp_path / "utility_custom.json").read_text())
    assert on_disk["targets"] == json.loads(json.dumps(result["targets"]))
    report = (tmp_path / "utility_custom.md").read_text()
    assert (tmp_path / "utility_custom.png").stat().st_size > 10_000
    assert all(name in report for name in datasets)

    defaults = bench.default_learners()
    for name in datasets:
        info, methods = result["datasets"][name], result["summary"][name]
        assert info["stream"] == 300 and info["learners"] == [defaults[info["task"]]]
        mine = methods[info["default"]]
        assert set(mine) == {"1", "inf"} and mine["1"]["held_out"]
        # the summary is the mean of the two seeds' records
        key = "accuracy" if info["task"] == "classification" else "mse"
        runs = [r["held_out"][key] for r in result["records"] if r["dataset"] == name
                and r["kind"] == "dpol" and r["method"] == info["default"]]
        assert len(runs) == 2
        assert mine["1"]["held_out"][key]["mean"] == pytest.approx(np.mean(runs))
        assert result["targets"]["per_dataset"][name]["measured"]

    # the trivial baseline is the stream's majority class, scored on the held-out rows
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _utility_data import prepare
    finally:
        sys.path.pop(0)
    ds = prepare("synthetic-logistic", 300)
    majority = 1.0 if np.mean(ds.y_train > 0) >= 0.5 else -1.0
    trivial = result["summary"]["synthetic-logistic"]["trivial"]["-"]["held_out"]["accuracy"]
    assert trivial["mean"] == pytest.approx(np.mean(ds.y_test == majority))

    # --render rebuilds the same summary and targets from the JSON alone
    again = bench.main(["--render", str(tmp_path / "utility_custom.json"),
                        "--out", str(tmp_path / "again")])
    assert again["targets"] == on_disk["targets"]
    assert (tmp_path / "again" / "utility_custom.md").read_text() == report

    if result["diffprivlib"] is None:  # the column says so, and T3 is not judged
        assert "not installed" in printed and "absent" in printed
        assert result["targets"]["overall"]["T3"] is None
    else:
        assert "diffprivlib" in result["summary"]["synthetic-logistic"]


def test_unknown_dataset_is_refused(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--datasets", "nope"])
    assert "unknown data sets ['nope']" in capsys.readouterr().err
