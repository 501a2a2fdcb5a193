"""The site builds strict, documents every public name, and has no broken internal link."""

from __future__ import annotations

import html.parser
import logging
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import ROOT, _docs_module

TUTORIALS = sorted(p.name for p in (ROOT / "docs" / "tutorials").glob("*.md")
                   if p.name != "index.md")


def test_the_site_builds_strict(built_site):
    assert built_site.returncode == 0, built_site.output[-5000:]
    assert "WARNING" not in built_site.output, built_site.output[-5000:]


def test_every_public_name_has_its_entry_in_the_reference(built_site):
    pages, missing, unresolved = _docs_module("hooks").api_pages()
    assert missing == [] and unresolved == []  # the build said so too
    names = 0
    for page in pages:
        text = built_site.page(page.uri.replace(".md", ".html"))
        for section in page.sections:
            for name in section.names:
                names += 1
                assert f'id="{section.module}.{name}"' in text, (page.uri, name)
    assert names > 300  # counters, learners, accounting, ... : not a walk that found nothing
    for module in ("dpol.counters", "dpol.learners", "dpol.accounting", "dpol.noise",
                   "dpol.sets", "dpol.losses", "dpol.datasets", "dpol.adapters",
                   "dpol.evaluation"):
        assert any(page.module == module for page in pages), module


def test_each_tutorial_ran_and_states_its_run_time(built_site):
    for name in TUTORIALS:
        text = built_site.page(f"tutorials/{name[:-3]}.html")
        assert "Run time: the code on this page ran in" in text, name
        assert "Traceback" not in text, name
    times = (built_site.path / "run_times.json").read_text()
    assert all(f"tutorials/{name}" in times for name in TUTORIALS)


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and not attrs[key].startswith(("data:", "mailto:")):
                self.refs.append(attrs[key])


def broken_links(site: Path) -> list[str]:
    """Every internal href or src of the site whose file or anchor does not exist."""
    pages = {}
    for page in site.rglob("*.html"):
        parser = _Links()
        parser.feed(page.read_text())
        pages[page] = parser
    broken = []
    for page, parser in pages.items():
        if page.name == "404.html":
            continue  # its links are absolute: a server shows it at any path
        for ref in parser.refs:
            parts = urlsplit(ref)
            if parts.scheme or parts.netloc:
                continue  # outside the site
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {ref}")
            elif parts.fragment and target in pages and unquote(parts.fragment) not in (
                    pages[target].ids):
                broken.append(f"{page.relative_to(site)}: {ref} (no such anchor)")
    return broken


def test_no_internal_link_of_the_site_is_broken(built_site):
    assert built_site.returncode == 0
    assert broken_links(built_site.path) == []


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "index.html").write_text('<a href="a.html#x">a</a><a href="b.html">b</a>')
    (tmp_path / "a.html").write_text('<h1 id="y">A</h1><img src="missing.png">')
    assert sorted(broken_links(tmp_path)) == ["a.html: missing.png", "index.html: a.html#x "
                                              "(no such anchor)", "index.html: b.html"]


def test_a_build_without_the_docs_extra_says_how_to_install_it():
    # mkdocs hidden from this interpreter, as in a venv without the docs extra
    code = ("import runpy, sys; sys.modules['mkdocs'] = None; sys.argv = ['build.py']; "
            f"runpy.run_path({str(ROOT / 'docs' / 'build.py')!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "the documentation needs the docs extra (mkdocs not installed)" in proc.stderr
    assert f'{sys.executable} -m pip install -e "{ROOT}[docs]"' in proc.stderr


def test_forwarded_keywords_are_excused_and_only_they(tmp_path):
    griffe = pytest.importorskip("griffe")
    (tmp_path / "demo.py").write_text('''
def forwards(x, **kwargs):
    """Forward.

    Parameters
    ----------
    x : int
        Own.
    bound : float
        Forwarded to the base.
    """


def stale(x):
    """Stale.

    Parameters
    ----------
    y : int
        Renamed long ago.
    """
''')
    extension = _docs_module("griffe_extensions").DpolDocstrings()
    module = griffe.load("demo", search_paths=[str(tmp_path)], docstring_parser="numpy",
                         extensions=griffe.load_extensions(extension))
    try:
        def kept(function: str) -> list[str]:
            """The parse warnings of one docstring that the filter lets through."""
            records: list[logging.LogRecord] = []
            handler = logging.Handler()
            handler.emit = records.append
            griffe_logger = logging.getLogger("griffe")
            griffe_logger.addHandler(handler)
            try:
                module[function].docstring.parse("numpy")
            finally:
                griffe_logger.removeHandler(handler)
            messages = ["griffe: " + r.getMessage() for r in records]
            return [m for m in messages
                    if extension.filter(logging.makeLogRecord({"msg": m}))]

        assert kept("forwards") == []
        assert [m.split(": ", 2)[-1] for m in kept("stale")] == [
            "Parameter 'y' does not appear in the function signature"]
    finally:
        logging.getLogger("mkdocs.plugins.griffe").removeFilter(extension)
