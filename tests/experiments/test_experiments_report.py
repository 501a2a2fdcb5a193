"""The experiments' reports: the glossary page holds the terms they define, every
reproduction's report defines the terms it uses, and the errata page names tests that
exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpol.experiments.reproductions.reproduce import EXPERIMENTS, reproduce

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_glossary_page_holds_the_terms_of_the_reports():
    from dpol.experiments.report import GLOSSARY

    page = " ".join((DOCS / "glossary.md").read_text().split())
    for term, definition in GLOSSARY.items():
        assert f"**{term}**: {' '.join(definition.split())}" in page, term


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_reproduction_report_defines_the_terms_it_uses(tmp_path, name):
    # a reader of docs/ or of a `dpol reproduce` folder has no other glossary: every
    # report ends with the entries of GLOSSARY its text uses (replace-one at least: each
    # states its neighbouring relation)
    from dpol.experiments.report import GLOSSARY, terms_used

    report = reproduce(name, tmp_path, quick=True, seeds=1, data=None, workers=1).report
    body, _, terms = report.read_text().partition("\n## Terms\n")
    assert "replace-one" in terms_used(body)
    for term in terms_used(body):
        assert f"* **{term}**: {GLOSSARY[term]}" in terms, term


def test_errata_page_names_tests_that_exist():
    import re

    page = (DOCS / "errata.md").read_text()
    refs = set(re.findall(r"`([a-z_]+\.py)::([a-z0-9_]+)`", page))
    assert len(refs) > 50
    tests = Path(__file__).resolve().parents[1]
    for module, name in sorted(refs):
        assert f"def {name}(" in next(tests.rglob(module)).read_text(), (module, name)
    for ident in ("JKT-6", "WDP-1", "NW-1", "KNJ-1", "ENV-1"):
        assert f"### {ident}." in page
