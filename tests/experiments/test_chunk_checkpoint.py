"""`dpol run --chunk-rows N --checkpoint-every M`: a chunked run stopped or killed mid-file
resumes from its last checkpoint to the outputs of an uninterrupted chunked run, bit for
bit, learning no row twice; it refuses another file, chunk size or outputs in one line;
and its checkpoint holds no row, and no noise source a whole-file checkpoint lacks."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from experiment_cases import killed_in_child, killing

from dpol.errors import InvalidInputError
from dpol.experiments.runs import chunk_checkpoint, chunked, stages
from dpol.experiments.runs.checkpoint import CHECKPOINT, load_checkpoint
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import resume_run, run_learner
from dpol.experiments.runs.report import CURVE_POINTS

# 1,200 rows in chunks of 200, a checkpoint every 300 rows: saved after the chunks that
# end at rows 400, 800 and 1200 (the first chunk 300 rows or more past the last)
N, CHUNK, EVERY = 1200, 200, 300
ARGS = dict(seed=4, chunk_rows=CHUNK)
OUTPUTS = ("iterates.npy", "losses.csv", "loss.png", "report.md")


def _data(path: Path, n: int = N, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 3
    np.save(path, np.column_stack([X, X @ [0.5, -0.3, 0.2] + 0.05 * rng.normal(size=n)]))
    return path


def _curves(curves, path, **_):
    """In place of the loss plot (0.3 s a run): the curves' numbers, exactly."""
    Path(path).write_text(repr({k: (m.tolist(), c.tolist()) for k, (m, c) in curves.items()}))


@pytest.fixture(scope="module", autouse=True)
def no_drawing():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunked, "plot_curves", _curves)
        mp.setattr(stages, "write_plots", lambda *a, **k: [])
        yield


def _outputs(out: Path) -> dict:
    return {name: (out / name).read_bytes() for name in OUTPUTS}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The data; uninterrupted chunked runs with and without checkpoints (outputs and
    result rows); the whole-file run's iterates."""
    root = tmp_path_factory.mktemp("uninterrupted")
    data = str(_data(root / "d.npy"))
    result = run_learner("ridge", data, root / "out", checkpoint_every=EVERY, **ARGS)
    plain = run_learner("ridge", data, root / "plain", **ARGS)
    run_learner("ridge", data, root / "whole", seed=4)
    return SimpleNamespace(data=data, outputs=_outputs(root / "out"), rows=result.rows,
                           plain=_outputs(root / "plain"), plain_rows=plain.rows,
                           whole_file=np.load(root / "whole/iterates.npy"))


def test_checkpoints_change_no_output_but_the_report_saying_so(uninterrupted):
    u = uninterrupted
    assert u.rows == u.plain_rows
    with_, without = dict(u.outputs), dict(u.plain)  # the fixture's, left whole
    assert b"* **Checkpoints:** saved every 300 rows" in with_.pop("report.md")
    assert b"Checkpoints" not in without.pop("report.md")
    assert with_ == without


class Stop(KeyboardInterrupt):
    """A Ctrl-C raised from the progress callback at a chosen row."""


def _stopped(out: Path, data: str, rows: int = 900, which: str = "ridge", **kwargs) -> dict:
    """Run into ``out`` until ``which`` has learned ``rows`` rows; its checkpoint."""
    def progress(done, total, label):
        if label == which and done >= rows:
            raise Stop
    with pytest.raises(Stop):
        run_learner("ridge", data, out, progress=progress,
                    **{**ARGS, "checkpoint_every": EVERY, **kwargs})
    return load_checkpoint(checkpoint_folder(out))


@pytest.mark.parametrize("rows, which", [(900, "ridge"), (1000, "non-private twin")])
def test_a_stopped_chunked_run_resumes_to_the_uninterrupted_outputs(
        tmp_path, monkeypatch, uninterrupted, rows, which):
    out = tmp_path / "out"
    saved = _stopped(out, uninterrupted.data, rows, which)
    folder = checkpoint_folder(out)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == [folder.name]
    assert sorted(p.name for p in folder.iterdir()) == [CHECKPOINT, "iterates.npy",
                                                       "losses.csv"]
    assert saved["done"] == {"private": 800, "twin": 800}
    for name, mark in saved["chunked"]["outputs"].items():  # Ctrl-C cut them back
        assert (folder / name).stat().st_size == mark["bytes"]
    learned, real = [], chunked._learn_chunk

    def spy(request, state, writers, X, y, done, T, progress):
        learned.append((done, len(y)))
        return real(request, state, writers, X, y, done, T, progress)

    monkeypatch.setattr(chunked, "_learn_chunk", spy)
    result = resume_run(out)
    assert learned == [(start, CHUNK) for start in range(800, N, CHUNK)]  # none twice
    # the rows counted once: the mean loss divides the sum of T losses by T
    assert _outputs(out) == uninterrupted.outputs and result.rows == uninterrupted.rows
    np.testing.assert_array_equal(np.load(out / "iterates.npy"), uninterrupted.whole_file)
    assert not folder.exists()


KILL_AT = 2  # the second checkpoint: rows 401-800 are released and written, not saved


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked child")
def test_a_chunked_run_killed_between_a_release_and_its_checkpoint(tmp_path, uninterrupted):
    out = tmp_path / "out"
    def child():  # killed as its second checkpoint is about to be written
        chunk_checkpoint.save_checkpoint = killing(chunk_checkpoint.save_checkpoint, KILL_AT)
        run_learner("ridge", uninterrupted.data, out, checkpoint_every=EVERY, **ARGS)

    killed_in_child(child)
    folder = checkpoint_folder(out)
    saved = load_checkpoint(folder)
    assert saved["done"]["private"] == 400 and not out.exists()
    mark = saved["chunked"]["outputs"]["iterates.npy"]["bytes"]
    assert (folder / "iterates.npy").stat().st_size == mark + 400 * 4 * 8  # 400 rows more
    resume_run(out)  # cuts rows 401-800 and draws them again from the saved generator
    assert _outputs(out) == uninterrupted.outputs


def test_secure_noise_keeps_every_saved_release(tmp_path):
    # secure noise reads the OS generator: a resumed run cannot draw a step again, so
    # every release the checkpoint holds must come back as it was saved (100 rows: a
    # secure draw takes 1 ms a row)
    out = tmp_path / "out"
    saved = _stopped(out, str(_data(tmp_path / "d.npy", n=100)), rows=60, chunk_rows=20,
                     checkpoint_every=40, options={"noise": "secure"}, baseline=False)
    kept = (checkpoint_folder(out) / "iterates.npy").read_bytes()
    assert len(kept) == saved["chunked"]["outputs"]["iterates.npy"]["bytes"] > 40 * 32
    resume_run(out)
    assert (out / "iterates.npy").read_bytes()[:len(kept)] == kept


def test_a_run_stopped_before_its_first_checkpoint_leaves_nothing(tmp_path, uninterrupted):
    def progress(done, total, label):
        if done >= 2 * CHUNK:  # rows 1-400 learned; the checkpoint after them not written
            raise Stop
    with pytest.raises(Stop):
        run_learner("ridge", uninterrupted.data, tmp_path / "out", checkpoint_every=EVERY,
                    progress=progress, **ARGS)
    assert list(tmp_path.iterdir()) == []


def test_resume_refuses_changed_rows_and_outputs_and_keeps_the_checkpoint(tmp_path):
    data = _data(tmp_path / "d.npy")
    out = tmp_path / "out"
    saved = _stopped(out, str(data))
    folder, marks = checkpoint_folder(out), saved["chunked"]["outputs"]
    for n, seed, why in ((N, 1, r"\(the data changed since\)"),  # a row before the checkpoint
                         (N + 10, 0, r"\(the data changed since: 1200 rows then, 1210 now\)")):
        _data(data, n=n, seed=seed)
        with pytest.raises(InvalidInputError, match=r"^resume must find the rows the "
                           r"checkpointed run read " + why):
            resume_run(out)
    _data(data)
    iterates = folder / "iterates.npy"
    body = bytearray(iterates.read_bytes())
    body[-1] ^= 1  # one bit of the last release saved
    iterates.write_bytes(bytes(body))
    with pytest.raises(InvalidInputError, match=r"^resume must find the iterates.npy the "
                       r"checkpointed run wrote as its checkpoint left it \(it was cut or "
                       "changed since\\)"):
        resume_run(out)
    assert not out.exists() and load_checkpoint(folder)["done"] == saved["done"]
    assert {p.name: p.stat().st_size for p in folder.iterdir() if p.name in marks} == {
        k: m["bytes"] for k, m in marks.items()}  # nothing cut, nothing appended


@pytest.fixture(scope="module")
def stopped(tmp_path_factory, uninterrupted):
    """A run stopped after its checkpoint at row 800, which tests only read."""
    out = tmp_path_factory.mktemp("stopped") / "out"
    return out, _stopped(out, uninterrupted.data)


@pytest.mark.parametrize("name, value", [("chunk_rows", 500), ("options", {"alpha": 0.1}),
                                         ("checkpoint_every", 100), ("epsilon", 2.0)])
def test_resume_refuses_other_arguments_naming_the_first(stopped, name, value):
    out, saved = stopped
    args = {**saved["args"], "out_dir": out, name: value}
    with pytest.raises(InvalidInputError, match=rf"^{name} must be .*, as in the checkpoint "
                       rf"resumed \(a resumed run goes on with its own arguments\); got"):
        run_learner(**args, _resumed=saved)


def test_the_cli_says_what_was_kept_refuses_a_conflict_and_resumes(tmp_path, uninterrupted):
    typer_testing = pytest.importorskip("typer.testing")
    from dpol.cli import _app
    from dpol.cli.run import _interrupted

    out = tmp_path / "out"
    _stopped(out, uninterrupted.data)
    assert "keeps 800 rows of the private learner, 800 rows of the twin learner" in (
        _interrupted(out, checkpoints=True))
    assert "--checkpoint-every N keeps the progress" in _interrupted(tmp_path / "other")
    runner, app = typer_testing.CliRunner(), _app()
    refused = runner.invoke(app, ["run", "--resume", str(out), "--chunk-rows", "500"])
    assert refused.exit_code == 2
    assert "--chunk-rows 500 conflicts with the checkpoint" in refused.output
    assert "(it holds --chunk-rows 200)" in refused.output
    resumed = runner.invoke(app, ["run", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert _outputs(out) == uninterrupted.outputs and not checkpoint_folder(out).exists()


def _contents(state: object) -> tuple[dict, dict, list]:
    """Arrays and noise sources (generators, seed sequences) of a checkpoint, by path;
    every float it holds."""
    arrays, sources, floats, seen = {}, {}, [], set()

    def walk(o, path):
        if isinstance(o, float):
            floats.append(o)
        if id(o) in seen or isinstance(o, (str, bytes, int, float, type(None))):
            return
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            arrays[path] = o
        elif isinstance(o, (np.random.Generator, np.random.SeedSequence)):
            sources[path] = type(o).__name__
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(v, f"{path}/{k}")
        elif isinstance(o, (list, tuple, set)):
            for i, v in enumerate(o):
                walk(v, f"{path}/{i}")
        elif hasattr(o, "__dict__"):
            for k, v in vars(o).items():
                walk(v, f"{path}.{k}")
    walk(state, "")
    return arrays, sources, floats


def test_the_checkpoint_holds_no_row_and_no_noise_source_a_whole_file_one_lacks(
        tmp_path, uninterrupted, stopped):
    data, part = uninterrupted.data, stopped[1]
    whole = _stopped(tmp_path / "whole", data, rows=1024, which="non-private twin",
                     chunk_rows=None)  # both learners saved, after slices of 1,024 rows
    arrays, sources, floats = _contents(part)
    whole_arrays, whole_sources, _ = _contents(whole)
    assert sources and sources == whole_sources  # the learners' own, and nothing more
    assert all(p.startswith("/models/") for p in sources)
    # the arrays longer than the loss curves' points: the counter's coefficients, a
    # function of the horizon alone, which a whole-file checkpoint holds too
    long = {p: a for p, a in arrays.items() if a.size > CURVE_POINTS}
    assert long and all(p.startswith("/models/private") for p in long)
    for p, a in long.items():
        np.testing.assert_array_equal(a, whole_arrays[p])
    table = np.load(data)
    held = np.concatenate([np.ravel(a).astype(float) for a in arrays.values()
                           if a.dtype.kind == "f"] + [np.array(floats)])
    assert not np.isin(table, held).any()  # no cell of the file, raw or clipped
    clipped = table[:, :3] / np.maximum(1.0, np.linalg.norm(table[:, :3], axis=1))[:, None]
    assert not np.isin(clipped, held).any()
