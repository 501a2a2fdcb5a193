"""The package's layers, read from the source with ``ast``: imports point down, never round.

docs/architecture.md states the layers; every import between dpol modules (at module level
or inside a function: a lazy import still ties the two modules together) must point to the
same layer or a lower one, and no group of modules may import each other in a cycle.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: layer of every module, by its longest listed prefix (docs/architecture.md)
LAYERS = {
    "dpol": 0, "dpol.errors": 0, "dpol._validation": 0, "dpol._seeding": 0, "dpol._lazy": 0,
    "dpol.clipping": 0, "dpol._clip_warning": 0, "dpol.noise": 0,
    "dpol.accounting": 1,
    "dpol.counters": 2,
    "dpol.losses": 3, "dpol.sets": 3,
    "dpol.learners": 4, "dpol.datasets": 4,
    "dpol.evaluation": 5, "dpol.adapters": 5, "dpol.experiments": 5,
    "dpol.cli": 6,
}

#: subpackages that sit below the rest of their package (docs/architecture.md): the
#: counters build on their strategies, so a strategy imports no other module of dpol.counters
BELOW_THEIR_PACKAGE = ("dpol.counters.strategies",)

#: cycles still in the code, each to be removed by the change that owns its modules; an
#: entry that no longer is a cycle fails too, so the list only shrinks
KNOWN_CYCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    mods = {}
    for path in (ROOT / "dpol").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _resolve(name: str, mods: dict[str, Path]) -> str | None:
    """The dpol module an imported name lives in (a submodule if it is one)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _edges(source: str, mod: str, is_package: bool, mods: dict[str, Path]) -> dict[str, int]:
    """{imported dpol module: line of its first import} of one module's source."""
    package = mod if is_package else mod.rpartition(".")[0]
    edges: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name, mods) if name.split(".")[0] == "dpol" else None
            if target is not None and target != mod:
                edges.setdefault(target, node.lineno)
    return edges


@functools.cache  # read once per session: every test here asks for it
def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported dpol module: line}, for every module of dpol."""
    mods = _modules()
    return {mod: _edges(path.read_text(), mod, path.name == "__init__.py", mods)
            for mod, path in mods.items()}


def _layer(mod: str) -> int | None:
    while mod:
        if mod in LAYERS:
            return LAYERS[mod]
        mod = mod.rpartition(".")[0]
    return None


def _cycles(graph: dict[str, dict[str, int]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    assert [mod for mod in _graph() if _layer(mod) is None] == []


def test_imports_point_down_the_layers():
    up = [f"{mod} (L{_layer(mod)}) line {line} imports {target} (L{_layer(target)})"
          for mod, edges in sorted(_graph().items()) for target, line in edges.items()
          if _layer(target) > _layer(mod)]
    assert up == []


def test_a_subpackage_below_its_package_imports_nothing_else_of_it():
    up = [f"{mod} line {line} imports {target}" for sub in BELOW_THEIR_PACKAGE
          for mod, edges in sorted(_graph().items()) if _within(mod, sub)
          for target, line in edges.items()
          if _within(target, sub.rpartition(".")[0]) and not _within(target, sub)]
    assert up == []


def _within(mod: str, package: str) -> bool:
    return mod == package or mod.startswith(package + ".")


def test_no_import_cycles_between_modules():
    cycles = _cycles(_graph())
    assert sorted(map(sorted, cycles - KNOWN_CYCLES)) == []
    assert sorted(map(sorted, KNOWN_CYCLES - cycles)) == [], "no longer a cycle: drop it"


def test_the_checks_see_lazy_and_relative_imports_and_cycles():
    mods = _modules()
    # as real.py read tables before: inside a function, one name of a module
    lazy = "def f():\n    from dpol.datasets.files import read_table\n"
    assert _edges(lazy, "dpol.datasets.real", False, mods) == {"dpol.datasets.files": 2}
    relative = "from . import files\nfrom .synthetic import Stream\nimport numpy\n"
    assert _edges(relative, "dpol.datasets", True, mods) == {
        "dpol.datasets.files": 1, "dpol.datasets.synthetic": 2}
    # the files.py <-> real.py cycle as it was, beside a module outside it
    graph = {"dpol.datasets.files": {"dpol.datasets.real": 34},
             "dpol.datasets.real": {"dpol.datasets.files": 67, "dpol.errors": 3},
             "dpol.errors": {}}
    assert _cycles(graph) == {frozenset({"dpol.datasets.files", "dpol.datasets.real"})}
    assert _layer("dpol.counters.blt") == 2 and _layer("dpol.cli.text") == 6
    # a strategy's import of the counters' private helpers, as tree.py's of _bits was
    assert _within("dpol.counters._bits", "dpol.counters")
    assert not _within("dpol.counters._bits", "dpol.counters.strategies")
    assert not _within("dpol.countersx", "dpol.counters")
