"""``dpol train DATA`` (layer L6): mini-batch DP-FTRL over a partitioned Parquet folder, in
this process or on a Dask or Ray cluster, with checkpoints and resumption."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

__all__ = ["register_train"]


def register_train(app, ui) -> None:
    """Add ``dpol train`` to ``app`` (``ui``: the console helpers, :class:`~dpol.cli.ui.Ui`)."""

    @app.command(epilog="Exit code 1 for refused input or a run that failed mid-way (the "
                 "line names its last checkpoint: rerun with --resume).")
    def train(
        data: Path = typer.Argument(..., help="A Parquet file or a folder of *.parquet "
                                    "files (its partitions, in name order)."),
        label: str = typer.Option("y", help="The label column."),
        features: str = typer.Option(None, help="Feature columns, comma-separated "
                                     "(default: every column but the label)."),
        loss: str = typer.Option("logistic", help="logistic (labels -1/0/1) or squared."),
        epochs: int = typer.Option(1, help="Passes over the data."),
        batch_size: int = typer.Option(..., help="Expected rows per step."),
        clip: float = typer.Option(1.0, help="l2 bound of one per-example gradient."),
        lr: float = typer.Option(1.0, help="Step size."),
        epsilon: float = typer.Option(1.0, help="Privacy parameter epsilon (inf: no noise)."),
        delta: float = typer.Option(None, help="Privacy parameter delta (default: 1e-5, "
                                    "or 1/rows if smaller)."),
        counter: str = typer.Option("blt", help="The gradient-sum counter: blt, banded, "
                                    "tree, ..."),
        seed: int = typer.Option(None, min=0, help="Seed the noise (reproducible, private "
                                 "only while the seed stays secret)."),
        shuffle_seed: int = typer.Option(0, min=0, help="Public seed of the batch schedule."),
        engine: str = typer.Option("local", help="local (this process), dask or ray."),
        address: str = typer.Option(None, help="A running Dask scheduler "
                                    "(tcp://host:8786) or Ray head (host:6379, auto); it "
                                    "must answer within DPOL_CONNECT_TIMEOUT seconds (5), "
                                    "as for dpol sweep."),
        workers: int = typer.Option(None, min=1, help="Workers of a cluster started here "
                                    "(default 2)."),
        checkpoint: Path = typer.Option(None, help="Folder of the checkpoint (owner-only: "
                                        "it de-noises the releases)."),
        checkpoint_every: int = typer.Option(None, min=1, help="Steps between checkpoints "
                                             "(default: one epoch)."),
        resume: bool = typer.Option(False, help="Continue from --checkpoint."),
        out: Path = typer.Option(None, help="Write the model and its guarantee as JSON."),
    ) -> None:
        """Learn one private linear or logistic model by mini-batch DP-FTRL / DP-MF over
        every row of DATA, for EPOCHS passes, on one machine or a cluster."""
        from dpol.experiments.training import TrainingFailed
        from dpol.experiments.training import train as run_training

        kwargs = dict(label=label, features=features, loss=loss, epochs=epochs,
                      batch_size=batch_size, clip=clip, lr=lr, epsilon=epsilon, delta=delta,
                      counter=counter, seed=seed, shuffle_seed=shuffle_seed, engine=engine,
                      address=address, workers=workers, checkpoint=checkpoint,
                      checkpoint_every=checkpoint_every, resume=resume)
        try:
            with ui.refusals("train"), ui.progress_bar(data.name, unit="steps") as update:
                result = run_training(str(data), on_step=update, **kwargs)
        except TrainingFailed as exc:
            sys.stderr.write(f"dpol train: error: {exc}\n")
            raise typer.Exit(1) from None
        summary = result.to_dict()
        ui.console.print(f"{result.steps} steps ({result.steps_per_epoch} a pass) over "
                         f"{result.n_rows:,} rows on {result.engine} x{result.workers}: "
                         f"{result.rows_per_second:,.0f} rows/s; {result.privacy}",
                         highlight=False)
        if out is not None:
            out.write_text(json.dumps(summary, indent=1) + "\n")

