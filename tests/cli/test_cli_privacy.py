"""`dpol account`, `dpol audit` and `dpol counters`: a configuration's noise and real
guarantee, an empirical audit that flags an under-noised twin, the counters' errors."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("typer.testing")

from cli_cases import assert_real_png, assert_refused, invoke

from dpol.cli import _app
from dpol.counters import BinaryTreeCounter
from dpol.experiments.counter_errors import COUNTER_VARIANTS


@pytest.fixture(scope="module")
def app():
    return _app()


def test_account_counter_and_learner(app):
    result = invoke(app, ["account", "--counter", "tree", "-T", "1024", "--dim", "2",
                          "--json"])
    assert result.exit_code == 0, result.output
    tight, paper = json.loads(result.output)
    built = BinaryTreeCounter(1024, 2, epsilon=1.0, delta=1e-5)
    assert tight["noise_scale"] == pytest.approx(built.noise_scale)
    assert tight["real_epsilon"] == pytest.approx(1.0)
    assert paper["calibration"] == "paper" and paper["real_epsilon"] < 1.0  # JKT over-noises
    honaker = json.loads(invoke(app, ["account", "--counter", "honaker", "-T", "64",
                                      "--json"]).output)
    assert honaker[1]["real_epsilon"] is None and "no published" in honaker[1]["note"]
    laplace = invoke(app, ["account", "--mechanism", "laplace", "--delta", "0", "-T", "64"])
    assert laplace.exit_code == 0 and "ENV Theorem 2.3" in " ".join(laplace.output.split())
    pol = json.loads(invoke(app, ["account", "--learner", "pol", "-T", "1000", "--dim", "5",
                                  "--json"]).output)
    assert pol[1]["real_epsilon"] > 1.0 and "misses 1/alpha" in pol[1]["note"]
    table = invoke(app, ["account", "--counter", "window", "--window", "8", "-T", "256"])
    assert table.exit_code == 0 and "real epsilon" in table.output
    assert_refused(invoke(app, ["account", "--counter", "nope"]), "counter must be one of")
    assert_refused(invoke(app, ["account", "--epsilon", "0"]), "epsilon must be > 0")


def test_audit_passes_the_real_counter_and_flags_a_half_noise_twin(app):
    # tree at T = 8, (1, 1e-5): with 1e5 runs per stream the audit of the real counter
    # gives ~0.4-0.6 and the half-noise twin (true epsilon ~2.2) ~1.2 (dpol.evaluation.audit
    # tests derive both); exit code 3 marks the violation
    real = invoke(app, ["audit", "--counter", "tree", "--runs", "100000"])
    assert real.exit_code == 0 and "PASSED" in real.output, real.output
    twin = invoke(app, ["audit", "--counter", "tree", "--runs", "100000",
                        "--noise-factor", "0.5"])
    assert twin.exit_code == 3 and "VIOLATION" in twin.output, twin.output
    learner = invoke(app, ["audit", "--learner", "pqftl", "--runs", "200", "--dim", "2"])
    assert learner.exit_code == 0 and "PrivateQuadraticFTL" in learner.output
    assert_refused(invoke(app, ["audit"]), "counter / learner must be given exactly one")
    assert_refused(invoke(app, ["audit", "--learner", "pqftl", "--noise-factor", "0.5"]),
                   "noise_factor must be 1 for a learner")


def test_counters_table_and_error_plot(app, tmp_path):
    result = invoke(app, ["counters", "-T", "128", "--plot", tmp_path / "err.png"])
    assert result.exit_code == 0, result.output
    for label in COUNTER_VARIANTS:
        assert label in result.output
    assert_real_png(tmp_path / "err.png")
    assert invoke(app, ["counters", "-T", "0"]).exit_code != 0


def test_counters_beyond_the_dense_horizon_and_over_epochs(app):
    # the dense counter stops at T = 2048: the table says so instead of failing (it did)
    result = invoke(app, ["counters", "-T", "4096"])
    assert result.exit_code == 0, result.output
    assert "dense_mean: skipped: horizon must be at most 2048" in " ".join(result.output.split())
    epochs = invoke(app, ["counters", "-T", "256", "--epochs", "4"])
    text = " ".join(epochs.output.split())
    assert epochs.exit_code == 0, epochs.output
    assert "a record in 4 epochs of 64" in text and "window_tree-64: skipped" in text
    assert_refused(invoke(app, ["counters", "-T", "8", "--epochs", "9"]),
                   "--epochs must be at most --horizon (8); got 9")
