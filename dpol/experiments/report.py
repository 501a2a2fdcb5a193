"""CSV tables, markdown reports of experiments, and the terms they use."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ERRATA", "GLOSSARY", "ExperimentResult", "glossary", "markdown_table",
           "terms_used", "write_csv", "write_markdown"]

#: where the papers' errata that dpol decides are explained (statement, evidence, decision)
ERRATA = "docs/errata.md"

#: the terms reports use; ``docs/glossary.md`` holds the same text (a test keeps them equal)
GLOSSARY: dict[str, str] = {
    "replace-one": (
        "Two streams are neighbours when they differ in one element, replaced by any other "
        "element within the bounds (the papers' definition). The guarantee protects both the "
        "presence and the value of any one row. dpol's default."),
    "add/remove": (
        "Two streams are neighbours when one element is replaced by zero (equivalently, added "
        "or removed). Sensitivities, and so the noise, are half those of replace-one; a "
        "replace-one guarantee at epsilon is also an add/remove one, the converse holds only "
        "at about twice the epsilon."),
    "R (the bounds)": (
        "The declared bounds on one row: ||x|| <= R and |y| <= R (JKT write R for both; "
        "dpol takes them apart as the bound and the y-bound). Every sensitivity, so all the "
        "noise, grows with them. Rows outside are clipped (scaled down to the bound), which "
        "makes the proof hold for any data; the bounds themselves must be public, chosen "
        "without looking at the data."),
    "tight calibration": (
        "The smallest noise for which dp-accounting certifies the requested (epsilon, delta) "
        "at the mechanism's exact sensitivity (Gaussian noise: the analytic Gaussian "
        "mechanism and Gaussian-DP composition). dpol's default."),
    "paper calibration": (
        "The noise formula printed in the paper, verbatim, to reproduce its experiments. dpol "
        "states the guarantee that noise really gives (the real epsilon): below the requested "
        "epsilon where the paper over-noises, above it where its formula falls short. "
        f"{ERRATA} explains each such erratum."),
    "window DP": (
        "A weaker guarantee: an element is protected only in the W releases from its arrival "
        "(W, the window); after that it enters the releases without noise. It is ordinary DP "
        "when the window covers the whole stream."),
    "average regret": (
        "R_t / t, where the regret R_t is the learner's total loss over the first t rows minus "
        "that of the best fixed model in hindsight (for the learner's own loss and constraint "
        "set, computed offline). It can be negative: an online learner may beat a fixed model "
        "on part of the stream."),
    "non-private twin": (
        "The same learner with epsilon = inf (no noise) on the same rows: what privacy costs."),
    "trivial baselines": (
        "Models that learn nothing: predict 0 (a linear model without intercept at w = 0), "
        "the majority class, the mean label. A private model that scores below them is of no "
        "use yet."),
    "online accuracy": (
        "The share of labels whose sign the model predicted before learning each row "
        "(test-then-train, prequential), with the model a user gets (predict_one: by "
        "default the weighted mean of the releases); the regret scores the raw releases, "
        "as the papers do. A prediction of 0 counts as a mistake."),
    "held-out score": (
        "The final released model scored on rows it never saw (a fixed random split): "
        "accuracy, or mean squared error and R^2 (1 - squared error / variance of the "
        "held-out labels; 0 for predicting their mean)."),
}


def glossary(terms: list[str] | None = None) -> str:
    """A markdown list of the ``terms`` of :data:`GLOSSARY` (all by default).

    Examples
    --------
    >>> print(glossary(["non-private twin"])[:59])
    * **non-private twin**: The same learner with epsilon = inf
    """
    return "\n".join(f"* **{t}**: {GLOSSARY[t]}" for t in (terms or list(GLOSSARY)))


#: what in a report's text (lower case) shows that it uses a term of :data:`GLOSSARY`
_MARKS: dict[str, tuple[str, ...]] = {
    "replace-one": ("replace-one", "replace_one"), "add/remove": ("add/remove", "add_remove"),
    "R (the bounds)": ("bound", " r = "), "tight calibration": ("tight",),
    "paper calibration": ("tight", "paper calibration", "paper noise"),
    "window DP": ("window",), "average regret": ("average regret", "avg regret"),
    "non-private twin": ("twin", "non-private"),
    "trivial baselines": ("predict 0", "trivial", "majority class", "mean label"),
    "online accuracy": ("accuracy",), "held-out score": ("held-out", "held out", "heldout")}


def terms_used(text: str) -> list[str]:
    """The terms of :data:`GLOSSARY` that ``text`` uses (in the glossary's order).

    Examples
    --------
    >>> terms_used("(1, 1e-05)-DP, replace_one; tight noise beside predict 0")
    ['replace-one', 'tight calibration', 'paper calibration', 'trivial baselines']
    """
    low = text.lower()
    return [t for t in GLOSSARY if any(mark in low for mark in _MARKS[t])]


def write_markdown(path: str | Path, lines: list[str]) -> Path:
    """Write a report's markdown ``lines``, ending with a **Terms** section that defines
    every term of :data:`GLOSSARY` the report uses (a reader has no other glossary)."""
    used = terms_used("\n".join(lines))
    if used:
        lines = [*lines, "## Terms", "", glossary(used), ""]
    path = Path(path)
    path.write_text("\n".join(lines))
    return path


@dataclass
class ExperimentResult:
    """Where an experiment wrote its outputs, its summary rows and notes for the console.

    Examples
    --------
    >>> r = ExperimentResult("demo", [{"a": 1}], Path("demo.md"), Path("demo.csv"))
    >>> r.csv.name, r.figures, r.notes
    ('demo.csv', [], [])
    """

    name: str
    rows: list[dict]
    report: Path
    csv: Path
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: how a classification run coded the labels ("label 5 -> -1, 7 -> +1"), or ""
    labels: str = ""


def write_csv(rows: list[dict], path: str | Path) -> Path:
    """Write dict rows (same keys) as CSV.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = write_csv([{"a": 1, "b": 2.5}], os.path.join(tmp, "out", "t.csv"))
    ...     print(p.name, p.read_text().splitlines())
    t.csv ['a,b', '1,2.5']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def markdown_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """A markdown table of dict rows; floats in 4 significant digits, NaN as n/a.

    Examples
    --------
    >>> print(markdown_table([{"a": 1.23456, "b": "x"}, {"a": float("nan"), "b": "y"}]))
    | a | b |
    |---|---|
    | 1.235 | x |
    | n/a | y |
    """
    columns = columns or list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)
