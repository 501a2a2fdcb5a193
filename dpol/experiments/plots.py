"""Figures for experiment reports (matplotlib, drawn off-screen)."""

from __future__ import annotations

from itertools import cycle
from pathlib import Path

import numpy as np

__all__ = ["plot_curves", "plot_versus_epsilon"]


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'dpol[plot]'") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _finish(plt, fig, ax, path: str | Path, *, title: str, xlabel: str, ylabel: str) -> Path:
    """Labels, grid, legend; save the PNG (creating its folder) and close the figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_curves(curves: dict[str, tuple[np.ndarray, np.ndarray]], path: str | Path, *,
                title: str, ylabel: str, baselines: dict[str, float] | None = None,
                logy: bool = True, logx: bool = True) -> Path:
    """Curves (t, values) on log axes, with horizontal baselines; writes a PNG.

    Examples
    --------
    >>> import tempfile, os
    >>> t = np.arange(1, 50)
    >>> p = plot_curves({"a": (t, 1 / t)}, os.path.join(tempfile.mkdtemp(), "c.png"),
    ...                 title="t", ylabel="y")
    >>> p.stat().st_size > 1000
    True
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for label, (t, values) in curves.items():
        ax.plot(t, values, label=label, lw=1.6)
    for label, value in (baselines or {}).items():
        ax.axhline(value, ls="--", lw=1.2, color="grey")
        ax.annotate(label, xy=(0.01, value), xycoords=("axes fraction", "data"), fontsize=8,
                    va="bottom", color="dimgrey")
    if logy:  # regret against a whole-stream comparator can be <= 0 early: not drawn
        ax.set_yscale("log", nonpositive="mask")
    if logx:
        ax.set_xscale("log")
    return _finish(plt, fig, ax, path, title=title, xlabel="t", ylabel=ylabel)


def plot_versus_epsilon(series: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                        path: str | Path, *, title: str, ylabel: str, logy: bool = True,
                        baselines: dict[str, float] | None = None) -> Path:
    """Privacy-utility curves: mean +- std against epsilon (log x); writes a PNG.

    ``series`` maps a label to (epsilons, means, stds).

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
    for label, (eps, mean, std) in series.items():
        ax.errorbar(eps, mean, yerr=std, marker="o", capsize=3, label=label, lw=1.6)
    styles = [("--", "dimgrey"), (":", "black"), ("-.", "tab:brown"), ("--", "tab:olive")]
    for (label, value), (ls, color) in zip((baselines or {}).items(), cycle(styles),
                                           strict=False):  # cycle is endless by design
        ax.axhline(value, ls=ls, lw=1.3, color=color, label=label)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    return _finish(plt, fig, ax, path, title=title, xlabel="epsilon", ylabel=ylabel)
