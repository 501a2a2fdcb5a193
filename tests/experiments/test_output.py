"""What `dpol run` publishes, attacked as an observer would: noise nobody can replay,
checkpoints apart from the outputs that cannot run code, one run per output folder, and
a --resume that takes no silent orders."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs.checkpoint import CHECKPOINT, PICKLED
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


def test_default_run_cannot_be_replayed_with_the_old_public_seed(tmp_path):
    # The attack: re-run both neighbours with the seed the old default printed (0) and
    # see which reproduces the published iterates. It told them apart every time; now
    # neither matches, and two runs of the same file differ.
    a, b = _neighbours(tmp_path)
    done = subprocess.run([*DPOL, "run", "ridge", str(a), "--out",
                           str(tmp_path / "published"), "--no-baseline"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    published = _iterates(tmp_path / "published")
    for name, data in (("true", a), ("neighbour", b)):
        run_learner("ridge", str(data), tmp_path / name, seed=0, baseline=False)
        assert not np.array_equal(_iterates(tmp_path / name), published)
    run_learner("ridge", str(a), tmp_path / "again", baseline=False)
    assert not np.array_equal(_iterates(tmp_path / "again"), published)
    summary = json.loads((tmp_path / "published" / RUN_FILE).read_text())
    assert summary["seeded"] is False and "seed" not in summary["command"]
    assert "fresh operating-system entropy" in (tmp_path / "published" / "report.md"
                                                ).read_text()


def test_a_seeded_run_says_so_and_never_prints_its_seed(tmp_path):
    a, _ = _neighbours(tmp_path)
    result = run_learner("ridge", str(a), tmp_path / "out", seed=918273, baseline=False,
                         command="dpol run ridge a.csv --seed SEED")
    # what the seed allows, which is why it must stay secret: exact replay
    run_learner("ridge", str(a), tmp_path / "replay", seed=918273, baseline=False)
    np.testing.assert_array_equal(_iterates(tmp_path / "replay"),
                                  _iterates(tmp_path / "out"))
    text = "".join(p.read_text() for p in (tmp_path / "out").iterdir()
                   if p.suffix in (".md", ".json", ".csv"))
    assert "918273" not in text
    assert "private only while the seed stays secret" in result.rows[0]["guarantee"]
    assert any("the noise is seeded (--seed)" in n for n in result.notes)
    assert json.loads((tmp_path / "out" / RUN_FILE).read_text())["seeded"] is True


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


@pytest.mark.parametrize("flags, named", [
    (["--epsilon", "2"], "--epsilon 2.0"), (["--seed", "5"], "--seed conflicts"),
    (["--counter", "tree"], "--counter binary_tree"), (["--no-baseline"], "--no-baseline"),
    (["--out", "elsewhere"], "--out elsewhere"), (["ridge-classifier"], "LEARNER ridge_classifier"),
])
def test_resume_refuses_flags_that_contradict_the_checkpoint(tmp_path, flags, named):
    _, out = _interrupted(tmp_path)
    saved = (checkpoint_folder(out) / CHECKPOINT).read_bytes()
    done = subprocess.run([*DPOL, "run", *flags, "--resume", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert named in lines[0] and "conflicts with the checkpoint" in lines[0], lines[0]
    assert "--seed 5" not in lines[0]  # a seed is never echoed
    assert (checkpoint_folder(out) / CHECKPOINT).read_bytes() == saved and not out.exists()


def test_resume_accepts_flags_equal_to_the_checkpoint(tmp_path):
    _, out = _interrupted(tmp_path)
    done = subprocess.run([*DPOL, "run", "ridge", "a.csv", "--epsilon", "1", "--out",
                           str(out), "--resume", "out"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)  # the same paths, spelt otherwise
    assert done.returncode == 0, done.stderr
    assert _iterates(out).shape == (3001, 4)


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


def test_named_synthetic_data_never_hang_on_the_noise_seed(tmp_path):
    runs = [run_learner("pqftl", "synthetic-regression", tmp_path / f"o{s}", horizon=300,
                        seed=s, baseline=True) for s in (5, 6)]
    # the non-private twin sees only the data: the same for both seeds (public seed 0)
    assert runs[0].rows[1]["mean_loss"] == runs[1].rows[1]["mean_loss"]
