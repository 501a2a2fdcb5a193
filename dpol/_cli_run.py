"""The body of ``dpol run`` (layer L6): the command line it quotes, the run or its
resumption, what it prints, and a clean stop on Ctrl-C."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dpol._cli_text import parse_options

__all__ = ["run_command"]


#: the options of ``dpol run`` quoted in its report, by their argument names
_FLAGS = {"epsilon": "--epsilon", "delta": "--delta", "horizon": "-T", "counter": "--counter",
          "seed": "--seed", "target_col": "--target-col", "x_bound": "--bound",
          "y_bound": "--y-bound", "normalize": "--normalize", "calibration": "--calibration",
          "test_fraction": "--test-fraction", "bounds_budget": "--bounds-budget",
          "random_features": "--random-features", "bandwidth": "--bandwidth"}


def _options(args: dict) -> dict[str, tuple[str, object]]:
    """argument -> (flag, value given): how a refusal names what the user typed."""
    return {"out": ("--out", str(args["out_dir"])),
            **{name: (flag, args[name]) for name, flag in _FLAGS.items()}}


def _quoted(args: dict, option: list[str] | None) -> str:
    """The command line that reproduces the run (quoted in its report)."""
    given = {flag: args[name] for name, flag in _FLAGS.items()}
    if "auto" not in (args["x_bound"], args["y_bound"]) and args["normalize"] != "private":
        given["--bounds-budget"] = None  # spent on nothing
    intercept = {True: ["--intercept"], False: ["--no-intercept"], None: []}[
        args["fit_intercept"]]
    return " ".join(["dpol run", args["learner"], str(args["data"]),
                     *(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in given.items() if v is not None),
                     *intercept, *(f"--option {o}" for o in option or []),
                     *([] if args["baseline"] else ["--no-baseline"])])


def _interrupted(out: Path, chunked: bool = False) -> str:
    """The one line a Ctrl-C prints: what was kept."""
    from dpol.experiments.run_checkpoint import CHECKPOINT, load_checkpoint

    if not (out / CHECKPOINT).is_file():  # chunked runs take no checkpoints
        return ("dpol run: interrupted: no output was written (outputs are written whole at "
                f"the end{'' if chunked else '; --checkpoint-every N keeps the progress'})\n")
    done = load_checkpoint(out)["done"]
    rows = ", ".join(f"{n} rows of the {k} learner" for k, n in done.items())
    return (f"dpol run: interrupted: the checkpoint in {out} keeps {rows}; "
            f"`dpol run --resume {out}` continues\n")


def run_command(args: dict, option: list[str] | None, *, resume: Path | None,
                checkpoint_every: int | None, chunk_rows: int | None = None, ui) -> None:
    """Run (or resume) and print the results; ``ui`` has the CLI's console helpers."""
    from dpol.experiments.run_file import resume_run, run_learner

    out = Path(resume) if resume is not None else args["out_dir"]
    name = args["learner"] or "resumed run"
    try:
        with ui.refusals("run", _options(args)), ui.progress_bar(name, unit="rows") as update:
            if resume is not None:
                result = resume_run(resume, progress=update)
            else:
                if args["learner"] is None or args["data"] is None:
                    sys.stderr.write("dpol run: error: give LEARNER and DATA, or --resume "
                                     "DIR\n")
                    raise typer.Exit(2)
                result = run_learner(**{**args, "options": parse_options(option)},
                                     progress=update, command=_quoted(args, option),
                                     checkpoint_every=checkpoint_every,
                                     chunk_rows=chunk_rows)
    except KeyboardInterrupt:
        sys.stderr.write(_interrupted(Path(out), chunked=chunk_rows is not None))
        raise typer.Exit(130) from None
    for note in result.notes:
        sys.stderr.write(f"dpol run: warning: {note}\n")
    # the scores a user reads first come first: a narrow terminal drops the last columns
    keys = [k for k in ("model", "accuracy", "heldout_accuracy", "heldout_mse", "heldout_r2",
                        "average_regret", "mean_loss") if k in result.rows[0]]
    where = args['data'] if resume is None else f"{out} (resumed)"
    ui.show_rows(f"{result.rows[0]['model']} on {where}", result.rows, keys)
    if isinstance(result.rows[0].get("privacy_split"), str):
        ui.console.print(f"privacy: {result.rows[0]['privacy_split']}", highlight=False)
    ui.console.print(f"guarantee: {result.rows[0]['guarantee']}\nreport: {result.report}\n"
                     f"iterates: {result.report.parent / 'iterates.npy'}\n"
                     f"losses:  {result.csv}")
