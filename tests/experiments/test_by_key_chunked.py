"""`dpol run --by KEY --chunk-rows N` (dpol/experiments/runs/by_key_chunked.py): each key's
outputs are those of a chunked run of its rows alone with its seed, the file is only ever
read in chunks, bad input is refused in one line before any key runs, and a run killed
mid-way resumes to the files of an uninterrupted one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from experiment_cases import (
    keyed_csv,
    killed_at_first_record,
    killed_in_child,
    killing,
    run_files,
)

from dpol.cli import main
from dpol.datasets import chunks
from dpol.errors import InvalidInputError
from dpol.experiments.runs import (
    by_key,
    by_key_checkpoint,
    by_key_chunked,
    chunk_checkpoint,
    chunked,
    stages,
)
from dpol.experiments.runs.by_key import key_seeds, resume_any, run_by_key
from dpol.experiments.runs.output import checkpoint_folder
from dpol.experiments.runs.pipeline import run_learner

KEYS = (3.0, 5.0, 7.0)
#: 7 rows a chunk: each key's ~30 rows span 5 chunks of its own, the file's 90 rows 13
CHUNK = 7


def _no_plots(*_, **__):
    """In place of the plots (0.3 s each): a function of the losses compared."""


@pytest.fixture(autouse=True)
def no_plots(monkeypatch):
    monkeypatch.setattr(chunked, "plot_curves", _no_plots)
    monkeypatch.setattr(stages, "write_plots", lambda *_, **__: [])


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    """Columns x0, key, x1, y: three keys of about 30 rows, interleaved in the file."""
    return keyed_csv(tmp_path_factory.mktemp("bykeychunk") / "t.csv", KEYS, 90, 11)


_files = run_files


def test_each_key_is_the_chunked_run_of_its_rows_alone(table_file, tmp_path, monkeypatch):
    monkeypatch.setattr(by_key_chunked, "_OPEN", 2)  # 3 keys: their files closed, reopened
    res = run_by_key("ridge", table_file, tmp_path / "out", by="key", seed=3,
                     chunk_rows=CHUNK)
    raw = np.loadtxt(table_file, delimiter=",", skiprows=1)
    seeds = key_seeds(3, len(KEYS))
    whole = run_by_key("ridge", table_file, tmp_path / "whole", by="key", seed=3)
    for i, key in enumerate(KEYS):
        alone = tmp_path / f"alone{i}.csv"  # the key's rows in file order, key column out
        np.savetxt(alone, raw[raw[:, 1] == key][:, [0, 2, 3]], delimiter=",",
                   header="x0,x1,y", comments="", fmt="%.17g")
        run_learner("ridge", alone, tmp_path / f"ref{i}", seed=seeds[i], chunk_rows=CHUNK)
        got, want = _files(tmp_path / "out" / f"key={key:g}"), _files(tmp_path / f"ref{i}")
        label = f"t.csv [key={key:g}]"  # the name a run by key gives a key's rows
        for name in (str(alone), alone.name):  # its data's name and path, as the report has
            want["report.md"] = want["report.md"].replace(name.encode(), label.encode())
        want["run.json"]["data"] = label
        assert got == want  # iterates.npy, losses.csv, report.md and run.json: byte for byte
        # the report's lines that a chunked run can write are those of the run by key's
        lines = got["report.md"].decode().splitlines()
        whole_lines = set((tmp_path / "whole" / f"key={key:g}" / "report.md").read_text()
                          .splitlines())
        assert lines[0] in whole_lines and f"| data | {label} ({label} (label 'y', 2 " \
            "features)) |" in lines
        assert res.rows[i]["rows"] == whole.rows[i]["rows"] == int(np.sum(raw[:, 1] == key))
        assert res.rows[i]["guarantee"] == whole.rows[i]["guarantee"]
    assert "the regret is not computed" in got["report.md"].decode()
    # the note every key shares is said once, not once per key
    said = [n for n in res.notes if "regret is not computed" in n]
    assert len(said) == 1 and said[0].startswith("chunked")
    assert "average_regret" not in res.rows[0] and "mean_loss" in res.rows[0]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "key=3", "key=5", "key=7", "report.md", "summary.csv"]  # no spilled rows left


def test_the_file_is_never_read_whole(table_file, tmp_path, monkeypatch):
    # memory: no reader of the whole table is called, and every read is of one chunk at
    # most (the spilling pass over the file, then each key's run over its own rows)
    def whole(*_):
        raise AssertionError("the table was read whole")

    monkeypatch.setattr(by_key, "read_table", whole)
    monkeypatch.setattr(stages, "read_rows", whole)
    sizes, real = [], chunks.iter_table

    def counted(path, chunk_rows):
        for table, names in real(path, chunk_rows):
            sizes.append((Path(path).suffix, len(table)))
            yield table, names

    monkeypatch.setattr(by_key_chunked, "iter_table", counted)
    monkeypatch.setattr(chunked, "iter_table", counted)
    res = run_by_key("ridge", table_file, tmp_path / "out", by=1, seed=3, chunk_rows=CHUNK,
                     baseline=False)
    file_reads = [n for suffix, n in sizes if suffix == ".csv"]
    key_reads = [n for suffix, n in sizes if suffix == ".npy"]
    assert max(n for _, n in sizes) == CHUNK
    assert len(file_reads) == -(-90 // CHUNK) and sum(file_reads) == 90  # one pass
    assert sum(key_reads) == 90 and len(key_reads) == sum(
        -(-r["rows"] // CHUNK) for r in res.rows)


def test_a_npy_file_and_a_key_column_by_index(tmp_path):
    rng = np.random.default_rng(2)
    table = np.column_stack([rng.normal(size=(40, 2)) / 2, rng.choice([-1.5, 2.0], 40),
                             rng.normal(size=40) / 2])
    np.save(tmp_path / "t.npy", table)
    res = run_by_key("ridge", tmp_path / "t.npy", tmp_path / "out", by="2", seed=1,
                     chunk_rows=9, baseline=False, target_col=3)
    assert [r["key"] for r in res.rows] == ["-1.5", "2"]
    rows = table[table[:, 2] == -1.5][:, [0, 1, 3]]
    np.save(tmp_path / "alone.npy", rows)
    run_learner("ridge", tmp_path / "alone.npy", tmp_path / "ref", seed=key_seeds(1, 2)[0],
                chunk_rows=9, baseline=False)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "x2=-1.5" / "iterates.npy"),
                                  np.load(tmp_path / "ref" / "iterates.npy"))


@pytest.mark.parametrize(("lines", "by", "learner", "match"), [
    ("k,x,y\n1,0.1,0.2\n2,0.3,0.4\n1,0.5,0.6\n", "k", "ridge",
     "by must name a column whose keys each hold 2 rows or more .* 1 of 2 keys of 'k' hold "
     "one row, e.g. 2"),
    ("k,x,y\n1,0.1,0.2\n1,0.3,0.4\n", "tenant", "ridge",
     r"by must be a column name or index of the table \(k, x, y\)"),
    ("k,x,y\n1,0.1,0.2\na,0.3,0.4\n", "k", "ridge", "data must hold numbers only"),
    ("k,x,y\n1,0.1,1\n2,0.3,0\n2,0.3,1\n1,0.5,3\n", "k", "ridge_classifier",
     r"k=1: data must hold labels -1 / \+1 or 0 / 1 .*; got '3 in row 2'"),
    ("k,x,y\n1,0.1,0.2\n1,0.3,0.4\n", "k", "ridge", "target_col must be a column of the "
     "table other than the key column"),
])
def test_bad_input_is_refused_in_one_line_before_any_key_runs(tmp_path, monkeypatch, lines,
                                                              by, learner, match):
    data = tmp_path / "t.csv"
    data.write_text(lines)
    monkeypatch.setattr(by_key_chunked, "_run_key_rows", lambda *_: pytest.fail("ran"))
    kwargs = {"target_col": "k"} if "target_col" in match else {}
    with pytest.raises(InvalidInputError, match=match) as refused:
        run_by_key(learner, data, tmp_path / "out", by=by, chunk_rows=1, seed=0,
                   checkpoint_every=1, **kwargs)
    assert "\n" not in str(refused.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]  # nothing left behind


# ---- checkpoints: killed, resumed ---------------------------------------------------------

ARGS = dict(by="key", seed=3, checkpoint_every=10, chunk_rows=CHUNK)
#: each key's run (~30 rows, chunks of 7) saves after 14 and 28 rows and after its last:
#: the 5th save is the second key's second, killed with its first one kept
KILL_AT = 5


@pytest.fixture(scope="module")
def uninterrupted(table_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("bykeychunkckpt") / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunked, "plot_curves", _no_plots)
        run_by_key("ridge", table_file, out, **ARGS)
    return _files(out)


def test_a_killed_run_resumes_to_the_uninterrupted_files(table_file, uninterrupted,
                                                          tmp_path, monkeypatch):
    out = tmp_path / "out"

    def child():
        chunk_checkpoint.save_checkpoint = killing(chunk_checkpoint.save_checkpoint,
                                                   KILL_AT)
        chunked.plot_curves = _no_plots
        sys.argv = ["dpol", "run", "ridge", str(table_file), "--out", str(out), "--by",
                    "key", "--seed", "3", "--checkpoint-every", "10", "--chunk-rows",
                    str(CHUNK)]
        main()

    killed_in_child(child)
    folder = checkpoint_folder(out)
    assert not out.exists()
    kept = sorted(p.name for p in (folder / "keys").iterdir() if p.name[0] != ".")
    assert kept[:3] == ["key=3", "key=3.done", "key=5.checkpoint"], kept
    assert sorted(p.name for p in (folder / "rows").iterdir()) == ["0.npy", "1.npy", "2.npy"]
    runs, real = [], by_key_checkpoint.run_learner

    def spy(*args, _resumed=None, **kwargs):
        data = kwargs.get("data", args[1] if len(args) > 1 else None)
        runs.append((data.label, None if _resumed is None else _resumed["chunked"]["done"]))
        return real(*args, _resumed=_resumed, **kwargs)

    monkeypatch.setattr(by_key_checkpoint, "run_learner", spy)
    resume_any(out)
    # key 3 is taken as it was, key 5 goes on from its checkpoint, key 7 starts
    assert [label for label, _ in runs] == ["t.csv [key=5]", "t.csv [key=7]"]
    assert runs[0][1] > 0 and runs[1][1] is None
    assert _files(out) == uninterrupted
    assert not folder.exists()
    assert oct(os.stat(out).st_mode & 0o777) != "0o700"  # published as any run's folder


def test_a_key_killed_after_publishing_before_its_record_runs_again(table_file, uninterrupted,
                                                                     tmp_path):
    # its chunked run removed its checkpoint as it published: run again from its start,
    # with the same seed the same files
    out = tmp_path / "out"

    def run():
        chunked.plot_curves = _no_plots
        run_by_key("ridge", table_file, out, **ARGS)

    killed_at_first_record(run)
    assert sorted(p.name for p in (checkpoint_folder(out) / "keys").iterdir()) == ["key=3"]
    resume_any(out)
    assert _files(out) == uninterrupted


def test_a_changed_file_is_refused_on_resume(table_file, tmp_path):
    data = tmp_path / "t.csv"
    data.write_text(table_file.read_text())
    out = tmp_path / "out"

    def child():
        chunk_checkpoint.save_checkpoint = killing(chunk_checkpoint.save_checkpoint, 2)
        run_by_key("ridge", data, out, **ARGS)

    killed_in_child(child)
    data.write_text(data.read_text().replace("\n", "\n0,3,0,0\n", 1))
    with pytest.raises(InvalidInputError, match="the data changed since"):
        resume_any(out)
    assert (checkpoint_folder(out) / "keys" / "key=3.checkpoint").is_dir()  # for a retry
