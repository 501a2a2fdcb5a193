"""The documentation site, built once per test run (``python docs/build.py``, strict).

The build runs every tutorial, so it is shared: the first xdist worker that needs it
builds it under a lock, the others read the same folder. Without the docs extra the
tests that need the site skip, naming the command that installs it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _docs_module(name: str):
    """docs/NAME.py, imported by path once (docs/ is no package)."""
    key = f"dpol_docs_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "docs" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before running it: its dataclasses look themselves up
        spec.loader.exec_module(module)
    return sys.modules[key]


@dataclass(frozen=True)
class BuiltSite:
    path: Path
    returncode: int
    output: str
    seconds: float

    def page(self, uri: str) -> str:
        return (self.path / uri).read_text()


@pytest.fixture(scope="session")
def build_script():
    return _docs_module("build")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, build_script) -> BuiltSite:
    missing = build_script.missing_packages()
    if missing:
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)}): "
                    f'pip install -e ".[docs]"')
    # one folder per test run, shared by its xdist workers (their base temps are siblings)
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    site, record = shared / "docs-site", shared / "docs-site.json"
    with open(shared / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            started = os.times()
            proc = subprocess.run([sys.executable, str(ROOT / "docs" / "build.py"),
                                   "--site-dir", str(site)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=900)
            ended = os.times()
            cpu = sum(ended[i] - started[i] for i in range(4))  # own and children's
            record.write_text(json.dumps({"returncode": proc.returncode, "cpu": cpu,
                                          "output": proc.stdout + proc.stderr}))
    built = json.loads(record.read_text())
    return BuiltSite(site, built["returncode"], built["output"], built["cpu"])
