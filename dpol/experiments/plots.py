"""Figures for experiment reports (matplotlib, drawn off-screen).

Curves are told apart by line style and marker as well as colour, so overlapping or
identical curves stay visible (one drawn exactly on another shows the other's markers),
and in print. A value axis that would be logarithmic becomes *symmetric* logarithmic
(``symlog``) as soon as one value to draw is zero or negative: a log axis silently drops
such values (the average regret of a learner that beats its comparator early, a trivial
baseline of exactly 0) and cannot place a line at 0 at all.
"""

from __future__ import annotations

import math
from itertools import cycle
from pathlib import Path

import numpy as np

__all__ = ["plot_curves", "plot_versus_epsilon", "value_scale"]

#: (line style, marker) per curve, in order; colours come from matplotlib's cycle
STYLES = (("-", "o"), ("--", "s"), ("-.", "^"), (":", "D"), ("-", "v"), ("--", "P"),
          ("-.", "X"), (":", "*"))
BASELINE_STYLES = (("--", "dimgrey"), (":", "black"), ("-.", "tab:brown"), ("--", "tab:olive"))


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'dpol[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def value_scale(values: list[np.ndarray], tails: list[float]) -> tuple[str, float | None]:
    """The value axis for ``values``: ``("log", None)`` or ``("symlog", linthresh)``.

    Log when every finite value is positive. Otherwise symlog, linear on
    ``[-linthresh, linthresh]`` and logarithmic outside, with ``linthresh`` the power of ten
    at or below the smallest non-zero magnitude among ``tails`` (the values a reader
    compares: the curves' last points and the baselines), but at most six decades under the
    largest magnitude, so a tail of almost 0 does not stretch the axis.

    Examples
    --------
    >>> value_scale([np.array([1.0, 0.1, 0.01])], [0.01])
    ('log', None)
    >>> value_scale([np.array([-0.03, 0.5, 1e-5])], [1.47e-5, 0.0])  # a baseline at 0
    ('symlog', 1e-05)
    >>> value_scale([np.array([0.0, 0.0])], [0.0])
    ('symlog', 1.0)
    """
    finite = np.concatenate([np.ravel(v)[np.isfinite(np.ravel(v))] for v in values]
                            + [np.array([t for t in tails if math.isfinite(t)])])
    if finite.size and np.all(finite > 0):
        return "log", None
    top = float(np.max(np.abs(finite))) if finite.size else 0.0
    small = [abs(t) for t in tails if math.isfinite(t) and t != 0.0]
    if top == 0.0:
        return "symlog", 1.0
    floor = min(small) if small else top
    return "symlog", 10.0 ** math.floor(math.log10(max(floor, top * 1e-6)))


def _set_value_scale(ax, values, tails, ylabel: str) -> str:
    scale, linthresh = value_scale(values, tails)
    if scale == "log":
        ax.set_yscale("log")
        return ylabel
    ax.set_yscale("symlog", linthresh=linthresh)
    ax.axhline(0.0, color="black", lw=0.6)
    return f"{ylabel}\n(symlog: linear within ±{linthresh:.0e})"


def _finish(plt, fig, ax, path: str | Path, *, title: str, xlabel: str, ylabel: str) -> Path:
    """Labels, grid, legend; save the PNG (creating its folder) and close the figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    # a fixed corner: loc="best" searches the data and, on a long run or a loaded machine,
    # takes over a second and warns (matplotlib times the search)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _baselines(ax, baselines: dict[str, float] | None) -> None:
    for (label, value), (ls, color) in zip((baselines or {}).items(), cycle(BASELINE_STYLES),
                                           strict=False):  # cycle is endless by design
        ax.axhline(value, ls=ls, lw=1.3, color=color, label=label)


def plot_curves(curves: dict[str, tuple[np.ndarray, np.ndarray]], path: str | Path, *,
                title: str, ylabel: str, baselines: dict[str, float] | None = None,
                logy: bool = True, logx: bool = True) -> Path:
    """Curves (t, values) on log axes, with horizontal baselines; writes a PNG.

    With ``logy``, the value axis is logarithmic, or symlog when a value or baseline is
    <= 0 (:func:`value_scale`): nothing is dropped. Each curve has its own line style and
    markers (ten per curve, staggered so that coinciding curves show all of theirs).

    Examples
    --------
    >>> import tempfile, os
    >>> t = np.arange(1, 50)
    >>> p = plot_curves({"a": (t, 1 / t), "b": (t, 1 / t - 0.05)},
    ...                 os.path.join(tempfile.mkdtemp(), "c.png"), title="t", ylabel="y",
    ...                 baselines={"predict 0": 0.0})  # negative values and a 0 baseline
    >>> p.stat().st_size > 1000
    True
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for i, ((label, (t, values)), (ls, marker)) in enumerate(
            zip(curves.items(), cycle(STYLES), strict=False)):
        ax.plot(t, values, label=label, lw=1.6, ls=ls, marker=marker, ms=4.5,
                markevery=(0.015 * (i % 6), 0.1), zorder=3 + len(curves) - i)
    _baselines(ax, baselines)
    if logx:
        ax.set_xscale("log")
    if logy:
        ylabel = _set_value_scale(ax, [v for _, v in curves.values()],
                                  [float(np.ravel(v)[-1]) for _, v in curves.values()
                                   if np.size(v)] + list((baselines or {}).values()), ylabel)
    return _finish(plt, fig, ax, path, title=title, xlabel="t", ylabel=ylabel)


def plot_versus_epsilon(series: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                        path: str | Path, *, title: str, ylabel: str, logy: bool = True,
                        baselines: dict[str, float] | None = None) -> Path:
    """Privacy-utility curves: mean +- std against epsilon (log x); writes a PNG.

    ``series`` maps a label to (epsilons, means, stds). With ``logy`` the value axis is
    logarithmic, or symlog when a mean or baseline is <= 0, as in :func:`plot_curves`.

    Examples
    --------
    >>> import tempfile, os
    >>> eps = np.array([0.1, 1.0, 10.0])
    >>> series = {"PQFTL": (eps, np.array([0.5, 0.1, 0.02]), np.array([0.05, 0.01, 0.004]))}
    >>> with tempfile.TemporaryDirectory() as tmp:  # the missing folder "figs" is created
    ...     p = plot_versus_epsilon(series, os.path.join(tmp, "figs", "eps.png"),
    ...                             title="regret vs epsilon", ylabel="regret / T",
    ...                             baselines={"FTL": 0.01})
    ...     print(p.parent.name, p.name, p.stat().st_size > 1000)
    figs eps.png True
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for (label, (eps, mean, std)), (ls, marker) in zip(series.items(), cycle(STYLES),
                                                       strict=False):
        ax.errorbar(eps, mean, yerr=std, marker=marker, ls=ls, capsize=3, label=label, lw=1.6)
    _baselines(ax, baselines)
    ax.set_xscale("log")
    if logy:
        ylabel = _set_value_scale(ax, [m for _, m, _ in series.values()],
                                  [float(v) for _, m, _ in series.values() for v in np.ravel(m)]
                                  + list((baselines or {}).values()), ylabel)
    return _finish(plt, fig, ax, path, title=title, xlabel="epsilon", ylabel=ylabel)
