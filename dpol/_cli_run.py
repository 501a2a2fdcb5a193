"""The body of ``dpol run`` (layer L6): the command line it quotes, the run or its
resumption (refusing flags that contradict the checkpoint), what it prints, and a clean
stop on Ctrl-C."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from dpol._cli_text import parse_options

__all__ = ["run_arguments", "run_command"]


#: ``dpol run``'s parameters -> ``run_learner``'s arguments, where the names differ
_ARGUMENTS = {"out": "out_dir", "bound": "x_bound", "intercept": "fit_intercept",
              "option": "options"}
#: the options of ``dpol run`` quoted in its report, by their argument names
_FLAGS = {"epsilon": "--epsilon", "delta": "--delta", "horizon": "-T", "counter": "--counter",
          "seed": "--seed", "target_col": "--target-col", "x_bound": "--bound",
          "y_bound": "--y-bound", "normalize": "--normalize", "calibration": "--calibration",
          "test_fraction": "--test-fraction", "bounds_budget": "--bounds-budget",
          "random_features": "--random-features", "bandwidth": "--bandwidth"}
#: parameters that are not ``run_learner`` arguments
_CONTROL = ("resume", "checkpoint_every", "chunk_rows", "option")


def run_arguments(params: dict) -> dict:
    """``run_learner``'s keywords from ``dpol run``'s parameters (options still a list)."""
    return {_ARGUMENTS.get(k, k): v for k, v in params.items() if k not in _CONTROL}


def _options(args: dict) -> dict[str, tuple[str, object]]:
    """argument -> (flag, value given): how a refusal names what the user typed."""
    return {"out": ("--out", str(args["out_dir"])),
            **{name: (flag, args[name]) for name, flag in _FLAGS.items()}}


def _quoted(args: dict, option: list[str] | None) -> str:
    """The command line that reproduces the run (quoted in its report); a seed is named,
    never printed: published beside the releases, it would let anyone remove the noise."""
    given = {flag: args[name] for name, flag in _FLAGS.items()}
    if given["--seed"] is not None:
        given["--seed"] = "SEED"
    if "auto" not in (args["x_bound"], args["y_bound"]) and args["normalize"] != "private":
        given["--bounds-budget"] = None  # spent on nothing
    intercept = {True: ["--intercept"], False: ["--no-intercept"], None: []}[
        args["fit_intercept"]]
    return " ".join(["dpol run", args["learner"], str(args["data"]),
                     *(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                       for k, v in given.items() if v is not None),
                     *intercept, *(f"--option {o}" for o in option or []),
                     *([] if args["baseline"] else ["--no-baseline"])])


def _interrupted(out: Path, chunked: bool = False, checkpoints: bool = False) -> str:
    """The one line a Ctrl-C prints: exactly what was kept."""
    from dpol.experiments.runs.checkpoint import CHECKPOINT, load_checkpoint
    from dpol.experiments.runs.output import checkpoint_folder

    kept = f"interrupted: nothing of this run was published ({out} is as it was"
    folder = checkpoint_folder(out)
    if not (folder / CHECKPOINT).is_file():  # chunked runs take no checkpoints
        hint = "" if chunked or checkpoints else "; --checkpoint-every N keeps the progress"
        return f"dpol run: {kept}; outputs appear only whole, at the end{hint})\n"
    done = load_checkpoint(folder)["done"]
    rows = ", ".join(f"{n} rows of the {k} learner" for k, n in done.items())
    return (f"dpol run: {kept}); the checkpoint in {folder} keeps {rows}; "
            f"`dpol run --resume {out}` continues\n")


def _conflicts(params: dict, given: list[str]) -> None:
    """Refuse, in one line, a flag given with --resume that contradicts the checkpoint
    (the resumed run goes on with the checkpoint's settings, never silently others)."""
    from dpol.experiments.runs.checkpoint import load_checkpoint
    from dpol.experiments.runs.output import find_checkpoint

    folder, out = find_checkpoint(params["resume"])
    saved = load_checkpoint(folder)["args"]
    saved = {**saved, "out_dir": out, "options": saved.get("options") or {}}
    for name in given:
        if name == "resume":
            continue
        key = _ARGUMENTS.get(name, name)
        value = params[name]
        if name == "option":
            value = parse_options(value)
        same = (os.path.realpath(value) == os.path.realpath(saved[key])  # however spelt
                if name in ("out", "data") else value == saved.get(key))
        if not same:
            held = ("no seed: fresh OS entropy" if name == "seed" and saved.get(key) is None
                    else "another seed" if name == "seed"
                    else "none: the learner's default" if saved.get(key) is None
                    else _flag(name, saved.get(key)))
            typed = "--seed" if name == "seed" else _flag(name, value)  # never a seed
            sys.stderr.write(f"dpol run: error: {typed} conflicts with the checkpoint in "
                             f"{folder} (it holds {held}): --resume continues the run with "
                             "its own settings; leave it out\n")
            raise typer.Exit(2)


def _flag(name: str, value: object) -> str:
    """How a parameter reads on the command line: ``--epsilon 2.0``, ``--no-baseline``."""
    if name in ("learner", "data"):
        return f"{name.upper()} {value}"
    flag = name.replace("_", "-")
    if isinstance(value, bool):
        return f"--{flag}" if value else f"--no-{flag}"
    return f"--{flag} {value}"


def run_command(ctx: typer.Context, *, ui) -> None:
    """Run (or resume) with the parameters of ``ctx``, the ``dpol run`` being invoked,
    and print the results; ``ui`` has the CLI's console helpers."""
    from dpol.experiments.runs.pipeline import resume_run, run_learner

    params = ctx.params
    args = run_arguments(params)
    resume, option = params["resume"], params["option"]
    chunk_rows = params["chunk_rows"]
    out = args["out_dir"]
    name = args["learner"] or "resumed run"
    try:
        with ui.refusals("run", _options(args)), ui.progress_bar(name, unit="rows") as update:
            if resume is not None:
                _conflicts(params, [k for k in params
                                    if ctx.get_parameter_source(k).name != "DEFAULT"])
                result = resume_run(resume, progress=update)
            else:
                if args["learner"] is None or args["data"] is None:
                    sys.stderr.write("dpol run: error: give LEARNER and DATA, or --resume "
                                     "DIR\n")
                    raise typer.Exit(2)
                result = run_learner(**{**args, "options": parse_options(option)},
                                     progress=update, command=_quoted(args, option),
                                     checkpoint_every=params["checkpoint_every"],
                                     chunk_rows=chunk_rows)
    except KeyboardInterrupt:
        if resume is not None:  # the output folder of the checkpoint it names
            from dpol.experiments.runs.output import find_checkpoint
            out = find_checkpoint(resume)[1]
        sys.stderr.write(_interrupted(Path(out), chunked=chunk_rows is not None,
                                      checkpoints=params["checkpoint_every"] is not None))
        raise typer.Exit(130) from None
    for note in result.notes:
        sys.stderr.write(f"dpol run: warning: {note}\n")
    # the scores a user reads first come first: a narrow terminal drops the last columns
    keys = [k for k in ("model", "accuracy", "heldout_accuracy", "heldout_mse", "heldout_r2",
                        "average_regret", "mean_loss") if k in result.rows[0]]
    where = args['data'] if resume is None else f"{result.report.parent} (resumed)"
    ui.show_rows(f"{result.rows[0]['model']} on {where}", result.rows, keys)
    if result.labels:  # the classes as the learner sees them, as the report says
        ui.console.print(f"labels: {result.labels}", highlight=False)
    if isinstance(result.rows[0].get("privacy_split"), str):
        ui.console.print(f"privacy: {result.rows[0]['privacy_split']}", highlight=False)
    ui.console.print(f"guarantee: {result.rows[0]['guarantee']}\nreport: {result.report}\n"
                     f"iterates: {result.report.parent / 'iterates.npy'}\n"
                     f"losses:  {result.csv}", highlight=False)
