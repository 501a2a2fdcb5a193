"""Names (docs/architecture.md, Names): a module's tests are found from its name.

``dpol/<package>/.../<module>.py`` is tested in ``tests/<package>/test_<name>.py``, or in
files ``tests/<package>/test_<name>_<topic>.py``. ``<name>`` is the module's name without
a leading underscore, with the name of the package that holds it in front when another
module of dpol has the same name (``test_runs_checkpoint.py``, ``test_learners_base.py``):
test files are no package, so pytest needs their names unique. A package whose
``__init__`` holds more than imports is a module named for the package
(``test_sweeps_engines.py``); modules of dpol itself are tested in ``tests/test_<name>.py``.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: modules tested through another file, by design, with the reason
EXEMPT = {
    **dict.fromkeys(("dpol.counters.strategies.honaker_strategy",
                     "dpol.counters.strategies.padded_tree_strategy",
                     "dpol.counters.strategies.toeplitz_strategy",
                     "dpol.counters.strategies.tree_strategy",
                     "dpol.counters.strategies.window_tree_strategy"),
                    "one contract for every strategy (streamed noise == the factorization, "
                    "steps == blocks from any state): tests/counters/test_strategy.py; each "
                    "one's own cases through its counter (test_binary_tree.py, "
                    "test_honaker_tree.py, test_window_tree.py, test_toeplitz.py) and against "
                    "the papers' pseudo-code (test_counters_reference.py)"),
    "dpol.learners._base": "the machinery every full-information learner shares, run "
                           "through each by one contract: tests/learners/test_learners.py",
    "dpol.losses.squared": "one contract for every loss (gradients, batching, constants "
                           "attained): tests/losses/test_losses.py",
    **dict.fromkeys(("dpol.experiments.sweeps.engines.dask_engine",
                     "dpol.experiments.sweeps.engines.local_engine",
                     "dpol.experiments.sweeps.engines.ray_engine"),
                    "one contract for every engine: tests/experiments/test_sweeps_engines.py"),
    "dpol.experiments.runs.by_key_parts": "what a run by key and its chunked form share, "
                                          "run through both: tests/experiments/"
                                          "test_by_key.py, test_by_key_chunked.py",
    **dict.fromkeys(("dpol.experiments.training.engines", "dpol.experiments.training.shard",
                     "dpol.experiments.training.sources"),
                    "the training driver's parts, run together (1 worker == 2 workers == Dask, "
                    "resume == uninterrupted): tests/experiments/test_training_train.py"),
    **dict.fromkeys(("dpol.noise.gaussian", "dpol.noise.laplace", "dpol.noise.l2_gamma"),
                    "one law contract for every sampler: tests/noise/test_noise.py"),
}



def _only_imports(path: Path) -> bool:
    """Whether a module holds nothing but its docstring, imports and ``__all__``."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None)
                                             for t in node.targets] == ["__all__"]:
            continue
        return False
    return True


def test_files(root: Path = ROOT) -> dict[str, Path]:
    """Each module of dpol (a re-exporting ``__init__`` is none) -> where its tests go."""
    modules = {}
    for path in sorted((root / "dpol").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            if _only_imports(path):
                continue
            parts.pop()
        modules[".".join(parts)] = parts, path.name == "__init__.py"
    names = Counter(parts[-1].lstrip("_") for parts, _ in modules.values())
    out = {}
    for module, (parts, package) in modules.items():
        name = parts[-1].lstrip("_")
        if names[name] > 1:
            name = f"{parts[-2].lstrip('_')}_{name}"
        inside = len(parts) > 2 or (package and len(parts) == 2)  # below a dpol package
        folder = root / "tests" / (parts[1] if inside else "")
        out[module] = folder / f"test_{name}.py"
    return out


test_files.__test__ = False  # a helper, not a test


def _found(path: Path) -> bool:
    return path.exists() or any(path.parent.glob(f"{path.stem}_*.py"))


def test_every_module_has_its_test_file_or_an_entry_that_says_why():
    missing = [f"{module}: {path.relative_to(ROOT)}"
               for module, path in test_files().items()
               if not _found(path) and module not in EXEMPT]
    assert missing == []


def test_the_exempt_list_only_names_modules_that_exist():
    files = test_files()
    assert sorted(set(EXEMPT) - set(files)) == [], "no such module"


def test_test_file_names_are_unique():
    # tests/ is no package: pytest imports each test file by its name
    names = Counter(p.name for p in (ROOT / "tests").rglob("test_*.py"))
    assert sorted(n for n, k in names.items() if k > 1) == []


def test_the_rule_on_a_small_tree(tmp_path):
    for rel, text in {"dpol/__init__.py": "from dpol.a import b\n__all__ = ['b']\n",
                      "dpol/a/__init__.py": "X = 1\n", "dpol/a/_base.py": "",
                      "dpol/b/_base.py": "", "dpol/a/sub/blt.py": "", "dpol/_seed.py": ""
                      }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    got = {m: str(p.relative_to(tmp_path)) for m, p in test_files(tmp_path).items()}
    assert got == {"dpol._seed": "tests/test_seed.py", "dpol.a": "tests/a/test_a.py",
                   "dpol.a._base": "tests/a/test_a_base.py",
                   "dpol.b._base": "tests/b/test_b_base.py",
                   "dpol.a.sub.blt": "tests/a/test_blt.py"}
