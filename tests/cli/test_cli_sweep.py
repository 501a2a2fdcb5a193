"""`dpol sweep` on the command line: bad input (the config, the backend, an address that
answers nothing) is one line before any task, and no store is opened."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

typer_testing = pytest.importorskip("typer.testing")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


GOOD = ('horizon = 100\n[grid]\nlearners = ["pqftl"]\nepsilons = [1.0]\nseeds = 1\n'
        'datasets = ["synthetic-regression"]\n')


@pytest.mark.parametrize(("text", "args", "named"), [
    (GOOD.replace("epsilons", "epsilon"), [], "grid.epsilon must be a known key"),
    (GOOD.replace("[1.0]", '["one"]'), [], "grid.epsilons must hold numbers > 0"),
    (GOOD.replace("[1.0]", "[]"), [], "grid.epsilons must be a non-empty list"),
    (GOOD.replace('"pqftl"', '"nope"'), [], "grid.learners must name learners"),
    (GOOD + 'counters = ["windows"]\n', [], "(or their old names tree, honaker, window"),
    (GOOD.replace("seeds = 1", "seeds = 1.5"), [], "grid.seeds must be a count"),
    (GOOD.replace('"synthetic-regression"', '"breast-cancer"'), [],
     "grid.datasets must hold a regression data set for pqftl"),
    (GOOD + "[options.pqftl]\nnope = 1\n", [], "options must hold keywords"),
    (GOOD + "colour = 1\n", [], "colour must be a known key"),
    (GOOD.replace("[grid]", "horizon2 = [\n[grid]"), [], "not valid TOML"),
    (GOOD, ["--backend", "spark"], "backend must be one of 'local', 'ray', 'dask'; got 'spark'"),
    (GOOD, ["--backend", "dask", "--address", "tcp://127.0.0.1:9"],
     "address must be a reachable Dask scheduler"),
    (GOOD, ["--backend", "ray", "--address", "no-port"], "address must be host:port"),
    (GOOD, ["--backend", "ray", "--address", "127.0.0.1:9"], "address must be a reachable Ray"),
    (GOOD, ["--address", "127.0.0.1:9"], "address must be left unset for --backend local"),
    (GOOD + "[options]\npqftl = 3\n", [], "options.pqftl must be a table"),
    (GOOD + "[run]\nworkers = 'two'\n", [], "workers must be an integer"),
    # their cells would have the same keys: run twice, stored once
    (GOOD.replace("seeds = 1", "seeds = [0, 0, 1]"), [],
     "grid.seeds must hold distinct values (a repeated value runs its cells twice and "
     "stores them once; repeated: 0); got [0, 0, 1]"),
    (GOOD.replace("[1.0]", "[1, 1.0]"), [], "grid.epsilons must hold distinct values"),
])
def test_bad_input_is_one_line_before_any_task(tmp_path, text, args, named):
    from dpol.cli import _app

    path = write(tmp_path, text)
    result = typer_testing.CliRunner().invoke(_app(), ["sweep", str(path), *args])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("dpol ")]
    assert len(lines) == 1 and "error:" in lines[0] and named in lines[0], result.stderr
    assert not path.with_suffix(".sqlite").exists()  # no task started, no store opened


@pytest.mark.parametrize(("backend", "scheme", "what"), [("ray", "", "Ray head"),
                                                         ("dask", "tcp://", "Dask scheduler")])
def test_an_address_that_accepts_and_says_nothing_is_one_line(tmp_path, monkeypatch,
                                                              backend, scheme, what):
    from dpol.cli import _app

    # a listening socket nobody accepts on: the kernel completes the connection, and
    # nothing ever answers (Ray's client waited over 5 minutes on one, Dask's 100 s)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"{scheme}127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("DPOL_CONNECT_TIMEOUT", "0.5")
        path = write(tmp_path, GOOD)
        start = time.monotonic()
        result = typer_testing.CliRunner().invoke(
            _app(), ["sweep", str(path), "--backend", backend, "--address", address])
    # the timeout (twice at most: the sweep and its engine each check), plus a loaded
    # machine's scheduling
    assert time.monotonic() - start < 2 * 0.5 + 3
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"dpol sweep: error: address must be a {what} that "
                                    "answers within 0.5 s") and result.stderr.count("\n") == 1
    assert not path.with_suffix(".sqlite").exists()
