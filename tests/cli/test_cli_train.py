"""dpol train on the command line: a model and its guarantee as JSON, a refusal as one
line, a failed run's resumption."""

from __future__ import annotations

import json
import socket
import time

import numpy as np
import pytest

typer_testing = pytest.importorskip("typer.testing")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from dpol.cli import _app  # noqa: E402


@pytest.fixture(scope="module")
def app():
    return _app()


def invoke(app, args):
    return typer_testing.CliRunner().invoke(app, ["train", *map(str, args)])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("lake")
    rng = np.random.default_rng(3)
    for i in range(2):
        X = rng.normal(size=(150, 2)) / 2
        pd.DataFrame(X, columns=["u", "v"]).assign(y=(X[:, 0] > 0).astype(float),
                                                   note="text").to_parquet(
            out / f"{i}.parquet")
    return out


def test_train_writes_the_model_and_its_guarantee(app, folder, tmp_path):
    out = tmp_path / "model.json"
    result = invoke(app, [folder, "--features", "u,v", "--batch-size", 30, "--epochs", 2,
                          "--epsilon", 4, "--counter", "tree", "--out", out])
    assert result.exit_code == 0, result.output
    assert "20 steps (10 a pass) over 300 rows on local x1" in result.output
    model = json.loads(out.read_text())
    assert model["epsilon"] == 4.0 and model["steps"] == 20 and len(model["weights"]) == 2
    assert model["weights"][0] > 0  # y = 1 where u > 0


def test_refusals_are_one_line(app, folder):
    result = invoke(app, [folder, "--batch-size", 30])
    assert result.exit_code == 1
    assert "error: features must name numeric columns only (column 'note'" in result.output
    result = invoke(app, [folder, "--features", "u", "--batch-size", 301])
    assert result.exit_code == 1
    assert "error: batch_size must be at most the 300 rows of the data; got 301" in \
        result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("engine", "scheme", "what"), [("ray", "", "Ray head"),
                                                        ("dask", "tcp://", "Dask scheduler")])
def test_a_silent_address_is_one_line_within_the_timeout(app, folder, tmp_path, monkeypatch,
                                                         engine, scheme, what):
    # a listening socket nobody accepts on: the kernel completes the connection and
    # nothing ever answers (Ray's client waited minutes on one)
    monkeypatch.setenv("DPOL_CONNECT_TIMEOUT", "0.3")
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"{scheme}127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        result = invoke(app, [folder, "--features", "u,v", "--batch-size", 30, "--engine",
                              engine, "--address", address, "--checkpoint", tmp_path / "c",
                              "--out", tmp_path / "model.json"])
    # the timeout once (the probe refuses before any client joins), plus a loaded
    # machine's scheduling
    assert time.monotonic() - start < 0.3 + 3
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"dpol train: error: address must be a {what} that "
                                    "answers within 0.3 s (it accepted the connection and "
                                    "said nothing")
    assert result.stderr.endswith(f"; got '{address}'\n") and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no checkpoint folder, no model
