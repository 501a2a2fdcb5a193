"""What a run by key and its chunked form share (layer L5): the keys' names, columns and
seeds, the rule on their rows, and the summary and report of a run by key
(:mod:`~dpol.experiments.runs.by_key`, :mod:`~dpol.experiments.runs.by_key_chunked`).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dpol._seeding import spawn_seeds
from dpol._validation import fail
from dpol.datasets.files import _target_index
from dpol.errors import InvalidInputError
from dpol.experiments.report import markdown_table, write_csv

__all__ = ["SCORES", "check_counts", "grouped_notes", "key_column", "key_name", "key_seeds",
           "publish_keys",
           "summary_row", "target_without_key", "with_key", "write_report"]

#: the scores of a key's private model that the summary keeps (those its run gives)
SCORES = ("accuracy", "heldout_accuracy", "heldout_r2", "heldout_mse", "average_regret",
          "mean_loss")


def check_counts(keys: np.ndarray, counts: np.ndarray, column: str, by: object) -> None:
    """Refuse a key of one row (``counts``: each of ``keys``' rows in the column named
    ``column``): a stream of one row is an id column, or a key to merge."""
    if np.any(counts < 2):
        single = keys[counts < 2]
        raise fail("by", "name a column whose keys each hold 2 rows or more (one stream per "
                   f"key): {len(single)} of {len(keys)} keys of {column!r} hold one "
                   f"row, e.g. {key_name(single[0])}", by)


def key_name(value: float) -> str:
    """A key as written: the shortest decimal that reads back as it (1, 0.1, 1.0000001),
    so two keys never share a name or a folder."""
    return np.format_float_positional(value, trim="-")


def key_column(by: int | str, names: list[str]) -> int:
    """The index of the key column ``by`` (a name or an index, negative from the end) among
    ``names``, or one clear error naming ``by``.

    >>> key_column("tenant", ["x", "tenant", "y"]), key_column(-1, ["x", "y"])
    (1, 1)
    """
    if isinstance(by, str) and by in names:
        return names.index(by)
    if isinstance(by, (int, np.integer, str)) and str(by).lstrip("-").isdigit():
        index = int(by)
        if -len(names) <= index < len(names):
            return index % len(names)
    raise fail("by", f"be a column name or index of the table ({', '.join(names)})", by)


def key_seeds(seed: int | None, n: int) -> list[int | None]:
    """The int seed of each of ``n`` keys (sorted) of a run seeded with ``seed``: the first
    32-bit word of the child ``SeedSequence(seed).spawn(n)[i]``, so one key's run is
    replayed by ``dpol run --seed`` on its rows alone; None: OS entropy for every key.

    >>> key_seeds(None, 2), key_seeds(3, 2) == key_seeds(3, 2), len(set(key_seeds(3, 50)))
    ([None, None], True, 50)
    """
    if seed is None:
        return [None] * n
    return [int(child.generate_state(1)[0]) for child in spawn_seeds(seed, n)]


def with_key(folder: str, call):
    """``call()``, its refusal naming the key it is about."""
    try:
        return call()
    except InvalidInputError as exc:
        raise InvalidInputError(f"{folder}: {exc}") from None


def target_without_key(target: int | str, names: list[str], key: int) -> int:
    """``target_col`` of the file, as an index of the table without its key column."""
    index = _target_index(target, names)  # the file's rule: a name or an index
    if index == key:
        raise fail("target_col", "be a column of the table other than the key column",
                   target)
    return index - (index > key)


def summary_row(folder: str, key: float, n: int, rows: list[dict], notes: list) -> dict:
    """One key's row of ``summary.csv``: its name, rows and guarantee, the private model's
    scores and the trivial model's beside them (from the key's result ``rows``)."""
    private = rows[0]
    trivial = next((r for r in rows if "trivial" in r["model"]), {})
    out = {"key": key_name(key), "rows": n, "guarantee": private["guarantee"]}
    for score in SCORES:
        value = private.get(score)
        if isinstance(value, float) and not math.isnan(value):
            out[score] = value
            base = trivial.get(score)
            if isinstance(base, float) and not math.isnan(base):
                out[f"trivial_{score}"] = base
    return {**out, "notes": len(notes), "folder": folder}


def grouped_notes(notes: list[list[str]], folders: list[str], shown: int = 5) -> list[str]:
    """Each key's notes, for the console: a note every key has once, the others with their
    key, the first ``shown`` keys' only and a count of the rest (thousands of keys)."""
    common = [n for n in notes[0] if all(n in other for other in notes[1:])]
    own = [(f, n) for f, keyed in zip(folders, notes, strict=True) for n in keyed
           if n not in common]
    keyed = sorted({f for f, _ in own}, key=folders.index)
    out = common + [f"{f}: {n}" for f, n in own if f in keyed[:shown]]
    if len(keyed) > shown:
        out.append(f"{len(keyed) - shown} more keys have notes of their own (the 'notes' "
                   "column of summary.csv; each key's report.md)")
    return out


def _epsilon_delta(guarantee: str) -> tuple[float, float]:
    """(epsilon, delta) of a guarantee as its report writes it: "(1, 1e-05)-DP, ..."."""
    epsilon, delta = guarantee[1:guarantee.index(")-DP")].split(", ")
    return float(epsilon), float(delta)


def write_report(path: Path, learner: str, data: str, column: str, summary: list[dict],
                  engine: str) -> None:
    """The run's ``report.md`` at ``path``: the keys' summary table and the whole's
    privacy (each key's own guarantee; the output is as private as the least private)."""
    keys = list(dict.fromkeys(k for r in summary for k in r))
    table = [{k: r.get(k, "") for k in keys} for r in summary]
    worst = max((r["guarantee"] for r in summary), key=_epsilon_delta)
    path.write_text("\n".join([
        f"# {learner} on {data}, one model per {column}", "",
        f"{len(summary)} keys, {sum(r['rows'] for r in summary)} rows, run on {engine}. "
        f"Each key's folder holds its own run: report, iterates, losses and plots.", "",
        "## Privacy", "",
        "Each key's model has the guarantee of its own report (below). The keys split the "
        "rows into disjoint streams and the split is public (a row's key, each key's number "
        "of rows): a row changes one key's stream only, so all the releases together are "
        f"as private as the least private key, {worst} (parallel composition). A key that "
        "is itself private is not covered: a row moving between keys changes two streams.",
        "", "## Keys", "", markdown_table(table), ""]))


def publish_keys(stage: Path, learner: str, data: str, column: str, folders: list[str],
                 keys: np.ndarray, counts: list[int], done: dict, engine: str
                 ) -> tuple[list[dict], list[str]]:
    """Every key's run done (``done[i]``: its result rows and notes): the summary rows,
    ``summary.csv`` and ``report.md`` written in ``stage``; the rows and the console's
    notes (:func:`grouped_notes`)."""
    summary = [summary_row(folders[i], keys[i], counts[i], *done[i]) for i in range(len(keys))]
    write_csv(summary, stage / "summary.csv")
    write_report(stage / "report.md", learner, data, column, summary, engine)
    return summary, grouped_notes([done[i][1] for i in range(len(keys))], folders)
