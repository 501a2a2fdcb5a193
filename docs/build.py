"""Build the documentation site into build/site: ``python docs/build.py [mkdocs options]``.

Strict (mkdocs.yml): a broken link or reference, a public name without a docstring or a
tutorial block that fails is an error. Without the ``docs`` extra it says what installs it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: module -> the distribution of the docs extra that provides it
NEEDED = {"mkdocs": "mkdocs", "mkdocstrings": "mkdocstrings",
          "mkdocstrings_handlers.python": "mkdocstrings-python", "material": "mkdocs-material",
          "markdown_exec": "markdown-exec", "griffe_sphinx": "griffe-sphinx"}


def missing_packages() -> list[str]:
    """The distributions of the docs extra that this interpreter cannot import."""
    missing = []
    for module, distribution in NEEDED.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # its parent package is missing
            found = False
        if not found:
            missing.append(distribution)
    return missing


def main(argv: list[str]) -> int:
    missing = missing_packages()
    if missing:
        print(f"the documentation needs the docs extra ({', '.join(missing)} not installed): "
              f'{sys.executable} -m pip install -e "{ROOT}[docs]"', file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "mkdocs", "build", "--strict",
               "--config-file", str(ROOT / "mkdocs.yml"), *argv]
    # the theme's banner about its successor is no warning of ours
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
