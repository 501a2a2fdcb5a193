"""`dpol run --by KEY --checkpoint-every M` (dpol/experiments/runs/by_key_checkpoint.py): a
run by key killed mid-way resumes to the files of an uninterrupted run, byte for byte,
without running a finished key again and continuing the key in progress from its
checkpoint; a changed file or changed arguments are refused in one line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from experiment_cases import (
    keyed_csv,
    killed_at_first_record,
    killed_in_child,
    killing,
    run_files,
)

from dpol.cli import main
from dpol.errors import InvalidInputError
from dpol.experiments.runs import by_key_checkpoint, stages
from dpol.experiments.runs.by_key import resume_any, run_by_key
from dpol.experiments.runs.output import checkpoint_folder

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked child")

KEYS = (3, 5, 7)
# a key of ~40 rows is one slice (stream_slices: 1,024 rows at least), so each key saves
# its checkpoint twice: after the private learner's stream, then after its twin's
ARGS = dict(by="key", seed=3, checkpoint_every=10)
#: the process is killed at this save of a key's checkpoint: the second key's twin has
#: released its stream, which is not saved yet (saves 1-2: the first key's)
KILL_AT = 4


def _no_plots(*_, **__):
    """In place of the plots (0.3 s each): they are a function of the losses compared."""
    return []


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The data (columns x0, key, x1, y; three keys interleaved) and an uninterrupted
    checkpointed run's files."""
    root = tmp_path_factory.mktemp("bykeyckpt")
    data = keyed_csv(root / "t.csv", KEYS, 120, 8)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stages, "write_plots", _no_plots)
        run_by_key("ridge", data, root / "out", **ARGS)
    return data, _files(root / "out")


_files = run_files


def _kill_at(calls: int, data: Path, out: Path) -> None:
    """Run `dpol run --by` in a child process, SIGKILLed at its ``calls``-th save of a
    key's checkpoint: then that key's releases are made, not saved."""
    def child():
        stages.save_checkpoint = killing(stages.save_checkpoint, calls)
        stages.write_plots = _no_plots
        sys.argv = ["dpol", "run", "ridge", str(data), "--out", str(out), "--by", "key",
                    "--seed", "3", "--checkpoint-every", "10"]
        main()

    killed_in_child(child)


@pytest.fixture
def killed(tmp_path, uninterrupted):
    """A `dpol run --by` killed as its second key's twin has released its stream, before
    that is saved: its output folder and data."""
    data, _ = uninterrupted
    _kill_at(KILL_AT, data, tmp_path / "out")
    return tmp_path / "out", data


def test_a_killed_run_resumes_to_the_uninterrupted_files(killed, uninterrupted, monkeypatch):
    out, _ = killed
    folder = checkpoint_folder(out)
    assert not out.exists()
    assert sorted(p.name for p in (folder / "keys").iterdir()) == [
        "key=3", "key=3.checkpoint", "key=3.done", "key=5.checkpoint"]
    runs, real = [], by_key_checkpoint.run_learner

    def spy(*args, _resumed=None, **kwargs):
        data = kwargs.get("data", args[1] if len(args) > 1 else None)
        runs.append((str(data), None if _resumed is None else dict(_resumed["done"])))
        return real(*args, _resumed=_resumed, **kwargs)

    monkeypatch.setattr(by_key_checkpoint, "run_learner", spy)
    monkeypatch.setattr(stages, "write_plots", _no_plots)
    resume_any(out)
    # key 3 is taken as it was; key 5 goes on after its private stream (the twin's
    # releases were never saved: drawn again from the saved generator); key 7 starts
    assert [name for name, _ in runs] == ["t.csv [key=5]", "t.csv [key=7]"]
    assert list(runs[0][1]) == ["private"] and runs[0][1]["private"] > 0
    assert runs[1][1] is None
    assert _files(out) == uninterrupted[1]
    assert not folder.exists()
    assert (b"saved every 10 rows in the folder `out.checkpoint` beside the run by key's "
            b"folder (owner-only)") in uninterrupted[1]["key=3/report.md"]


def test_a_key_killed_after_publishing_before_its_record_is_published_again(
        tmp_path, uninterrupted, monkeypatch):
    # the narrowest window: the key's outputs are out, its record not yet: its kept
    # checkpoint holds every release, so resuming learns no row and writes the same files
    data, want = uninterrupted
    out = tmp_path / "out"
    def run():
        stages.write_plots = _no_plots
        run_by_key("ridge", data, out, **ARGS)

    killed_at_first_record(run)
    keys = checkpoint_folder(out) / "keys"
    assert sorted(p.name for p in keys.iterdir()) == ["key=3", "key=3.checkpoint"]
    learned, real = [], stages.stream_slices

    def spy(key, model, X, y, u, tick, state, *rest):
        learned.append((key, len(y) - state["done"].get(key, 0)))
        return real(key, model, X, y, u, tick, state, *rest)

    monkeypatch.setattr(stages, "stream_slices", spy)
    monkeypatch.setattr(stages, "write_plots", _no_plots)
    resume_any(out)
    assert learned[:2] == [("private", 0), ("twin", 0)]  # key 3: nothing learned again
    assert _files(out) == want


def test_a_changed_file_or_argument_is_refused_in_one_line_then_the_cli_resumes(
        killed, uninterrupted, monkeypatch):
    from typer.testing import CliRunner

    from dpol.cli import _app
    from dpol.cli.run import _interrupted

    out, data = killed
    assert "keeps the runs of the keys finished (1) and the progress of the others" in (
        _interrupted(out, checkpoints=True))
    runner, app = CliRunner(), _app()
    refused = runner.invoke(app, ["run", "--resume", str(out), "--epsilon", "2"])
    assert refused.exit_code == 2
    assert refused.output.strip().count("\n") == 0
    assert "--epsilon 2.0 conflicts with the checkpoint" in refused.output
    text = data.read_text()
    data.write_text(text.replace("\n", "\n0,3,0,0\n", 1))  # one more row of key 3
    try:
        with pytest.raises(InvalidInputError, match="the data changed since"):
            resume_any(out)
    finally:
        data.write_text(text)
    assert (checkpoint_folder(out) / "keys" / "key=3.done").is_dir()  # kept, for a retry
    monkeypatch.setattr(stages, "write_plots", _no_plots)
    resumed = runner.invoke(app, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert "onemodelperkey" in "".join(resumed.output.split())
    assert _files(out) == uninterrupted[1]
