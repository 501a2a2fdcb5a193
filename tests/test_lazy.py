"""dpol._lazy: slow packages are imported on the first attribute read, not with dpol.

The import checks run in a fresh interpreter (this process has long imported scipy);
dp-accounting's own check is tests/noise/test_dp_accounting.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dpol._lazy import on_first_use


def test_a_module_is_imported_at_the_first_attribute_read_only(tmp_path, monkeypatch):
    # a module of our own, so that nothing else can have imported it before
    name = "dpol_lazy_probe"
    (tmp_path / f"{name}.py").write_text("LOADS = []\nLOADS.append(1)\nVALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)  # and removed again afterwards
    lazy = on_first_use(name)
    assert name not in sys.modules and repr(lazy) == f"<{name}, imported on first use>"
    assert lazy.VALUE == 7 and name in sys.modules
    # a second reader takes the imported module: its code ran once
    assert on_first_use(name).LOADS is sys.modules[name].LOADS == [1]
    with pytest.raises(AttributeError, match="MISSING"):
        _ = lazy.MISSING
    with pytest.raises(ModuleNotFoundError):
        _ = on_first_use("dpol_lazy_no_such_module").anything


def test_scipy_signal_is_imported_on_first_use_too():
    # half a second of import (it loads scipy.stats) that only some strategies need
    out = subprocess.run([sys.executable, "-c", "import dpol.learners, sys\n"
                          "print('scipy.signal' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_the_command_lines_help_loads_neither_scipy_stats_nor_signal():
    # dpol --help builds every command's options: what they import runs at every start
    code = ("import sys\nsys.argv = ['dpol', '--help']\nfrom dpol.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('scipy.stats', 'scipy.signal', 'dp_accounting') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
