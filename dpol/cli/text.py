"""Text of the ``dpol`` command: option parsing, table columns, warning origins (layer L6).

Apart from the commands' modules, which declare them with typer and print with rich:
nothing here needs either.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

from dpol._validation import fail

__all__ = ["HEADERS", "as_flag", "fit_columns", "fmt", "header", "origin", "parse_options"]


def parse_options(pairs: list[str] | None) -> dict:
    """``KEY=VALUE`` strings as constructor keywords; values read as JSON, else as text.

    Examples
    --------
    >>> parse_options(["alpha=0.5", "counter_options={\\"window\\": 8}", "solver=npg"])
    {'alpha': 0.5, 'counter_options': {'window': 8}, 'solver': 'npg'}
    """
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise fail("option", "read KEY=VALUE with KEY a keyword name", pair)
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


#: column headings of the ``dpol account`` and ``dpol counters`` tables, by field
HEADERS = {"noise_multiplier": "z", "noise_scale": "node scale", "max_rms_error": "RMS error",
           "real_epsilon": "real epsilon", "average_regret": "avg regret",
           "final_regret": "regret", "mean_loss": "mean loss", "mean_avg_regret": "avg regret",
           "std_avg_regret": "std", "accuracy": "accuracy", "heldout_accuracy": "test acc",
           "heldout_mse": "test MSE", "heldout_r2": "test R^2"}


def fmt(value: object) -> str:
    """A table cell: 4 significant digits for a float, "n/a" for NaN."""
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def header(key: str) -> str:
    """A column's heading for a result key (its words, underscores as spaces)."""
    return HEADERS.get(key, key.replace("_", " "))


def fit_columns(rows: list[dict], keys: list[str], width: int) -> list[str]:
    """The longest prefix of ``keys`` whose table fits ``width`` terminal columns.

    A column needs its widest cell or header (neither wraps), plus 3 for its border and
    padding; the first column is always kept.

    Examples
    --------
    >>> rows = [{"model": "pqftl", "average_regret": 0.25, "mean_loss": 0.1}]
    >>> fit_columns(rows, ["model", "average_regret", "mean_loss"], 80)
    ['model', 'average_regret', 'mean_loss']
    >>> fit_columns(rows, ["model", "average_regret", "mean_loss"], 25)
    ['model', 'average_regret']
    """
    kept, used = [], 1
    for key in keys:
        need = max([len(fmt(r[key])) for r in rows] + [len(header(key))]) + 3
        if kept and used + need > width:
            break
        kept.append(key)
        used += need
    return kept


def origin(warning: warnings.WarningMessage) -> str:
    """`` (from matplotlib/transforms.py:355)`` for a warning another library raised."""
    if warning.category.__module__.startswith("dpol"):
        return ""
    parts = Path(warning.filename).parts
    start = max((i + 1 for i, p in enumerate(parts) if p == "site-packages"), default=0)
    where = "/".join(parts[start:]) if start else warning.filename
    return f" (from {where}:{warning.lineno})"


def as_flag(exc: Exception, options: dict[str, tuple[str, object]] | None) -> str:
    """The error's text on one line, its argument named by the flag that set it.

    ``options`` maps library argument names to (flag, value given). The argument is
    renamed only when the refused value is the one the user gave (a value derived from
    it, e.g. a share of epsilon, keeps the library's name).

    Examples
    --------
    >>> from dpol.errors import fail
    >>> as_flag(fail("x_bound", "be > 0.0", 0.0), {"x_bound": ("--bound", "0")})
    '--bound must be > 0.0; got 0.0'
    >>> as_flag(fail("epsilon", "be > 0.0", -0.9), {"epsilon": ("--epsilon", -1.0)})
    'epsilon must be > 0.0; got -0.9'
    """
    text = " ".join(str(exc).split())
    name = getattr(exc, "argument", None)
    flag, given = (options or {}).get(name, (None, None))
    if flag is None or not _same(given, getattr(exc, "value", None)):
        return text
    return flag + text[len(name):] if text.startswith(f"{name} ") else text


def _same(given: object, value: object) -> bool:
    """Whether the refused value is the one given (options typed as text read as numbers)."""
    if isinstance(given, str) and not isinstance(value, str):
        try:
            given = float(given)
        except ValueError:
            return False
    if isinstance(given, float) and isinstance(value, float) and given != given:
        return value != value  # nan given, nan refused
    try:
        return given is not None and bool(given == value)
    except (TypeError, ValueError):  # arrays and other values without one truth value
        return False
