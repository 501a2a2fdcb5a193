"""Importing dpol does not import dp-accounting: it is loaded where it is first used.

``import dp_accounting`` is slow (about 0.05 s of its own on top of the scipy modules it
loads, and the first importer of scipy.signal pays for those too), and nothing at import
time needs it: every module takes the name from :mod:`dpol.noise._dp_accounting`, which
imports the package on the first attribute read. Each check runs in a fresh interpreter
(this process has long imported it). scipy's lazy imports: tests/test_lazy.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

#: every package, the command line's included (a checkpoint's reader imports the
#: dp-accounting modules its events name when it reads them)
MODULES = ("dpol", "dpol.noise", "dpol.accounting", "dpol.counters", "dpol.losses",
           "dpol.sets", "dpol.learners", "dpol.datasets", "dpol.evaluation",
           "dpol.adapters", "dpol.experiments", "dpol.cli")


def _imports_dp_accounting(code: str) -> bool:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\n"
                          "print('dp_accounting' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("module", MODULES)
def test_importing_dpol_does_not_import_dp_accounting(module):
    assert not _imports_dp_accounting(f"import {module}")


def test_it_is_imported_on_first_use():
    # a calibrated counter composes its events: dp-accounting is loaded then, and works
    assert _imports_dp_accounting(
        "from dpol.counters import BinaryTreeCounter\n"
        "c = BinaryTreeCounter(8, epsilon=1.0, delta=1e-5)\n"
        "assert c.dp_event().noise_multiplier > 0")
