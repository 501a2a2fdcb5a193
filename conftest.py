"""Test-session settings shared by tests/ and the doctests in dpol/."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _checkpoint_key(tmp_path_factory):
    """Checkpoints are signed with a key of the user's (dpol.experiments.runs.checkpoint):
    the tests use one of their own, never the account's ~/.config/dpol/checkpoint.key
    (subprocesses inherit it through the environment)."""
    before = os.environ.get("DPOL_KEY_FILE")
    os.environ["DPOL_KEY_FILE"] = str(tmp_path_factory.mktemp("key") / "checkpoint.key")
    yield
    if before is None:
        os.environ.pop("DPOL_KEY_FILE", None)
    else:
        os.environ["DPOL_KEY_FILE"] = before
