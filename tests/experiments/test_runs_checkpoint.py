"""`dpol run` outputs are whole or absent, one run per folder; checkpoints sit beside
the outputs, owner-only, in a format that cannot run code, resume to the same releases,
a resumed run never shows a step with two noisy values, and a stream fed in slices
releases what one run releases."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_output import DPOL, _interrupted, _iterates, _neighbours
from test_sweeps_sweep import terminal_sigint

from dpol.adapters.registry import LEARNERS
from dpol.errors import InvalidInputError
from dpol.experiments.runs.checkpoint import CHECKPOINT, PICKLED, load_checkpoint
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import resume_run, run_learner

ARGS = dict(epsilon=1.0, seed=3)


def _data(path: Path, n: int = 6000, seed: int = 0) -> Path:
    # 6,000 rows: slices of 1,024 rows (runs.checkpoint.CHUNK_ROWS), so checkpoint_every=500
    # saves after every slice
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 3
    y = X @ [0.5, -0.3, 0.2, 0.1] + 0.05 * rng.normal(size=n)
    np.save(path, np.column_stack([X, y]))
    return path


def _outputs(folder: Path) -> dict:
    return {"iterates": np.load(folder / "iterates.npy"),
            "losses": (folder / "losses.csv").read_text()}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("whole")
    data = _data(root / "d.npy")
    run_learner("ridge", str(data), root / "out", **ARGS)
    return data, _outputs(root / "out")


class Stop(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback at a chosen row."""


def _stop_at(rows: int, label: str = "ridge"):
    def progress(done, total, which):
        if which == label and done >= rows:
            raise Stop
    return progress


def test_interrupt_without_checkpoints_writes_nothing(tmp_path, uninterrupted):
    data, _ = uninterrupted
    with pytest.raises(Stop):
        run_learner("ridge", str(data), tmp_path / "out", progress=_stop_at(2000), **ARGS)
    assert list(tmp_path.iterdir()) == []  # no output, no staging folder, no checkpoint


@pytest.mark.parametrize("stop, which", [(2000, "ridge"), (1000, "non-private twin")])
def test_resume_after_interrupt_gives_the_same_releases(tmp_path, uninterrupted, stop, which):
    data, whole = uninterrupted
    out = tmp_path / "out"
    with pytest.raises(Stop):
        run_learner("ridge", str(data), out, progress=_stop_at(stop, which),
                    checkpoint_every=500, **ARGS)
    folder = checkpoint_folder(out)
    assert not out.exists()  # nothing published; the checkpoint beside it, no debris
    assert [p.name for p in tmp_path.iterdir()] == [folder.name]
    assert [p.name for p in folder.iterdir()] == [CHECKPOINT]
    saved = load_checkpoint(folder)
    # what is on disk is exactly what the saved state produced: releases = rows learned
    for key, rows in saved["done"].items():
        assert sum(len(p.losses) for p in saved["parts"][key]) == rows
        assert saved["models"][key].t == rows
    result = resume_run(out)
    again = _outputs(out)
    np.testing.assert_array_equal(again["iterates"], whole["iterates"])
    assert again["losses"] == whole["losses"]
    assert not folder.exists() and result.rows[0]["model"] == "ridge"


KILLER = """
import os, signal, sys
from dpol.experiments.runs import pipeline, stages
real, calls = stages.save_checkpoint, []
def save(folder, payload):
    calls.append(1)
    if len(calls) == 3:  # the third chunk's releases are made, its checkpoint not yet
        os.kill(os.getpid(), signal.SIGKILL)
    return real(folder, payload)
stages.save_checkpoint = save
pipeline.run_learner("ridge", sys.argv[1], sys.argv[2], epsilon=1.0, seed=3,
                     checkpoint_every=500)
"""


def test_kill_between_a_release_and_its_checkpoint(tmp_path, uninterrupted):
    data, whole = uninterrupted
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", KILLER, str(data), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    saved = load_checkpoint(checkpoint_folder(out))
    assert saved["done"] == {"private": 2048}  # 2 checkpoints kept; the 3rd slice unseen
    assert not out.exists()
    assert [p.name for p in checkpoint_folder(out).iterdir()] == [CHECKPOINT]
    resume_run(out)  # redraws rows 2049-3072 from the saved generator: the same values
    np.testing.assert_array_equal(_outputs(out)["iterates"], whole["iterates"])


def test_resume_refuses_other_data(tmp_path):
    data = _data(tmp_path / "d.npy")
    out = tmp_path / "out"
    with pytest.raises(Stop):
        run_learner("ridge", str(data), out, progress=_stop_at(1000), checkpoint_every=500,
                    **ARGS)
    _data(data, seed=1)  # the file changed since
    with pytest.raises(InvalidInputError, match="resume must find the rows"):
        resume_run(out)
    with pytest.raises(InvalidInputError, match="resume must name a run's output folder"):
        resume_run(tmp_path)


def test_ctrl_c_in_the_cli_says_what_was_kept(tmp_path):
    data = _data(tmp_path / "big.npy", n=120_000)
    out = tmp_path / "out"
    dpol = [sys.executable, "-c", "from dpol.cli import main; main()"]  # the console script
    proc = subprocess.Popen([*dpol, "run", "ridge", str(data), "--out", str(out),
                             "--checkpoint-every", "2000"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, preexec_fn=terminal_sigint)
    folder = checkpoint_folder(out)
    deadline = time.monotonic() + 60
    while not (folder / CHECKPOINT).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    if proc.returncode == 0:  # pragma: no cover - finished before the signal landed
        pytest.skip("the run finished before Ctrl-C")
    assert proc.returncode == 130, err
    assert "dpol run: interrupted: nothing of this run was published" in err, err
    assert f"the checkpoint in {folder} keeps" in err and "--resume" in err
    assert not out.exists() and os.stat(folder / CHECKPOINT).st_size > 0
    done = subprocess.run([*dpol, "run", "--resume", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert np.load(out / "iterates.npy").shape == (120_001, 5)  # d = 4 and an intercept
    assert not folder.exists()


@pytest.mark.parametrize("name", list(LEARNERS))
def test_run_in_slices_releases_what_one_run_releases(name):
    # dpol run feeds the learner in slices to show progress: the releases, losses and
    # regret must be those of one run, bit for bit
    from dpol.adapters.registry import comparator, make_learner
    from dpol.experiments.runs import checkpoint

    rng = np.random.default_rng(1)
    n = 1500  # slices of 1024 and 476 rows (checkpoint.CHUNK_ROWS)
    X = rng.normal(size=(n, 4)) * 0.3
    target = X @ np.array([0.5, -0.3, 0.2, 0.1])
    y = np.sign(target) if LEARNERS[name].task == "classification" else target
    whole = make_learner(name, 4, horizon=n, epsilon=1.0, seed=5)
    u = comparator(whole, X, y)
    one = whole.run(X, y, comparator=u)
    sliced = make_learner(name, 4, horizon=n, epsilon=1.0, seed=5)
    ticks = []
    state = {"done": {}, "parts": {}, "models": {}}
    joined = checkpoint.stream_slices("private", sliced, X, y, u, ticks.append, state,
                                      None, lambda: None)
    assert ticks == [1024, n]
    for field in ("weights", "losses", "predictions", "final_weights", "model_predictions"):
        np.testing.assert_array_equal(getattr(joined, field), getattr(one, field))
    np.testing.assert_allclose(joined.regret, one.regret, rtol=1e-12, atol=1e-12)


def test_checkpoints_sit_beside_the_outputs_owner_only(tmp_path):
    a, out = _interrupted(tmp_path)
    folder = checkpoint_folder(out)
    assert folder == tmp_path / "out.checkpoint" and not out.exists()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert oct((folder / CHECKPOINT).stat().st_mode & 0o777) == "0o600"
    # a fresh run into the same --out would orphan the checkpoint: refused, by name
    with pytest.raises(InvalidInputError, match="unfinished run's checkpoint beside it"):
        run_learner("ridge", str(a), out)
    resume_run(out)
    assert not folder.exists() and "checkpoint" not in " ".join(os.listdir(out))
    assert "**Checkpoints:**" in (out / "report.md").read_text()


class _Payload:
    """What an attacker leaves in a checkpoint folder: code that runs when unpickled."""

    def __init__(self, flag: Path) -> None:
        self.flag = flag

    def __reduce__(self):
        return (Path.touch, (self.flag,))


def test_a_crafted_checkpoint_runs_no_code(tmp_path):
    out, flag = tmp_path / "out", tmp_path / "pwned"
    folder = checkpoint_folder(out)
    folder.mkdir()
    (folder / PICKLED).write_bytes(pickle.dumps({"version": 1, "x": _Payload(flag)}))
    with pytest.raises(InvalidInputError, match="never loaded: unpickling can run code"):
        resume_run(folder)
    assert not flag.exists()
    # the new format: a class outside dpol is refused before anything is built
    (folder / PICKLED).unlink()
    text = json.dumps({"format": "dpol-state-1",
                       "root": {"$id": 0, "$function": "pathlib:Path.touch"}})
    np.savez(folder / CHECKPOINT, **{"state.json": np.frombuffer(text.encode(), np.uint8)})
    with pytest.raises(InvalidInputError, match=r"resume must hold a checkpoint\.npz signed "
                       r"by this account's dpol"):
        resume_run(out)
    assert not flag.exists() and not out.exists()


def test_a_checkpoint_edited_to_add_no_noise_is_refused_unread(tmp_path):
    # the attack: a consistent edit (every counter's noise scale 0) resumed under the
    # same claimed guarantee; the signature no longer matches, so nothing is read
    import io
    import zipfile

    from dpol._state_file import read_state, write_state

    _, out = _interrupted(tmp_path)
    path = checkpoint_folder(out) / CHECKPOINT
    body = read_state(path)
    for counter in body["models"]["private"].learner._counters:
        counter._source.scale = 0.0
    buf = io.BytesIO()
    write_state(buf, body)
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(buf, "a") as new:
        new.writestr("signature", old.read("signature"))  # the old, valid signature
    path.write_bytes(buf.getvalue())
    with pytest.raises(InvalidInputError, match="signature does not match the key"):
        resume_run(out)
    assert not out.exists()


def test_a_symlinked_checkpoint_folder_is_refused(tmp_path):
    a, _ = _neighbours(tmp_path, n=3000)
    (tmp_path / "shared").mkdir()
    (tmp_path / "out.checkpoint").symlink_to(tmp_path / "shared")
    with pytest.raises(InvalidInputError, match="checkpoint folder must not be a symbolic"):
        run_learner("ridge", str(a), tmp_path / "out", checkpoint_every=100)
    assert not list((tmp_path / "shared").iterdir()) and not (tmp_path / "out").exists()


def test_a_truncated_checkpoint_is_one_clear_line_and_nothing_is_written(tmp_path):
    _, out = _interrupted(tmp_path)
    path = checkpoint_folder(out) / CHECKPOINT
    path.write_bytes(path.read_bytes()[:-100])
    done = subprocess.run([*DPOL, "run", "--resume", str(out)], capture_output=True,
                          text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "resume must hold a checkpoint.npz that dpol wrote, whole" in lines[0]
    assert not out.exists() and path.exists()


def test_a_checkpoint_of_another_version_is_refused(tmp_path, monkeypatch):
    import dpol

    monkeypatch.setattr(dpol, "__version__", "0.0.1")
    _, out = _interrupted(tmp_path)
    monkeypatch.undo()
    with pytest.raises(InvalidInputError, match=r"checkpoint of this dpol version .* it was "
                       r"written by 0\.0\.1"):
        resume_run(out)
    assert not out.exists()


def test_a_resumed_secure_noise_run_never_redraws_a_published_or_saved_step(tmp_path):
    # secure noise reads the OS generator: a resumed run cannot redraw the noise of a
    # step, so every step saved in the checkpoint must come back exactly as saved
    from dpol.experiments.runs.checkpoint import load_checkpoint

    _, out = _interrupted(tmp_path, options={"noise": "secure"}, baseline=False)
    saved = load_checkpoint(checkpoint_folder(out))
    kept = np.vstack([p.weights for p in saved["parts"]["private"]])
    assert len(kept) == saved["done"]["private"] > 0
    resume_run(out)
    np.testing.assert_array_equal(_iterates(out)[:len(kept)], kept)
