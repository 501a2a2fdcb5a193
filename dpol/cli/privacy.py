"""``dpol account``, ``dpol audit`` and ``dpol counters``: what a configuration's privacy
costs, checked empirically, and the counters' errors (layer L6)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer
from rich.table import Table

from dpol.counters import COUNTER_ALIASES, COUNTER_NAMES

__all__ = ["register_account", "register_audit", "register_counters"]


def register_account(app: typer.Typer, ui) -> None:
    """Add ``dpol account`` to ``app`` (``ui``: the console helpers, :class:`~dpol.cli.ui.Ui`)."""

    @app.command()
    def account(
        counter: str = typer.Option(None, help=f"Counter: {', '.join(COUNTER_NAMES)} "
                                    "(default binary_tree; old names: "
                                    f"{', '.join(COUNTER_ALIASES)}), or the counter of "
                                    "--learner."),
        learner: str = typer.Option(None, help="A learner name instead of a counter."),
        noise: str = typer.Option("gaussian", "--noise", "--mechanism",
                                  help="Noise of the counter: gaussian, laplace or gamma."),
        epsilon: float = typer.Option(1.0, help="Privacy parameter epsilon."),
        delta: float = typer.Option(None, help="Privacy parameter delta "
                                    "(default: 1e-5, or 1/T where smaller)."),
        horizon: int = typer.Option(2**16, "--horizon", "-T", help="Stream length T."),
        dim: int = typer.Option(1, help="Dimension of one element."),
        bound: float = typer.Option(1.0, help="Largest l2 norm of one element (||x||)."),
        y_bound: float = typer.Option(1.0, help="Bound on |y| (learners)."),
        neighbouring: str = typer.Option("replace_one", help="replace_one or add_remove."),
        window: int = typer.Option(None, help="Window W of the window counter (default T)."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    ) -> None:
        """The guarantee and the noise a configuration implies, tight and paper."""
        from dpol.accounting import resolve_delta

        with ui.refusals("account", {"n": ("-T", horizon), "horizon": ("-T", horizon)}):
            delta = resolve_delta(delta, horizon)
            rows, keys, title = _account_rows(
                counter=counter, learner=learner, noise=noise, epsilon=epsilon, delta=delta,
                horizon=horizon, dim=dim, bound=bound, y_bound=y_bound,
                neighbouring=neighbouring, window=window)
        if as_json:
            clean = [{k: (None if isinstance(v, float) and math.isnan(v) else
                          str(v) if isinstance(v, float) and math.isinf(v) else v)
                      for k, v in row.items()} for row in rows]
            ui.console.print_json(json.dumps(clean))
            return
        _show_account(ui, rows, keys, title, noise)


def _account_rows(*, counter, learner, noise, epsilon, delta, horizon, dim, bound, y_bound,
                  neighbouring, window) -> tuple[list[dict], list[str], str]:
    """(rows, the columns shown, title) of ``dpol account``: a learner's or a counter's."""
    from dpol.experiments.account import account_counter, account_learner

    if learner is not None:
        rows = account_learner(learner, epsilon=epsilon, delta=delta, horizon=horizon,
                               dim=dim, x_bound=bound, y_bound=y_bound, counter=counter)
        return (rows, ["calibration", "real_epsilon", "delta"],
                f"{learner}: T={horizon}, d={dim}, requested ({epsilon:g}, {delta:g})")
    counter = counter or "binary_tree"
    rows = account_counter(counter, epsilon=epsilon, delta=delta, horizon=horizon, dim=dim,
                           bound=bound, noise=noise, neighbouring=neighbouring,
                           window=window)
    keys = ["calibration", "noise_multiplier", "noise_scale", "max_rms_error",
            "real_epsilon", "delta"]
    return rows, keys, (f"{counter} counter ({noise}): T={horizon}, d={dim}, "
                        f"bound={bound:g}, {neighbouring}, requested ({epsilon:g}, {delta:g})")


def _show_account(ui, rows: list[dict], keys: list[str], title: str, noise: str) -> None:
    """The table of ``dpol account``, its notes and the terms it uses."""
    ui.show_rows(title, rows, keys)
    for row in rows:
        for what in ("noise", "note"):
            if what in keys or not row.get(what) or row[what] == noise:
                continue
            ui.console.print(f"{row['calibration']}, {what}: {row[what]}", highlight=False)
    ui.console.print("tight: the smallest noise dp-accounting certifies; paper: the "
                     "published formula, with the epsilon it really gives (real epsilon; "
                     "where it exceeds the requested one, docs/errata.md says why). z: noise "
                     "multiplier (node scale / encoder sensitivity).")


def register_audit(app: typer.Typer, ui) -> None:
    """Add ``dpol audit`` to ``app``."""

    @app.command()
    def audit(
        counter: str = typer.Option(None, help=f"Counter: {', '.join(COUNTER_NAMES)} (old "
                                    f"names: {', '.join(COUNTER_ALIASES)})."),
        learner: str = typer.Option(None, help="A learner name instead of a counter."),
        epsilon: float = typer.Option(1.0, help="Claimed epsilon."),
        delta: float = typer.Option(None, help="Claimed delta (default: 1e-5, or 1/T where "
                                    "smaller)."),
        horizon: int = typer.Option(8, "--horizon", "-T", help="Stream length T."),
        dim: int = typer.Option(1, help="Dimension of one element."),
        window: int = typer.Option(None, help="Window W of the window counter (default T)."),
        runs: int = typer.Option(100_000, help="Runs per neighbouring stream."),
        noise_factor: float = typer.Option(1.0, help="Multiply a counter's calibrated noise "
                                           "(e.g. 0.5: an under-noised twin that still "
                                           "claims the original epsilon)."),
        seed: int = typer.Option(0, min=0, help="Seed of the runs."),
    ) -> None:
        """Empirical DP audit: a lower bound on epsilon from worst-case neighbours.

        Exit code 3 when the audit finds a violation."""
        from dpol.accounting import resolve_delta
        from dpol.experiments.audit_run import audit_configuration

        with ui.refusals("audit"):
            delta = resolve_delta(delta, horizon)
            result = audit_configuration(counter=counter, learner=learner, epsilon=epsilon,
                                         delta=delta, horizon=horizon, dim=dim, runs=runs,
                                         noise_factor=noise_factor, window=window,
                                         seed=seed)
        ui.console.print(result.summary(), highlight=False)
        if not result.passed:
            raise typer.Exit(3)


def register_counters(app: typer.Typer, ui) -> None:
    """Add ``dpol counters`` to ``app``."""

    @app.command()
    def counters(
        horizon: int = typer.Option(2**16, "--horizon", "-T", min=1, help="Stream length T."),
        epsilon: float = typer.Option(1.0, min=1e-6, help="Privacy parameter epsilon."),
        delta: float = typer.Option(None, min=1e-300, max=0.5, help="Privacy parameter delta "
                                    "(default: 1e-5, or 1/T where smaller)."),
        seed: int = typer.Option(0, min=0, help="Seed of the data and the noise."),
        plot: Path = typer.Option(None, help="Also write a PNG of the error against T "
                                  "(T = 16, 64, ... up to --horizon)."),
        epochs: int = typer.Option(1, min=1, help="Protect a record that enters the stream "
                                   "once per epoch: E passes over T/E records (multiple "
                                   "participations, E steps T/E apart)."),
    ) -> None:
        """The error table of every counter (and, with --plot, the error against T)."""
        from dpol._validation import fail
        from dpol.accounting import default_delta

        delta = default_delta(horizon) if delta is None else delta
        if epochs > horizon:
            with ui.refusals("counters"):
                raise fail("--epochs", f"be at most --horizon ({horizon})", epochs)
        _counter_table(ui, horizon, epsilon, delta, seed, epochs)
        if plot is not None:
            _counter_plot(ui, plot, horizon, epsilon, delta)


def _counter_table(ui, horizon: int, epsilon: float, delta: float, seed: int,
                   epochs: int) -> None:
    """The error table of every counter, with a record in ``epochs`` epochs."""
    from dpol.experiments.counter_errors import counter_table

    participation = (epochs, horizon // epochs)
    unit = "" if epochs == 1 else f", a record in {epochs} epochs of {horizon // epochs}"
    table = Table(title=f"Private prefix sums, T={horizon}, ({epsilon:g}, {delta:g})-DP, "
                        f"replace-one, |x| <= 1{unit}")
    for col in ("counter", "loss()", "analytic RMS error", "measured RMS error"):
        table.add_column(col, justify="left" if col == "counter" else "right")
    with ui.refusals("counters"):
        rows = counter_table(horizon, epsilon, delta, seed, participation=participation)
    for r in rows:  # a counter beyond its reach (dense T, window + epochs): a dash
        table.add_row(r["counter"], *(["-"] * 3 if "skipped" in r else (
            f"{r[k]:.2f}" for k in ("loss", "analytic_rms", "measured_rms"))))
    ui.console.print(table)
    for r in (r for r in rows if "skipped" in r):
        ui.console.print(f"{r['counter']}: skipped: {r['skipped']}")
    classes = ", ".join(f"{r['counter']} = {r['class']}" for r in rows if "class" in r)
    ui.console.print(f"{classes}. loss() = max_t "
                     "variance(t)/z^2 at bound 1, add/remove; window_tree-64 protects "
                     "each element only in the 64 releases from its arrival (window DP).")


def _counter_plot(ui, plot: Path, horizon: int, epsilon: float, delta: float) -> None:
    """The PNG of every counter's error against T = 16, 64, ... up to ``horizon``."""
    from dpol.experiments.counter_errors import counter_error_curves

    with ui.refusals("counters"), ui.progress_bar("error against T", unit="plots") as update:
        horizons = sorted({*(4**k for k in range(2, 9) if 4**k < horizon), horizon})
        png, _ = counter_error_curves(plot, horizons=horizons, epsilon=epsilon, delta=delta)
        update(1, 1)
    ui.console.print(f"figure: {png}")
