"""`dpol` through its console entry point (``main``): a command line click refuses (an
unknown flag, a value of the wrong type) is one line on standard error, exit code 2,
and leaves no output folder, like every other refusal (issue 19)."""

from __future__ import annotations

import contextlib
import io
import sys
from unittest import mock

import numpy as np
import pytest

pytest.importorskip("typer")

from dpol.cli import main


def dpol(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with mock.patch.object(sys, "argv", ["dpol", *map(str, args)]):
            with pytest.raises(SystemExit) as stop:
                main()
    return stop.value.code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("flags, says", [
    (["--bogus", "3"], "No such option: --bogus"),
    (["--random-features", "2.5"], "Invalid value for '--random-features'"),
    (["--bandwidth", "foo"], "Invalid value for '--bandwidth'"),
    (["--test-fraction", "foo"], "Invalid value for '--test-fraction'"),
    (["--epsilon"], "Option '--epsilon' requires an argument"),
])
def test_a_command_line_click_refuses_is_one_line(tmp_path, flags, says):
    data = tmp_path / "d.csv"
    np.savetxt(data, np.random.default_rng(0).normal(size=(30, 3)) / 3, delimiter=",")
    code, out, err = dpol("run", "ridge", data, "--out", tmp_path / "o", *flags)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpol run: error: ") and says in err, err
    assert err.rstrip().endswith("(dpol run --help lists the options)")
    assert not (tmp_path / "o").exists()


def test_an_unknown_command_and_dpol_alone():
    code, _, err = dpol("nonsense")
    assert code == 2 and err == ("dpol: error: No such command 'nonsense'. (dpol --help "
                                 "lists the options)\n")
    code, out, err = dpol()
    assert code == 2 and "Usage: dpol" in out + err and "run" in out + err


def test_a_bandwidth_without_random_features_is_refused(tmp_path):
    data = tmp_path / "d.csv"
    np.savetxt(data, np.random.default_rng(0).normal(size=(30, 3)) / 3, delimiter=",")
    code, _, err = dpol("run", "ridge", data, "--bandwidth", "0.5", "--out", tmp_path / "o")
    assert code == 1 and err == ("dpol run: error: --bandwidth must be given only with "
                                 "random_features (the bandwidth of their kernel); got 0.5\n")
    assert not (tmp_path / "o").exists()


def test_help_keeps_every_option_name_whole_at_80_columns():
    with mock.patch.dict("os.environ", {"COLUMNS": "80"}):
        code, out, _ = dpol("run", "--help")
    assert code == 0
    for name in ("--checkpoint-every", "--random-features", "--test-fraction", "--chunk-rows"):
        assert name in out, name
    assert max(len(line) for line in out.splitlines()) <= 80


def test_refusals_name_the_flags_of_account_and_out(tmp_path, capsys):
    # 'n must be an integer >= 1' named a parameter dpol account does not have, and an
    # --out naming a file gave a bare '[Errno 17] File exists'
    for argv, line in ((["account", "-T", "0"], "dpol account: error: -T must be an integer"),
                       (["run", "ridge", "d.csv", "--out", str(tmp_path / "f")],
                        "dpol run: error: --out must name a folder (or one to create)")):
        (tmp_path / "f").write_text("")
        with pytest.raises(SystemExit):
            with mock.patch.object(sys, "argv", ["dpol", *argv]):
                main()
        assert capsys.readouterr().err.startswith(line)


def test_a_huge_cell_leaks_no_numpy_warning_and_still_gets_a_bound(tmp_path, capsys):
    # its row's norm overflowed in np.linalg.norm ('RuntimeWarning: overflow encountered
    # in multiply') and the suggestion read 'Suggested: --bound nan'
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    X[5, 1] = 1e300
    data = tmp_path / "huge.csv"
    np.savetxt(data, np.c_[X, X[:, 0] > 0], delimiter=",")
    with pytest.raises(SystemExit):
        with mock.patch.object(sys, "argv", ["dpol", "run", "ridge-classifier", str(data),
                                             "--out", str(tmp_path / "o")]):
            main()
    err = capsys.readouterr().err
    assert "RuntimeWarning" not in err and "--bound nan" not in err
    assert "Suggested: --bound 3.5 " in err


def test_without_the_cli_extra_the_help_is_one_line_naming_it(tmp_path):
    # typer missing (the cli extra not installed): one line saying how to install it,
    # where `dpol --help` ended in a traceback ("No module named 'typer'")
    import subprocess

    code = ("import sys; sys.modules['typer'] = None; sys.argv = ['dpol', '--help']; "
            "from dpol.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "dpol: the command line needs the 'cli' extra (typer is missing): pip install "
        "'dpol[cli]'"]


def test_ctrl_c_while_the_commands_load_is_one_line(tmp_path):
    # the commands' imports take about a second: a Ctrl-C there printed a traceback
    import subprocess

    code = ("import sys, dpol.cli as cli\n"
            "def interrupted():\n"
            "    raise KeyboardInterrupt\n"
            "cli._app = interrupted\n"
            "sys.argv = ['dpol', 'run', 'ridge', 'd.csv']\n"
            "cli.main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [
        "dpol: interrupted while starting: nothing was run or written"]
    assert not list(tmp_path.iterdir())


def test_the_console_script_imports_no_command_before_main_runs():
    # the console script imports its module before main() can catch a Ctrl-C: that import
    # must load none of the commands (typer, rich, the experiments), only what `import
    # dpol` loads, so that a Ctrl-C while they load is main()'s one line
    import json
    import re
    import subprocess
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    module = re.search(r'^dpol = "([\w.]+):main"$', pyproject, re.MULTILINE).group(1)
    code = (f"import json, sys, {module}; print(json.dumps(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('dpol', 'typer', 'rich', 'click'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["dpol", "dpol.cli", "dpol.errors"]
