"""The sweep configuration: a declarative grid in TOML, checked before any task (L5).

A config names the grid and, optionally, the engine::

    horizon = 2000                 # rows of each data set (default: all of them)
    calibration = "tight"          # or "paper"
    store = "results.sqlite"       # default: the config's name with .sqlite, beside it

    [grid]
    learners = ["pqftl", "ftal"]   # names of dpol.adapters.registry.LEARNERS
    counters = ["binary_tree", "honaker_tree"]  # for the learners that use one (default:
                                   # their own); names of dpol.counters.COUNTER_NAMES
    epsilons = [0.5, 1.0, inf]
    deltas = [1e-5]                # default: dpol's (1e-5, or 1/T where smaller)
    seeds = 3                      # 0, 1, 2 (or a list of seeds)
    datasets = ["synthetic-regression"]  # names of dpol.datasets.DATASETS

    [options.pqftl]                # constructor keywords of one learner, in all its cells
    alpha = 0.1

    [run]                          # engine defaults (the command line overrides them)
    backend = "local"              # local, ray or dask
    workers = 2
    address = "tcp://scheduler:8786"

Each learner runs on the data sets of its task (regression or classification). Every
cell is a plain dict; its key is a hash of its canonical JSON, so a rerun of the same
config finds the cells it already finished. Old learner and counter names (the
registries' aliases) are read as their canonical names, which the cells carry; a store
written under the old names is still found (:func:`canonical_cell`).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from dpol._validation import fail
from dpol.errors import InvalidInputError

__all__ = ["SweepConfig", "canonical_cell", "cell_key", "load_config", "parse_config"]

TOP_KEYS = ("horizon", "calibration", "store", "grid", "options", "run")
GRID_KEYS = ("learners", "counters", "epsilons", "deltas", "seeds", "datasets")
RUN_KEYS = ("backend", "workers", "address")


@dataclass(frozen=True)
class SweepConfig:
    """A checked sweep: its cells (dicts, in grid order), store path and engine defaults."""

    cells: list[dict]
    store: Path
    run: dict = field(default_factory=dict)


def cell_key(cell: dict) -> str:
    """The cell's key: 16 hex digits of the SHA-256 of its canonical JSON.

    Examples
    --------
    >>> cell_key({"seed": 0, "epsilon": 1.0}) == cell_key({"epsilon": 1.0, "seed": 0})
    True
    >>> cell_key({"seed": 0, "epsilon": 1.0}) == cell_key({"seed": 1, "epsilon": 1.0})
    False
    """
    text = json.dumps(cell, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def canonical_cell(cell: dict) -> dict:
    """``cell`` with its learner and counter by their canonical names (a cell of a store
    written before the names changed), or ``cell`` itself when they already are.

    Examples
    --------
    >>> canonical_cell({"learner": "frank-wolfe", "counter": "window", "seed": 0})
    {'learner': 'online_frank_wolfe', 'counter': 'window_tree', 'seed': 0}
    """
    from dpol.adapters.registry import LEARNER_ALIASES
    from dpol.counters import COUNTER_ALIASES

    learner, counter = cell.get("learner"), cell.get("counter")
    names = {"learner": LEARNER_ALIASES.get(learner, learner) if isinstance(learner, str)
             else learner,
             "counter": COUNTER_ALIASES.get(counter, counter) if isinstance(counter, str)
             else counter}
    return cell if names == {"learner": learner, "counter": counter} else {**cell, **names}


def _list(where: str, value: object, item, rule: str) -> list:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise fail(where, "be a non-empty list (an empty grid runs nothing)", value)
    for v in values:
        if not item(v):
            raise fail(where, rule, value)
    return values


def _distinct(where: str, values: list, given: object) -> list:
    """Refuse a repeated value (after conversion: 1 and 1.0 are one epsilon): its cells
    have the same keys, so they would run twice and be stored once."""
    seen: set = set()
    repeated: dict = {}  # in order of first repetition
    for v in values:
        if v in seen:
            repeated[v] = None
        seen.add(v)
    if repeated:
        raise fail(where, "hold distinct values (a repeated value runs its cells twice and "
                   f"stores them once; repeated: {', '.join(map(repr, repeated))})", given)
    return values


def _is_real(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _unknown(where: str, table: object, known: tuple[str, ...]) -> dict:
    if not isinstance(table, dict):
        raise fail(where, "be a table", table)
    for key in table:
        if key not in known:
            raise fail(f"{where}.{key}" if where else key,
                       f"be a known key (one of {', '.join(known)})", table[key])
    return table


def parse_config(raw: dict, base: Path = Path(".")) -> SweepConfig:
    """Check a parsed TOML table and expand its grid into cells.

    Examples
    --------
    >>> cfg = parse_config({"horizon": 50, "grid": {
    ...     "learners": ["pqftl", "igd"], "epsilons": [1.0], "seeds": 2,
    ...     "datasets": ["synthetic-regression", "synthetic-classification"]}})
    >>> [(c["learner"], c["dataset"], c["counter"], c["seed"]) for c in cfg.cells]
    [('pqftl', 'synthetic-regression', None, 0), ('pqftl', 'synthetic-regression', None, 1), \
('igd', 'synthetic-classification', None, 0), ('igd', 'synthetic-classification', None, 1)]
    >>> parse_config({"grid": {"learners": ["pqftl"], "epsilons": [], "seeds": 1,
    ...                        "datasets": ["diabetes"]}})
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: grid.epsilons must be a non-empty list (an empty grid \
runs nothing); got []
    >>> parse_config({"grid": {"learners": ["pqftl"], "epsilons": [1, 1.0], "seeds": 1,
    ...                        "datasets": ["diabetes"]}})
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: grid.epsilons must hold distinct values (a repeated \
value runs its cells twice and stores them once; repeated: 1.0); got [1, 1.0]
    """
    from dpol.adapters.registry import LEARNER_ALIASES, LEARNERS
    from dpol.datasets import DATASETS

    _unknown("", raw, TOP_KEYS)
    learners, datasets, counters, epsilons, deltas, seeds = _grid(
        _unknown("grid", raw.get("grid", {}), GRID_KEYS))
    horizon = raw.get("horizon")
    if horizon is not None and not (_is_int(horizon) and horizon >= 1):
        raise fail("horizon", "be an integer >= 1", horizon)
    calibration = raw.get("calibration", "tight")
    if calibration not in ("tight", "paper"):
        raise fail("calibration", "be tight or paper", calibration)
    options = raw.get("options", {})
    if isinstance(options, dict):  # [options.frank-wolfe]: an old name's table
        options = {LEARNER_ALIASES.get(k, k): v for k, v in options.items()}
    options = _unknown("options", options, tuple(learners))
    for name, opts in options.items():  # their keywords: checked by _preflight
        if not isinstance(opts, dict):
            raise fail(f"options.{name}", "be a table of constructor keywords", opts)
    run = _unknown("run", raw.get("run", {}), RUN_KEYS)
    store = raw.get("store", "")
    if not isinstance(store, str):
        raise fail("store", "be a path", store)

    cells = []
    for learner in learners:
        spec = LEARNERS[learner]
        mine = [d for d in datasets if DATASETS[d][1] == spec.task]
        if not mine:
            raise fail("grid.datasets", f"hold a {spec.task} data set for {learner}", datasets)
        for dataset, counter, eps, delta, seed in itertools.product(
                mine, counters if spec.counter else [None], epsilons, deltas, seeds):
            cells.append({"learner": learner, "dataset": dataset, "counter": counter,
                          "epsilon": eps, "delta": delta, "seed": seed, "horizon": horizon,
                          "calibration": calibration, "options": options.get(learner, {})})
    _preflight(cells)
    return SweepConfig(cells, base / (store or "sweep.sqlite"), run)


def _grid(grid: dict) -> tuple[list, ...]:
    """The grid's learners, data sets, counters, epsilons, deltas and seeds, each checked
    (names known, numbers in range, no value twice)."""
    from dpol.adapters.registry import LEARNER_ALIASES, LEARNERS
    from dpol.counters import COUNTER_ALIASES, COUNTER_NAMES
    from dpol.datasets import DATASETS

    for key in ("learners", "epsilons", "seeds", "datasets"):
        if key not in grid:
            raise fail(f"grid.{key}", "be given", None)
    learners = [LEARNER_ALIASES.get(v, v) for v in _list(
        "grid.learners", grid["learners"], lambda v: LEARNER_ALIASES.get(v, v) in LEARNERS,
        f"name learners of {', '.join(LEARNERS)} (or their old names "
        f"{', '.join(LEARNER_ALIASES)})")]
    datasets = _list("grid.datasets", grid["datasets"], DATASETS.__contains__,
                     f"name data sets of {', '.join(DATASETS)}")
    counters = [COUNTER_ALIASES.get(v, v) for v in _list(
        "grid.counters", grid.get("counters", [None]),
        lambda v: v is None or COUNTER_ALIASES.get(v, v) in COUNTER_NAMES,
        f"name counters of {', '.join(COUNTER_NAMES)} (or their old names "
        f"{', '.join(COUNTER_ALIASES)})")]
    epsilons = [float(v) for v in _list("grid.epsilons", grid["epsilons"],
                                        lambda v: _is_real(v) and v > 0,
                                        "hold numbers > 0 (inf: no noise)")]
    deltas = _list("grid.deltas", grid.get("deltas", [None]),
                   lambda v: v is None or (_is_real(v) and 0 < v < 1), "hold numbers in (0, 1)")
    deltas = [None if v is None else float(v) for v in deltas]
    seeds = grid["seeds"]
    if _is_int(seeds):  # a count: 0 is an empty grid
        seeds = list(range(seeds)) if seeds >= 1 else []
    seeds = _list("grid.seeds", seeds, lambda v: _is_int(v) and v >= 0,
                  "be a count >= 1 or a list of integers >= 0")
    for key, values in (("learners", learners), ("datasets", datasets),
                        ("counters", counters), ("epsilons", epsilons), ("deltas", deltas),
                        ("seeds", seeds)):
        _distinct(f"grid.{key}", values, grid.get(key))
    return learners, datasets, counters, epsilons, deltas, seeds


def _preflight(cells: list[dict]) -> None:
    """Build each (learner, counter, options) once and touch each data set: a wrong option
    or a missing extra is refused here, before any task starts."""
    from dpol.adapters.registry import make_learner
    from dpol.datasets import load_dataset

    for dataset in dict.fromkeys(c["dataset"] for c in cells):
        try:
            load_dataset(dataset, seed=0, horizon=8)
        except ImportError as exc:
            raise InvalidInputError(f"grid.datasets: {dataset} needs a missing package "
                                    f"({exc.name}); see dpol.datasets.DATASETS") from None
    seen = set()
    for c in cells:
        what = (c["learner"], c["counter"], json.dumps(c["options"], sort_keys=True))
        if what in seen:
            continue
        seen.add(what)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_learner(c["learner"], 2, horizon=8, epsilon=1.0, counter=c["counter"],
                         options=c["options"])


def load_config(path: str | Path) -> SweepConfig:
    """Read and check a sweep config (TOML); the store path is relative to the config.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = Path(tmp, "s.toml")
    ...     _ = p.write_text('[grid]\\nlearners = ["pqftl"]\\nepsilon = [1.0]\\n')
    ...     load_config(p)
    Traceback (most recent call last):
    ...
    dpol.errors.InvalidInputError: grid.epsilon must be a known key (one of learners, \
counters, epsilons, deltas, seeds, datasets); got [1.0]
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInputError(f"{path}: not valid TOML ({exc})") from None
    cfg = parse_config(raw, path.parent)
    if not raw.get("store"):
        cfg = SweepConfig(cfg.cells, path.with_suffix(".sqlite"), cfg.run)
    return cfg
