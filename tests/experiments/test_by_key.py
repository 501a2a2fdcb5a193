"""``dpol run --by KEY`` (dpol/experiments/runs/by_key.py): one model per key, each the run
of its own rows, on local processes and on a real Dask cluster."""

from __future__ import annotations

import numpy as np
import pytest

from dpol.errors import InvalidInputError
from dpol.experiments.runs.by_key import key_seeds, run_by_key, split_by_key
from dpol.experiments.runs.pipeline import run_learner

KEYS = (3.0, 7.0)


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    """Columns x0, key, x1, y: two keys of about 60 rows, interleaved in the file."""
    rng = np.random.default_rng(5)
    n = 120
    X = rng.normal(size=(n, 2)) / 2
    key = rng.choice(KEYS, size=n)
    y = X @ [0.6, -0.4] + 0.05 * key / 11
    path = tmp_path_factory.mktemp("bykey") / "t.csv"
    np.savetxt(path, np.column_stack([X[:, 0], key, X[:, 1], y]), delimiter=",",
               header="x0,key,x1,y", comments="", fmt="%.6g")
    return path


def test_split_keeps_each_keys_rows_in_file_order():
    t = np.array([[5, 1.0], [2, 2.0], [5, 3.0], [2, 4.0], [5, 5.0]])
    name, keys, rows, rest, names = split_by_key(t, ["k", "v"], 0)
    assert name == "k" and keys.tolist() == [2.0, 5.0] and names == ["v"]
    assert [rest[r, 0].tolist() for r in rows] == [[2.0, 4.0], [1.0, 3.0, 5.0]]


def test_each_key_is_the_run_of_its_own_rows(table_file, tmp_path):
    # key i (sorted) runs with the seed key_seeds(seed, n)[i]: the same bits as a run of
    # that key's rows alone with that seed, and the same guarantee
    res = run_by_key("ridge", table_file, tmp_path / "out", by="key", seed=3, baseline=False)
    raw = np.loadtxt(table_file, delimiter=",", skiprows=1)
    children = key_seeds(3, len(KEYS))
    for i, key in enumerate(KEYS):
        alone = tmp_path / f"alone{i}.csv"
        rows = raw[raw[:, 1] == key][:, [0, 2, 3]]
        np.savetxt(alone, rows, delimiter=",", header="x0,x1,y", comments="", fmt="%.17g")
        ref = run_learner("ridge", alone, tmp_path / f"ref{i}", seed=children[i],
                          baseline=False)
        folder = tmp_path / "out" / f"key={key:g}"
        np.testing.assert_array_equal(np.load(folder / "iterates.npy"),
                                      np.load(ref.report.parent / "iterates.npy"))
        assert res.rows[i]["rows"] == len(rows)
        assert res.rows[i]["guarantee"] == ref.rows[0]["guarantee"]
    report = res.report.read_text()
    assert "parallel composition" in report and "split is public" in report


def test_a_dask_cluster_of_two_worker_processes_releases_the_same_bits(table_file, tmp_path):
    # the keys' runs spread over two worker processes of a real cluster, joined by its
    # address as --address does, against this process alone; chunked (one cluster for
    # both), the workers read each key's rows from the file the driver spilled them to
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        for chunk_rows in (None, 16):
            args = {"by": 1, "seed": 4, "baseline": False, "chunk_rows": chunk_rows}
            out = tmp_path / str(chunk_rows)
            here = run_by_key("ridge", table_file, out / "here", **args)
            dask = run_by_key("ridge", table_file, out / "dask", backend="dask",
                              address=cluster.scheduler_address, **args)
            assert "dask" in dask.report.read_text()
            assert [r["rows"] for r in here.rows] == [r["rows"] for r in dask.rows]
            for key in KEYS:
                np.testing.assert_array_equal(
                    np.load(out / "here" / f"key={key:g}" / "iterates.npy"),
                    np.load(out / "dask" / f"key={key:g}" / "iterates.npy"))


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"by": "nope"}, "by must be a column name or index"),
    ({"by": "x0"}, "keys each hold 2 rows or more"),  # a continuous column: an id
    ({"by": "key", "chunk_rows": 10, "test_fraction": 0.2},  # what a chunked run cannot do
     "test_fraction must be left unset with chunk_rows"),
    ({"by": "key", "target_col": "key"}, "other than the key column"),
    ({"by": "key", "epsilon": -1.0}, "epsilon"),
    ({"by": "key", "backend": "spark"}, "backend"),
])
def test_bad_input_is_refused_before_anything_is_written(table_file, tmp_path, kwargs, word):
    with pytest.raises(InvalidInputError, match=word):
        run_by_key("ridge", table_file, tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists() and list(tmp_path.iterdir()) == []


def test_a_key_its_run_refuses_is_named_before_any_key_runs(tmp_path):
    # classification: key 2 holds one class only
    t = np.array([[1, 0.1, 0], [1, 0.2, 1], [2, 0.3, 1], [1, 0.4, 0], [2, 0.5, 1]])
    path = tmp_path / "c.npy"
    np.save(path, t)
    with pytest.raises(InvalidInputError, match=r"^x0=2: target_col must hold exactly two"):
        run_by_key("ridge-classifier", path, tmp_path / "out", by=0)
    assert not (tmp_path / "out").exists()


def test_the_command_line_prints_the_keys_and_where_the_outputs_are(table_file, tmp_path):
    from typer.testing import CliRunner

    from dpol.cli import _app

    result = CliRunner().invoke(_app(), ["run", "ridge", str(table_file), "--by", "key",
                                         "--no-baseline", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    flat = "".join(result.output.split())  # rich wraps the long title and paths
    assert "onemodelperkey" in flat and "summary.csv" in flat
    assert all(f"{k:g}" in result.output for k in KEYS)
    bad = CliRunner().invoke(_app(), ["run", "ridge", str(table_file), "--by", "nope",
                                      "--out", str(tmp_path / "p")])
    assert bad.exit_code != 0 and "--by must be a column name" in bad.output
