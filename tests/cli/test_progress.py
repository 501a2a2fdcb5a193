"""The command's progress bars: a bar per stage that appears with its first update (never
"0/None"), none left half-drawn by a refused run, and a rate with its unit."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

pytest.importorskip("rich")

from dpol.cli.progress import Rate, progress_bar


def _console():
    from rich.console import Console

    return Console(file=io.StringIO(), width=120)


@pytest.mark.parametrize(("finished", "speed", "shown"), [
    (None, None, ""), (None, 12.0, "12 rows/s"), (None, 2.5e6, "2.5M rows/s"),
    (1500.0, 3.0, "1.5k rows/s"),  # a finished task's own speed, not the last estimate
])
def test_the_rate_has_its_unit_and_prefix(finished, speed, shown):
    task = SimpleNamespace(finished_speed=finished, speed=speed)
    assert str(Rate("rows").render(task)) == shown


def test_a_bar_per_stage_appears_with_its_first_update():
    console = _console()
    with progress_bar(console, "ridge", "rows") as update:
        update(5, 10)
        update(10, 10)
        update(3, 10, "twin")  # a further stage: its own bar
    lines = console.file.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["ridge", "twin"]
    assert "10/10 rows" in lines[0] and "3/10 rows" in lines[1]


@pytest.mark.parametrize("updates", [[], [(5, 10)]], ids=["no update", "refused"])
def test_no_bar_is_drawn_before_an_update_nor_left_by_a_refusal(updates):
    console = _console()
    with pytest.raises(KeyError), progress_bar(console, "ridge", "rows") as update:
        for done, total in updates:
            update(done, total)
        raise KeyError("refused")
    assert console.file.getvalue().strip() == ""
