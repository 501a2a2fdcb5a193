"""The README's demo command, run as written in a fresh copy with a fresh virtual environment.

The commands are parsed out of README.md, so this test follows the README. The first
(install with the ``cli`` extra, ``dpol demo``) runs verbatim: a non-editable install from a
wheel, so a file missing from the package or an unlisted dependency fails here. The second
(editable install with the ``test`` extra, then pytest) is what ``.ci/run`` runs on a clean
clone (``test_project`` holds the two to the same text), so CI is its fresh-environment run;
running it again inside the suite cost a minute of the ten.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PIP_TIMEOUT = 1500  # seconds for one README command (installs from the package index)


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [b.strip() for b in blocks]


def _copy_repository(dest: Path) -> None:
    """The files a fresh clone would have (tracked and new, not ignored ones)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode != 0:  # not a git checkout: copy, leaving out build state
        shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
            ".git", ".venv", "dpol-output", "__pycache__", "*.egg-info", ".*_cache"))
        return
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)


def _environment() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTEST_ADDOPTS")}
    python_dir = Path(shutil.which("python3") or "/usr/bin/python3").parent
    paths = [p for p in env.get("PATH", "").split(os.pathsep)
             if not p.startswith(str(ROOT / ".venv"))]
    env["PATH"] = os.pathsep.join([str(python_dir), *paths])
    env["MPLBACKEND"] = "Agg"
    return env


def _run(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f"set -euo pipefail; {command}"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=PIP_TIMEOUT)


def _skip_if_offline(result: subprocess.CompletedProcess) -> None:
    text = result.stdout + result.stderr
    offline = ("Temporary failure in name resolution", "NewConnectionError",
               "Network is unreachable", "No matching distribution found",
               "ProxyError", "Could not fetch URL")
    if result.returncode != 0 and any(s in text for s in offline):
        pytest.skip("pip cannot reach the package index: " + text.strip().splitlines()[-1])


@pytest.mark.slow
def test_readme_demo_command_in_a_fresh_virtual_environment(tmp_path):
    install_demo, _ = readme_commands()
    repo = tmp_path / "dpol"
    _copy_repository(repo)
    env = _environment()

    demo = _run(install_demo, repo, env)
    _skip_if_offline(demo)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    out = repo / "dpol-output" / "demo"
    report = (out / "jkt_synthetic_regression.md").read_text()
    assert "replace-one" in report and "delta = 1e-05" in report
    pngs = sorted(out.glob("*.png"))
    assert len(pngs) == 2
    import matplotlib.image as mpimg

    for png in pngs:
        img = mpimg.imread(png)
        assert img.shape[0] > 200 and len(np.unique(img.reshape(-1, img.shape[-1]), axis=0)) > 20
    assert "report:" in demo.stdout and "PQFTL" in demo.stdout
