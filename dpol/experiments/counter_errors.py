"""The error of every counter: a table at one horizon and curves against T (layer L5).

Every counter of :data:`dpol.counters.COUNTER_NAMES` (the window counter with W = 64, and
the padded binary tree beside the plain one) is calibrated to the same (epsilon, delta)
under replace-one neighbours with ``bound=1``; its error is the analytic RMS noise of
its releases, and one private run on a bounded synthetic stream measures it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from dpol.counters import COUNTER_NAMES, Counter, make_counter
from dpol.experiments.plots import _finish, _pyplot

__all__ = ["COUNTER_VARIANTS", "build_counter", "counter_error_curves", "counter_table"]

WINDOW = 64


def _variants() -> dict[str, tuple[str, dict]]:
    out: dict[str, tuple[str, dict]] = {}
    for name in COUNTER_NAMES:
        if name == "window_tree":
            out[f"window_tree-{WINDOW}"] = ("window_tree", {"window": WINDOW})
        else:
            out[name] = (name, {})
        if name == "binary_tree":
            out["binary_tree-padded"] = ("binary_tree", {"padded": True})
    return out


#: label -> (registry name, constructor options)
COUNTER_VARIANTS = _variants()


def build_counter(label: str, horizon: int, **kwargs) -> Counter:
    """The counter of :data:`COUNTER_VARIANTS` ``label`` (the window capped at the horizon).

    Examples
    --------
    >>> c = build_counter("window_tree-64", 16, epsilon=1.0, delta=1e-5)
    >>> c.window, c.privacy.window  # W capped at T = 16 covers every release: full DP
    (16, None)
    """
    name, options = COUNTER_VARIANTS[label]
    options = dict(options)
    if "window" in options:
        options["window"] = min(options["window"], horizon)
    return make_counter(name, horizon, kwargs.pop("dim", 1), **options, **kwargs)


def _loss(counter: Counter, horizon: int) -> float:
    """``loss()`` over the first ``horizon`` steps: a counter of an endless stream has no
    horizon of its own (max_t variance(t) x the column norm, as for the others)."""
    if counter.horizon is not None:
        return counter.loss()
    steps = np.arange(1, horizon + 1, dtype=np.int64)
    return float(np.max(counter.strategy.variance(steps))) * counter.strategy.column_norm_sq()


def counter_table(horizon: int, epsilon: float, delta: float, seed: int = 0, *,
                  participation: object = "single") -> list[dict]:
    """Per counter: loss(), the analytic and the measured RMS error of one private run.

    ``participation`` (k, b): every counter protects a participant entering k steps b
    apart (its loss and noise grow with its sensitivity to the pattern). A counter that
    cannot run at this horizon or participation gets a row with its reason in
    ``"skipped"`` (and no figures), never a failure of the whole table.

    Examples
    --------
    >>> rows = counter_table(64, 1.0, 1e-5)
    >>> [(r["counter"], r["loss"]) for r in rows[:2]]
    [('binary_tree', 42.0), ('binary_tree-padded', 42.0)]
    >>> [(r["counter"], round(r.get("loss", 0.0), 1)) for r in counter_table(
    ...     64, 1.0, 1e-5, participation=(4, 16)) if r["counter"] in ("binary_tree",
    ...     "toeplitz", "window_tree-64")]  # 4 epochs over 16 records: elements only
    [('binary_tree', 228.0), ('window_tree-64', 0.0), ('toeplitz', 37.5)]
    """
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1.0, 1.0, size=(horizon, 1))  # a bounded synthetic stream
    exact = np.cumsum(values, axis=0)
    rows = []
    for label in COUNTER_VARIANTS:
        try:
            counter = build_counter(label, horizon, epsilon=epsilon, delta=delta, seed=seed,
                                    participation=participation)
        except ValueError as err:  # beyond a counter's reach (dense T, window + epochs)
            rows.append({"counter": label, "skipped": str(err)})
            continue
        released = counter.run(values)
        rows.append({
            "counter": label,
            "class": type(counter).__name__,
            "loss": _loss(counter, horizon),
            "analytic_rms": float(np.sqrt(counter.variance(np.arange(1, horizon + 1)).mean())),
            "measured_rms": float(np.sqrt(np.mean((released - exact) ** 2))),
            "privacy": str(counter.privacy),
        })
    return rows


def counter_error_curves(path: str | Path, *, horizons=tuple(2**k for k in range(4, 17, 2)),
                         epsilon: float = 1.0, delta: float = 1e-5) -> tuple[Path, list[dict]]:
    """Plot the worst-case RMS error sqrt(max_t variance(t)) of every counter against T.

    Analytic (no sampling): the figure each counter's calibration implies at every
    horizon it can run at (the dense counter stops at its largest T), on log axes.
    Returns the PNG and the rows (counter, horizon, max_rms).

    Examples
    --------
    >>> import tempfile, os
    >>> png, rows = counter_error_curves(os.path.join(tempfile.mkdtemp(), "e.png"),
    ...                                  horizons=(16, 64))
    >>> png.stat().st_size > 1000, rows[0]["counter"], round(rows[0]["max_rms"], 3)
    (True, 'binary_tree', 33.368)
    """
    rows, curves = [], {}
    for label in COUNTER_VARIANTS:
        reached, errors = [], []
        for horizon in horizons:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # tight calibration warns about nothing
                try:
                    counter = build_counter(label, int(horizon), epsilon=epsilon,
                                            delta=delta)
                except ValueError:  # beyond the counter's reach (the dense one's T)
                    continue
            reached.append(int(horizon))
            errors.append(float(np.sqrt(np.max(counter.variance(np.arange(
                1, int(horizon) + 1, dtype=np.int64))))))
            rows.append({"counter": label, "horizon": int(horizon), "max_rms": errors[-1]})
        curves[label] = (np.asarray(reached), np.asarray(errors))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "v", "D", "x", "+"]
    for i, (label, (t, err)) in enumerate(curves.items()):  # overlapping curves stay visible
        ax.plot(t, err, ls=styles[i % len(styles)], marker=markers[i % len(markers)],
                ms=4, lw=1.6, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    png = _finish(plt, fig, ax, path, xlabel="horizon T",
                  ylabel="worst-case RMS error of a release",
                  title=f"Counter error vs T, ({epsilon:g}, {delta:g})-DP, replace-one, "
                        "|x| <= 1")
    return png, rows
