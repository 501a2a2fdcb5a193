"""`dpol run`'s noise seed, attacked as an observer would: a default run draws fresh
entropy (nobody can replay it), a seeded run says so and never prints its seed, and the
data of a named synthetic set never hang on the noise seed; a --resume takes no silent
orders (flags that contradict the checkpoint are refused, equal ones accepted)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from test_output import DPOL, _interrupted, _iterates, _neighbours

from dpol.experiments.runs.checkpoint import CHECKPOINT
from dpol.experiments.runs.output import RUN_FILE, checkpoint_folder
from dpol.experiments.runs.pipeline import run_learner


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


def test_named_synthetic_data_never_hang_on_the_noise_seed(tmp_path):
    runs = [run_learner("pqftl", "synthetic-regression", tmp_path / f"o{s}", horizon=300,
                        seed=s, baseline=True) for s in (5, 6)]
    # the non-private twin sees only the data: the same for both seeds (public seed 0)
    assert runs[0].rows[1]["mean_loss"] == runs[1].rows[1]["mean_loss"]


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
