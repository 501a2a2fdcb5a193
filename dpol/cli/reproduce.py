"""``dpol demo`` and ``dpol reproduce``: the papers' experiments (layer L6)."""

from __future__ import annotations

from pathlib import Path

import typer

from dpol.experiments.reproductions.reproduce import EXPERIMENTS, reproduce

__all__ = ["register_demo", "register_reproduce"]


def register_demo(app: typer.Typer, ui) -> None:
    """Add ``dpol demo`` to ``app`` (``ui``: the console helpers, :class:`~dpol.cli.ui.Ui`)."""

    @app.command()
    def demo(
        out: Path = typer.Option(Path("dpol-output/demo"), help="Output folder."),
        workers: int = typer.Option(1, min=1, help="Local worker processes."),
    ) -> None:
        """Quick reproduction of JKT's synthetic regression (PQFTL vs FTL), under a minute."""
        # here, not at the top: the experiment loads scipy.stats, 0.4 s of every --help
        from dpol.experiments.reproductions.jkt_appendix_g import against_trivial

        ui.console.print("PQFTL (private follow-the-leader) vs FTL on a generated stream: "
                         "T = 20,000, d = 10, delta = 1e-5, replace-one, tight and paper "
                         "noise, and with dpol's noise ridge.")
        with ui.progress_bar("jkt-synthetic (quick)") as update:
            result = reproduce("jkt-synthetic", out, quick=True, seeds=1, data=None,
                               workers=workers, progress=update)
        ui.show_result(result)
        zero = next(r for r in result.rows if r["epsilon"] == 0.0)["mean_avg_regret"]
        ui.console.print(against_trivial(result.rows, zero))


def register_reproduce(app: typer.Typer, ui) -> None:
    """Add ``dpol reproduce EXPERIMENT`` to ``app``."""

    @app.command(name="reproduce")
    def reproduce_cmd(
        experiment: str = typer.Argument(..., help=f"One of: {', '.join(EXPERIMENTS)}."),
        out: Path = typer.Option(Path("dpol-output"), help="Output folder."),
        quick: bool = typer.Option(False, help="A reduced version (about a minute)."),
        seeds: int = typer.Option(None, min=1, help="Seeds per configuration."),
        data: Path = typer.Option(None, exists=True, dir_okay=False,
                                  help="Local copy of YearPredictionMSD / Covertype (CSV)."),
        workers: int = typer.Option(1, min=1, help="Local worker processes."),
        backend: str = typer.Option("local", help="local, ray or dask (docs/sweeps.md)."),
        address: str = typer.Option(None, help="A Ray head or Dask scheduler to join."),
    ) -> None:
        """Reproduce a paper experiment: PNG, CSV and a markdown report."""
        if experiment not in EXPERIMENTS:
            raise typer.BadParameter(f"must be one of {', '.join(EXPERIMENTS)}; got "
                                     f"{experiment!r}", param_hint="EXPERIMENT")
        with ui.refusals("reproduce"), ui.progress_bar(experiment) as update:
            result = reproduce(experiment, out, quick=quick, seeds=seeds, data=data,
                               workers=workers, progress=update, backend=backend,
                               address=address)
        ui.show_result(result)
