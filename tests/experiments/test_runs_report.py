"""The report of `dpol run`: it cites only documents that ship and names, for every
learner, errata that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_run_report_cites_only_documents_that_ship(tmp_path):
    import re

    from dpol.experiments.runs.pipeline import run_learner

    with pytest.warns(Warning):  # POL's paper calibration warns (docs/errata.md, JKT-6)
        result = run_learner("pol", "synthetic-classification", tmp_path, horizon=300,
                             calibration="paper")
    text = result.report.read_text()
    assert "docs/errata.md" in text and (DOCS / "errata.md").exists()
    assert not re.search(r"\bspec\b|review item|DESIGN", text, re.I), text
    for term in ("replace-one", "paper calibration", "R (the bounds)"):
        assert f"**{term}**" in text
    assert "decided here:** JKT-6 in docs/errata.md" in text


def test_every_learner_of_dpol_run_names_errata_that_exist():
    from dpol.adapters.registry import LEARNERS
    from dpol.experiments.runs.report import ERRATA_IDS

    page = (DOCS / "errata.md").read_text()
    # DP-FTRL (Kairouz et al. 2021) is none of the papers of docs/errata.md
    assert set(ERRATA_IDS) == set(LEARNERS) - {"ftrl"}
    for ids in ERRATA_IDS.values():
        for part in ids.split(", "):
            for ident in part.split(" to "):
                assert f"### {ident}." in page, ident
