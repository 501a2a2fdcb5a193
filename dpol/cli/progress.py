"""The progress bars of the ``dpol`` command (layer L6; rich, the ``cli`` extra)."""

from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

__all__ = ["Rate", "progress_bar"]


class Rate(ProgressColumn):
    """Items per second (rich's own speed estimate), with the unit."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("")
        big = next(((f, s) for f, s in ((1e6, "M"), (1e3, "k")) if speed >= f), (1, ""))
        return Text(f"{speed / big[0]:.3g}{big[1]} {self.unit}/s")


@contextmanager
def progress_bar(console: Console, label: str, unit: str = "runs"):
    """A bar per stage: done/total items, their rate, elapsed time and ETA. A stage's
    bar appears with its first update (so never "0/None"); ``update(done, total,
    stage=None)``, ``stage`` naming a further bar (a run's non-private twin)."""
    with Progress(TextColumn("{task.description}", table_column=Column(
                      max_width=24, overflow="ellipsis", no_wrap=True)),
                  BarColumn(bar_width=16),
                  TextColumn(f"{{task.completed:,.0f}}/{{task.total:,.0f}} {unit}"),
                  Rate(unit), TimeElapsedColumn(), TextColumn("eta"),
                  TimeRemainingColumn(), console=console, transient=False) as bar:
        tasks: dict = {}

        def update(done: int, total: int, stage: str | None = None) -> None:
            key = stage or label
            if key not in tasks:
                tasks[key] = bar.add_task(key, total=total)
            bar.update(tasks[key], completed=done, total=total)

        try:
            yield update
        except BaseException:
            for task in tasks.values():  # a refused run leaves no half-drawn bar
                bar.update(task, visible=False)
            raise
