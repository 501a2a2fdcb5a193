"""KNJ's incremental regression reproduction (dpol.experiments.reproductions.knj_incremental):
its outputs."""

from __future__ import annotations


def test_knj_experiment_writes_its_outputs(tmp_path):
    from dpol.experiments.reproductions.knj_incremental import incremental_regression

    res = incremental_regression(tmp_path, horizon=256, dims=(2, 4), epsilons=(4.0, 8.0),
                                 seeds=1, sparse_dims=(8, 16), sparse_horizon=96,
                                 projection_dim=4)
    assert res.report.exists() and res.csv.exists()
    assert len(res.figures) == 4
    assert all(f.exists() and f.stat().st_size > 1000 for f in res.figures)
    text = res.report.read_text()
    assert "slope" in text and "PrivIncReg2" in text
