"""Tutorial code that the site's build does not run, run here.

The sweeps tutorial shows its Ray command without running it at every build (a Ray start
costs about 20 s of CPU); this slow test runs that command as the page shows it, on the
grid the page writes, and checks that Ray gives the cells of the local run bit for bit.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PAGE = ROOT / "docs" / "tutorials" / "sweeps.md"


def _bash_blocks(page: Path) -> list[str]:
    return re.findall(r"```bash[^\n]*\n(.*?)```", page.read_text(), re.S)


def _cells(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as db:
        return db.execute("SELECT learner, epsilon, seed, average_regret FROM cells "
                          "ORDER BY learner, epsilon, seed").fetchall()


@pytest.mark.slow
def test_the_sweeps_tutorial_runs_on_ray(tmp_path):
    pytest.importorskip("ray", reason="the ray extra: pip install -e '.[ray]'")
    blocks = _bash_blocks(PAGE)
    grid = next(b for b in blocks if b.startswith("cat > grid.toml"))
    (ray_command,) = [b.strip() for b in blocks if "--backend ray" in b]
    dpol = Path(sys.executable).parent / "dpol"
    assert shutil.which(str(dpol)), "the cli extra installs the dpol command"
    for script in (grid.split("\ndpol sweep")[0], "dpol sweep grid.toml --workers 1",
                   ray_command):
        script = script.replace("dpol sweep", f"{dpol} sweep")
        proc = subprocess.run(["bash", "-c", f"set -euo pipefail; {script}"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    local, ray = _cells(tmp_path / "grid.sqlite"), _cells(tmp_path / "ray.sqlite")
    assert len(local) == 12 and ray == local
