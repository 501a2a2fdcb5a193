"""Smoke test of benchmarks/strategies_mean.py: its quick mode, jax_privacy skipped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_mode_writes_json_and_the_mean_optima_beat_the_square_root(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import strategies_mean as bench
    finally:
        sys.path.pop(0)
    out = tmp_path / "s.json"
    rows = bench.main(["--quick", "--out", str(out)])
    assert len(rows) == 2 * len(bench.STRATEGIES)
    saved = json.loads(out.read_text())
    assert saved["targets"] and all(t["below_sqrt"] for t in saved["targets"])
    assert saved["jax_privacy"] == []
    assert "jax_privacy: skipped (no --jax-python given)" in capsys.readouterr().out
    # a missing interpreter is skipped with its reason, not raised
    assert bench.jax_privacy_rows(str(tmp_path / "no-python"), (64,)) == []
