"""The package itself (dpol/__init__.py): the names it re-exports and its version."""

from __future__ import annotations

import sys
from pathlib import Path

import dpol
from dpol import errors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - dpol depends on tomli there
    import tomli as tomllib


def test_the_top_level_names_are_dpol_errors_own():
    assert "__version__" in dpol.__all__
    for name in set(dpol.__all__) - {"__version__"}:
        assert getattr(dpol, name) is getattr(errors, name), name


def test_the_version_is_the_one_the_package_is_built_with():
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert dpol.__version__ == tomllib.loads(pyproject.read_text())["project"]["version"]
