"""The benchmark scripts no other test runs, run in their smallest mode: a script that
crashes on the names or counters of today's library is a broken measurement.

Both broke unseen before these tests: fit_time.py looked learners up by their old names
(``ridge-classifier-rff``) and excess_regret.py tried counters that refuse its horizon
(``dense_mean``, ``banded_matrix`` above 2,048 steps).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_fit_time_times_every_case_of_todays_registry(tmp_path):
    out = tmp_path / "fit_time.json"
    printed = _run("fit_time.py", "--rows", "2000", "--repeats", "1", "--skip-every-step",
                   "--out", str(out))
    results = json.loads(out.read_text())["results"]
    assert [r["case"] for r in results] == ["OnlineClassifier()", "OnlineRegressor()", "ridge",
                                            "ridge_classifier", "ridge_classifier_rff"]
    assert all(r["cpu_seconds"] >= 0 and r["solves"] >= 1 for r in results)
    assert "against the 3.0 s goal" in printed


def test_excess_regret_leaves_out_the_counters_that_refuse_its_horizon(tmp_path):
    printed = _run("excess_regret.py", "--quick", "--out", str(tmp_path))
    body = json.loads((tmp_path / "excess_regret.json").read_text())
    # T = 10,000: the dense counters refuse it, and say so; the others all ran
    assert "dense_mean left out at T = 10,000" in printed
    ran = {r["counter"] for r in body["rows"]}
    assert "dense_mean" not in ran and {"tree", "blt"} <= ran
    assert set(body["chosen"]) == {"PQFTL", "FTAL"} and (tmp_path / "excess_regret.png").exists()
