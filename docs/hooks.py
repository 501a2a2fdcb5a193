"""MkDocs hooks of dpol's site (mkdocs.yml ``hooks``).

* The API reference is generated from the package: one page per public module of the layer
  table in ``docs/architecture.md``, in layer order, documenting every name of its
  ``__all__`` and of its public submodules' ``__all__`` (each object once, where the
  shortest public path exports it). A public name without a docstring is a warning, which
  the strict build turns into a failure.
* The tutorials' code blocks (markdown-exec) run in an empty folder per page, with the
  ``dpol`` command of this interpreter on PATH and a checkpoint key of the build's own, so
  a build writes nothing into the work tree or the builder's home; each page states how
  long its code took, and ``run_times.json`` in the site lists the times.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.dpol")  # under "mkdocs": --strict counts its warnings

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
API_NAV_TITLE = "API reference"
TIMES_FILE = "run_times.json"


def architecture_modules(text: str | None = None) -> list[tuple[str, str]]:
    """(layer, module) of each public module the architecture's layer table names, in order.

    >>> architecture_modules("| L2 | `dpol.counters`, `dpol._bits` | ... |")
    [('L2', 'dpol.counters')]
    """
    text = ARCHITECTURE.read_text() if text is None else text
    found = []
    for layer, modules in re.findall(r"^\| (L\d) \| (.*?) \|", text, re.M):
        for name in re.findall(r"`(dpol\.[\w.]+)`", modules):
            if not any(part.startswith("_") for part in name.split(".")):
                found.append((layer, name))
    return found


@dataclass
class Section:
    """One module's part of a reference page: its new names and those documented before."""

    module: str
    names: list[str] = field(default_factory=list)
    same_as: dict[str, str] = field(default_factory=dict)  # exported name -> documented path


@dataclass
class ApiPage:
    layer: str
    module: str
    sections: list[Section]

    @property
    def uri(self) -> str:
        return f"reference/{self.module.removeprefix('dpol.')}.md"

    def markdown(self) -> str:
        lines = [f"# {self.module}", "", f"Layer {self.layer} of the "
                 "[architecture](../architecture.md). Generated from the package's `__all__`.",
                 ""]
        for section in self.sections:
            lines += [f"## {section.module}", "", f"::: {section.module}", "    options:",
                      "      members: false", "      show_root_heading: false", ""]
            lines += [f"::: {section.module}.{name}\n" for name in section.names]
            if section.same_as:
                lines += ["Also exported here, documented where they are defined:", ""]
                lines += [f"* `{name}`: [`{path}`][{path}]"
                          for name, path in section.same_as.items()]
                lines.append("")
        return "\n".join(lines)


def _public_modules(module):
    """The module, then its public submodules, breadth-first (shortest paths first)."""
    queue = [module]
    while queue:
        current = queue.pop(0)
        yield current
        queue += [sub for name, sub in sorted(current.modules.items())
                  if not name.startswith("_") and not sub.is_alias]


def api_pages() -> tuple[list[ApiPage], list[str], list[str]]:
    """The reference pages, the public names without a docstring, and those in an
    ``__all__`` that static analysis cannot find (so no page can show them)."""
    import griffe

    # griffe_sphinx: a `#:` comment above a constant is its docstring, as in mkdocs.yml
    package = griffe.load("dpol", search_paths=[str(ROOT)], docstring_parser="numpy",
                          extensions=griffe.load_extensions("griffe_sphinx"))
    documented: dict[str, str] = {}  # canonical path -> public path it is documented at
    missing: list[str] = []
    unresolved: list[str] = []
    pages = []
    for layer, name in architecture_modules():
        sections = []
        for module in _public_modules(package[name.removeprefix("dpol.")]):
            section = Section(module.path)
            for export in module.exports or ():
                export = export if isinstance(export, str) else export.name
                try:
                    target = module[export]
                    target = target.final_target if target.is_alias else target
                except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
                    unresolved.append(f"{module.path}.{export}")
                    continue
                if target.is_module:
                    continue  # documented as its own section
                public = f"{module.path}.{export}"
                if target.path in documented:
                    section.same_as[export] = documented[target.path]
                    continue
                documented[target.path] = public
                section.names.append(export)
                if not target.docstring or not target.docstring.value.strip():
                    missing.append(public)
            # a submodule whose names the package re-exports adds nothing to the page
            if module.exports is not None and (section.names or not sections):
                sections.append(section)
        pages.append(ApiPage(layer, name, sections))
    return pages, missing, unresolved


def figure(path: str, alt: str) -> str:
    """An ``<img>`` of a PNG a tutorial's code wrote, inlined so the page carries it.

    The tutorials call it from a hidden block after the code that saved the figure:
    ``from dpol_docs import figure; print(figure("regret.png", "..."))``.
    """
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return (f'<figure class="dpol-figure"><img alt="{alt}" '
            f'src="data:image/png;base64,{data}"></figure>')


def _index_markdown(pages: list[ApiPage]) -> str:
    lines = ["# API reference", "",
             "Every public name of `dpol`, generated from the package. Pages follow the "
             "layers of the [architecture](../architecture.md): a module imports only from "
             "its own layer and those below it.", "",
             "| layer | module | sections |", "|---|---|---|"]
    for page in pages:
        subs = ", ".join(f"`{s.module}`" for s in page.sections[1:]) or "-"
        lines.append(f"| {page.layer} | [`{page.module}`]({Path(page.uri).name}) | {subs} |")
    lines += ["", "The package itself exports the errors of `dpol.errors` and its version:",
              "", "::: dpol.__version__", ""]
    return "\n".join(lines)


_pages: list[ApiPage] = []
_started: dict[str, tuple[float, float]] = {}  # page -> (wall, CPU) clocks at its start
_times: dict[str, dict[str, float]] = {}  # page -> its wall and CPU seconds
_scratch: dict[str, str] = {}


def on_config(config):
    global _pages
    sys.modules.setdefault("dpol_docs", sys.modules[__name__])  # for the tutorials' figure()
    _pages, missing, unresolved = api_pages()
    for public in missing:
        log.warning("%s has no docstring (every public name of dpol needs one)", public)
    for public in unresolved:
        log.warning("%s is in __all__ but not defined by a plain statement that static "
                    "analysis reads (a tuple assignment, say): the reference cannot show it",
                    public)
    for item in config.nav:
        if isinstance(item, dict) and API_NAV_TITLE in item:
            item[API_NAV_TITLE] = ["reference/index.md",
                                   *({page.module: page.uri} for page in _pages)]
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    files.append(File.generated(config, "reference/index.md", content=_index_markdown(_pages)))
    for page in _pages:
        files.append(File.generated(config, page.uri, content=page.markdown()))
    return files


def on_pre_build(config):
    scratch = tempfile.mkdtemp(prefix="dpol-docs-")
    _scratch.update(cwd=os.getcwd(), dir=scratch)
    _times.clear()
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                          os.environ.get("PATH", "")])
    os.environ["DPOL_KEY_FILE"] = str(Path(scratch, ".checkpoint.key"))
    os.environ["MPLBACKEND"] = "Agg"
    os.chdir(scratch)


def _leave_scratch() -> None:
    if _scratch:
        os.chdir(_scratch["cwd"])
        shutil.rmtree(_scratch["dir"], ignore_errors=True)
        _scratch.clear()


def _clocks() -> tuple[float, float]:
    """Wall time, and CPU time of this process and of the commands it waited for."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return time.perf_counter(), sum(r.ru_utime + r.ru_stime for r in (own, children))


def on_page_markdown(markdown, page, config, files):
    # hooks run after the plugins: what follows is the conversion that runs the code blocks,
    # each page's in an empty folder of its own
    if 'exec="on"' in markdown and _scratch:
        folder = Path(_scratch["dir"], page.file.src_uri.removesuffix(".md").replace("/", "-"))
        folder.mkdir()
        os.chdir(folder)
        _started[page.file.src_uri] = _clocks()
    return markdown


def on_page_content(html, page, config, files):
    started = _started.pop(page.file.src_uri, None)
    if started is None:
        return html
    os.chdir(_scratch["dir"])
    wall, cpu = (now - then for now, then in zip(_clocks(), started, strict=True))
    _times[page.file.src_uri] = {"wall": round(wall, 2), "cpu": round(cpu, 2)}
    note = (f'<p class="dpol-run-time"><em>Run time: the code on this page ran in '
            f'{wall:.1f} s when this site was built ({cpu:.1f} s of CPU).</em></p>')
    return re.sub(r"(</h1>)", r"\1" + note, html, count=1)


def on_post_build(config):
    _leave_scratch()
    Path(config.site_dir, TIMES_FILE).write_text(json.dumps(_times, indent=1) + "\n")


def on_build_error(error):
    _leave_scratch()
