"""Fixtures shared by the learners' tests."""

from __future__ import annotations

import pytest

from dpol.learners import _psd_solve as ps
from dpol.learners import private_quadratic_ftl as pq


@pytest.fixture
def helpers(monkeypatch):
    """PQFTL's helper process from 64 rows or solves (not 4096); the helpers made."""
    made = []
    original = ps._Helper.__init__

    def init(self, *args):
        original(self, *args)
        made.append(self)

    monkeypatch.setattr(pq, "_HELPER_ROWS", 64)
    monkeypatch.setattr(ps._Helper, "__init__", init)
    return made
