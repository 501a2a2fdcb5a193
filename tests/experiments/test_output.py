"""Where `dpol run` publishes, attacked as an observer would: one run per output folder,
whole or absent (staged, renamed into place, the old run put back when a replacement
fails), no symbolic link followed, no debris of a killed run; a run whose checkpoint
survived its publication resumes to the same outputs. The helpers here (neighbouring
files, an interrupted run) serve test_runs_checkpoint.py and test_pipeline.py too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs.output import RUN_FILE, checkpoint_folder
from dpol.experiments.runs.pipeline import resume_run, run_learner

#: the `dpol` command as its console script runs it (``dpol.cli:main``), whatever script
#: the environment has installed
DPOL = [sys.executable, "-c", "from dpol.cli import main; main()"]


def _neighbours(tmp_path: Path, n: int = 400) -> tuple[Path, Path]:
    """Two CSV files that differ in one row (replace-one neighbours)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3)) / 3
    table = np.column_stack([X, X @ [0.5, -0.3, 0.2]])
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    np.savetxt(a, table, delimiter=",")
    table[n // 2] = [0.3, -0.3, 0.3, -0.5]
    np.savetxt(b, table, delimiter=",")
    return a, b


def _iterates(out: Path) -> np.ndarray:
    return np.load(out / "iterates.npy")


class Stop(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback."""


def _stop(done, total, label):
    if label != "ridge" or done >= 256:
        raise Stop


def _interrupted(tmp_path: Path, **kw) -> tuple[Path, Path]:
    """(data, out) of a ridge run on 3,000 rows stopped after its first checkpoint."""
    a, _ = _neighbours(tmp_path, n=3000)
    out = tmp_path / "out"
    with pytest.raises(Stop):
        run_learner("ridge", str(a), out, checkpoint_every=100, progress=_stop, **kw)
    return a, out


def test_an_output_folder_holds_one_run_whole(tmp_path):
    a, b = _neighbours(tmp_path, n=3000)
    out = tmp_path / "out"
    run_learner("ridge", str(a), out, seed=1)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(InvalidInputError, match="out must be a new or empty folder"):
        run_learner("ridge", str(b), out, seed=2)
    # an interrupted replacement leaves the earlier run whole, and no staging folder
    with pytest.raises(Stop):
        run_learner("ridge", str(b), out, seed=2, replace=True, progress=_stop)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv", "out"]
    run_learner("ridge", str(b), out, seed=2, replace=True)
    summary = json.loads((out / RUN_FILE).read_text())
    assert summary["data"] == str(b) and (out / "iterates.npy").read_bytes() != before[
        "iterates.npy"]


def test_a_killed_run_leaves_no_debris_for_the_next(tmp_path):
    a, _ = _neighbours(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".out.staging-{dead}-abc123"
    stale.mkdir()
    (stale / "iterates.npy").write_bytes(b"half")
    run_learner("ridge", str(a), tmp_path / "out", baseline=False)
    assert not stale.exists()


def test_a_published_run_whose_checkpoint_survived_resumes_to_the_same_outputs(
        tmp_path, monkeypatch):
    # a crash after the outputs were published, before the checkpoint was deleted: the
    # checkpoint holds every release, so resuming redraws nothing and publishes the same
    from dpol.experiments.runs import stages

    a, _ = _neighbours(tmp_path, n=3000)
    out = tmp_path / "out"

    def crash(out):
        raise Stop

    monkeypatch.setattr(stages, "remove_checkpoint", crash)
    with pytest.raises(Stop):
        run_learner("ridge", str(a), out, checkpoint_every=1000)
    monkeypatch.undo()
    first = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix != ".png"}
    resume_run(out)  # its own outputs: replaced by the same ones, not refused
    again = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix != ".png"}
    assert again == first and not checkpoint_folder(out).exists()


def test_a_symlinked_out_is_refused_before_the_run(tmp_path):
    a, _ = _neighbours(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "o").symlink_to(tmp_path / "real")
    with pytest.raises(InvalidInputError, match="out must not be a symbolic link"):
        run_learner("ridge", str(a), tmp_path / "o", progress=_stop)  # before any row
    assert not list((tmp_path / "real").iterdir())


def test_a_replacement_that_fails_half_way_puts_the_old_run_back(tmp_path, monkeypatch):
    from dpol.experiments.runs import output

    a, b = _neighbours(tmp_path)
    out = tmp_path / "out"
    run_learner("ridge", str(a), out, baseline=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real, calls = os.rename, []

    def rename(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the new run's rename into place
            raise Stop
        return real(src, dst)

    monkeypatch.setattr(output.os, "rename", rename)
    with pytest.raises(Stop):
        run_learner("ridge", str(b), out, baseline=False, replace=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # and a run killed between the two renames: the next one puts the old run back
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    aside = tmp_path / f".out.replaced-{dead}-abc"
    aside.mkdir()
    out.rename(aside / "out")
    with pytest.raises(InvalidInputError, match="out must be a new or empty folder"):
        run_learner("ridge", str(b), out, baseline=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and not aside.exists()


def test_resume_works_from_another_folder_and_a_finished_run_says_so(tmp_path,
                                                                     monkeypatch):
    _neighbours(tmp_path, n=3000)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Stop):
        run_learner("ridge", "a.csv", "out", checkpoint_every=100, progress=_stop)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    resume_run(tmp_path / "out")  # the data path was kept whole
    assert _iterates(tmp_path / "out").shape == (3001, 4)
    with pytest.raises(InvalidInputError, match="name an unfinished run: this one is "
                       "published whole"):
        resume_run(tmp_path / "out")
