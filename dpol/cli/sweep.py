"""``dpol sweep CONFIG.toml`` and ``dpol sweep report STORE`` (layer L6)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import typer

from dpol.errors import InvalidInputError

__all__ = ["register_sweep"]

#: the report's columns, the scores first: a narrow terminal drops the columns at the end
SUMMARY_KEYS = ["dataset", "learner", "epsilon", "average_regret", "accuracy", "mean_loss",
                "real_epsilon", "counter", "delta", "done", "failed", "seconds", "options",
                "first_error"]


#: what a sweep's report says of its guarantees: a sweep is a simulation, seeded on purpose
SEEDED = ("seeded: every cell draws its noise from its grid seed, so that the sweep can be "
          "rerun; its guarantees hold only against whoever does not know the seeds. A "
          "sweep compares learners; to release a private model, use dpol run without --seed.")


def register_sweep(app, ui) -> None:
    """Add ``dpol sweep CONFIG.toml`` and ``dpol sweep report STORE`` to ``app`` (``ui``:
    the console helpers, :class:`~dpol.cli.ui.Ui`)."""

    @app.command(epilog="A config, in TOML: docs/sweeps.md. Exit code 130 after Ctrl-C "
                 "(finished cells kept: rerun to finish the others). On a cluster, e.g. "
                 "RAY_AUTH_MODE=token dpol sweep grid.toml --backend ray --address "
                 "HEAD:6379: the commands that start a Ray or Dask cluster are in "
                 "docs/sweeps.md, 'On a cluster'.")
    def sweep(
        config: str = typer.Argument(..., help="A sweep config (TOML), or 'report'."),
        store: Path = typer.Argument(None, help="With 'report': the results store to read."),
        backend: str = typer.Option(None, help="local (processes on this machine), ray or "
                                    "dask (default: the config's [run] table, else local)."),
        workers: int = typer.Option(None, min=1, help="Workers (default: one per CPU); "
                                    "with --address the cluster's own."),
        address: str = typer.Option(None, help="A running Ray head (host:port, ray://..., "
                                    "auto) or Dask scheduler (tcp://host:8786) to join; "
                                    "it must answer within DPOL_CONNECT_TIMEOUT seconds "
                                    "(5). A Ray head in token mode (Ray 2.60's default "
                                    "once ~/.ray/auth_token exists) needs "
                                    "RAY_AUTH_MODE=token here, with its token."),
        results: Path = typer.Option(None, "--store", help="Results store (default: the "
                                     "config's, or CONFIG with .sqlite)."),
        out: Path = typer.Option(None, help="report: folder of the plots (default: beside "
                                 "the store)."),
    ) -> None:
        """Run a grid of learners x counters x epsilons x deltas x seeds x data sets
        (`dpol sweep CONFIG.toml`), or summarise and plot its results store
        (`dpol sweep report STORE`). Finished cells are kept: a rerun skips them."""
        if config == "report":
            _report(ui, store, out)
            return
        if store is not None:
            sys.stderr.write(f"dpol sweep: error: a second argument only follows 'report' "
                             f"(the store of a config is --store); got {store}\n")
            raise typer.Exit(1)
        _run(ui, config, backend=backend, workers=workers, address=address, store=results)


def _run(ui, config: str, **engine) -> None:
    """``dpol sweep CONFIG.toml``: the unfinished cells on ``engine`` (backend, workers,
    address, store); Ctrl-C keeps the finished ones and exits 130."""
    from dpol.experiments.sweeps.sweep import SweepInterrupted, sweep

    try:
        with ui.refusals("sweep"), ui.progress_bar(Path(config).stem, unit="cells") as update:
            summary = sweep(config, progress=update, **engine)
    except SweepInterrupted as stop:
        sys.stderr.write(f"dpol sweep: {stop}\n")
        raise typer.Exit(130) from None
    ui.console.print(summary.line(), highlight=False)
    if summary.failed:
        sys.stderr.write(f"dpol sweep: warning: {summary.failed} cells failed; "
                         f"`dpol sweep report {summary.store}` shows their errors\n")


def _report(ui, store: Path | None, out: Path | None) -> None:
    """``dpol sweep report STORE``: one row per configuration, and the plots."""
    from dpol.experiments.sweeps.report import summarize, sweep_plots
    from dpol.experiments.sweeps.store import ResultStore

    with ui.refusals("sweep report"):
        if store is None or not store.is_file():
            raise InvalidInputError(f"STORE must be the results store of a sweep; got "
                                    f"{store}")
        try:
            with ResultStore(store) as s:
                rows = summarize(s.rows())
            figures = sweep_plots(store, out or store.parent)
        except sqlite3.DatabaseError as exc:
            raise InvalidInputError(f"STORE must be the results store of a sweep; got "
                                    f"{store} ({exc})") from None
    for row in rows:
        row.update(counter=row["counter"] or "-", delta=row["delta"] or "default",
                   options=row["options"] if row["options"] != "{}" else "")
    ui.show_rows(f"{store}: {len(rows)} configurations", rows, SUMMARY_KEYS)
    ui.console.print(SEEDED, highlight=False)
    for fig in figures:
        ui.console.print(f"figure: {fig}")
