"""``dpol run`` (layer L6): its options, the command line it quotes, the run or its
resumption (refusing flags that contradict the checkpoint), what it prints, and a clean
stop on Ctrl-C."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from typer import Context

from dpol.adapters.registry import LEARNER_ALIASES, LEARNERS
from dpol.cli.text import parse_options
from dpol.counters import COUNTER_ALIASES, COUNTER_NAMES
from dpol.datasets import DATASETS
from dpol.learners._fallback_budget import GATE_SHARE, PRIOR_SHARE, SHORT_PRIOR_SHARE
from dpol.learners.random_features import BANDWIDTH

__all__ = ["register_run", "run_arguments", "run_command"]

#: the trivial fallback's whole share of the budget (its help text)
_FALLBACK_SHARE = PRIOR_SHARE + GATE_SHARE
#: its share on a short two-class stream (``fallback_plan``)
_SHORT_SHARE = SHORT_PRIOR_SHARE + GATE_SHARE


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
_CONTROL = ("resume", "checkpoint_every", "chunk_rows", "option", "by", "backend", "workers",
            "address")


def run_arguments(params: dict) -> dict:
    """``run_learner``'s keywords from ``dpol run``'s parameters (options still a list)."""
    return {_ARGUMENTS.get(k, k): v for k, v in params.items() if k not in _CONTROL}


def _options(args: dict) -> dict[str, tuple[str, object]]:
    """argument -> (flag, value given): how a refusal names what the user typed."""
    return {"out": ("--out", str(args["out_dir"])), "fallback": ("--fallback", True),
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
                     *([] if args["baseline"] else ["--no-baseline"]),
                     *(["--fallback"] if args["fallback"] else [])])


def _interrupted(out: Path, checkpoints: bool = False) -> str:
    """The one line a Ctrl-C prints: exactly what was kept."""
    from dpol.experiments.runs.checkpoint import CHECKPOINT, load_checkpoint
    from dpol.experiments.runs.output import checkpoint_folder

    kept = f"interrupted: nothing of this run was published ({out} is as it was"
    folder = checkpoint_folder(out)
    if not (folder / CHECKPOINT).is_file():
        hint = "" if checkpoints else "; --checkpoint-every N keeps the progress"
        return f"dpol run: {kept}; outputs appear only whole, at the end{hint})\n"
    saved = load_checkpoint(folder)
    if saved.get("by_key"):  # a run by key: the keys it finished, and the others' progress
        from dpol.experiments.runs.by_key_checkpoint import kept_line
        rows = kept_line(folder)
    else:
        rows = ", ".join(f"{n} rows of the {k} learner" for k, n in saved["done"].items())
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
        stored = saved.get(key)
        if name in ("learner", "counter"):  # an old name is the same learner or counter
            aliases = LEARNER_ALIASES if name == "learner" else COUNTER_ALIASES
            value, stored = (aliases.get(v, v) if isinstance(v, str) else v
                             for v in (value, stored))
        same = (os.path.realpath(value) == os.path.realpath(saved[key])  # however spelt
                if name in ("out", "data") else value == stored)
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


def register_run(app: typer.Typer, ui) -> None:
    """Add ``dpol run`` to ``app`` (``ui``: the console helpers, :class:`~dpol.cli.ui.Ui`)."""
    learners_help = "\n\n".join(f"{k}: {v.summary} [{v.task}; {v.cls.__name__}]"
                                for k, v in LEARNERS.items())
    old_names = ", ".join(f"{a} = {c}" for a, c in LEARNER_ALIASES.items())

    @app.command(epilog=f"Learners:\n\n{learners_help}\n\nOld names: {old_names}.")
    def run(
        ctx: Context,
        learner: str = typer.Argument(None, help=f"One of: {', '.join(LEARNERS)} (or an "
                                      "old name, below)."),
        data: str = typer.Argument(None, help="A .csv/.txt/.data(.gz), .npy or .parquet file, "
                                   "'-' for CSV on standard input, or a named data set: "
                                   f"{', '.join(DATASETS)}."),
        epsilon: float = typer.Option(1.0, help="Privacy parameter epsilon (inf: no noise)."),
        delta: float = typer.Option(None, help="Privacy parameter delta (default: 1e-5, or "
                                    "1/T where smaller, T the horizon)."),
        horizon: int = typer.Option(None, "--horizon", "-T",
                                    help="Stream length the noise is calibrated for "
                                    "(default: the number of rows)."),
        counter: str = typer.Option(None, help="Counter of the learners that use one: "
                                    f"{', '.join(COUNTER_NAMES)} (old names: "
                                    f"{', '.join(COUNTER_ALIASES)})."),
        seed: int = typer.Option(None, min=0, help="Seed the noise (reproducible, private "
                                 "only while the seed is secret; default: OS entropy)."),
        out: Path = typer.Option(Path("dpol-output/run"), help="Output folder (new or "
                                 "empty; its checkpoints go beside it, in OUT.checkpoint)."),
        replace: bool = typer.Option(False, help="Replace an earlier run in --out."),
        target_col: str = typer.Option(None, help="Label column: index or name (default "
                                       "last)."),
        bound: str = typer.Option("1", help="Declared bound on ||x|| (rows above: clipped), "
                                  "or auto: a private quantile of the row norms."),
        y_bound: str = typer.Option("1", help="Declared bound on |y| (regression labels), "
                                    "their range LO,HI, or auto: a private quantile of |y|."),
        bounds_budget: float = typer.Option(0.1, help="Share of epsilon for auto bounds."),
        normalize: str = typer.Option("clip", help="clip (private end to end), private "
                                      "(features, labels and bounds scaled by private "
                                      "quantiles on --bounds-budget, inside the guarantee) "
                                      "or standardize (reads data statistics: outside the "
                                      "guarantee)."),
        calibration: str = typer.Option("tight", help="tight or paper."),
        option: list[str] = typer.Option(None, help="KEY=VALUE constructor keyword (repeat)."),
        baseline: bool = typer.Option(True, help="Also run the non-private twin."),
        test_fraction: float = typer.Option(None, help="Hold out this share of the rows "
                                            "(a fixed random split) and score the final "
                                            "model on them, beside the trivial baseline."),
        checkpoint_every: int = typer.Option(None, min=1, help="Save the learners' state "
                                             "and releases every N rows, owner-only, in "
                                             "OUT.checkpoint: it can remove the noise, so "
                                             "keep it like the raw data."),
        resume: Path = typer.Option(None, file_okay=False, help="Continue the run of this "
                                    "output (or checkpoint) folder, with its settings."),
        chunk_rows: int = typer.Option(None, min=1, help="Read and learn the file N rows "
                                       "at a time (streams larger than memory; no regret)."),
        intercept: bool = typer.Option(None, "--intercept/--no-intercept", help="Fit an "
                                       "intercept (default: yes for a linear learner)."),
        random_features: int = typer.Option(None, help="Learn on D random Fourier features "
                                            "of the rows: a model non-linear in x."),
        bandwidth: float = typer.Option(None, help="Kernel bandwidth of --random-features, "
                                        f"in units of --bound (default {BANDWIDTH:g})."),
        fallback: bool = typer.Option(False, help="Classifiers: the private class prior "
                                      f"unless the model beats it ({_FALLBACK_SHARE:.0%} of the "
                                      f"budget, short: {_SHORT_SHARE:.0%}), as OnlineClassifier."),
        by: str = typer.Option(None, help="Key column (name or index): one private model "
                               "per key, in parallel; the split by key is public, a row is "
                               "protected within its key's stream. --checkpoint-every, "
                               "--resume and --chunk-rows work per key."),
        backend: str = typer.Option("local", help="Engine of --by: local, ray or dask."),
        workers: int = typer.Option(1, min=1, help="Workers of --by's engine (local "
                                    "processes, or started Ray / Dask workers)."),
        address: str = typer.Option(None, help="A running Ray head or Dask scheduler for "
                                    "--by (host:port)."),
    ) -> None:
        """Run a learner on a data file or stdin: iterates, losses, regret, plots, report.

        Classifiers (K > 2 classes: the ridge classifiers) are scored by online accuracy.
        More than 5% of the rows clipped, or -T other than the number of rows, is said.
        Outputs appear in --out together or not at all; --resume DIR continues a run.
        """
        run_command(ctx, ui=ui)


def run_command(ctx: Context, *, ui) -> None:
    """Run (or resume) with the parameters of ``ctx``, the ``dpol run`` being invoked,
    and print the results; ``ui`` has the CLI's console helpers."""
    from dpol.experiments.runs.by_key import resume_any
    from dpol.experiments.runs.pipeline import run_learner

    params = ctx.params
    args = run_arguments(params)
    resume, option = params["resume"], params["option"]
    chunk_rows = params["chunk_rows"]
    out = args["out_dir"]
    name = args["learner"] or "resumed run"
    by_key = False
    try:
        flags = {**_options(args), **{k: (f"--{k.replace('_', '-')}", params[k]) for k in (
            "by", "backend", "workers", "address", "chunk_rows", "checkpoint_every")}}
        with ui.refusals("run", flags), ui.progress_bar(name, unit="rows") as update:
            if resume is not None:
                _conflicts(params, [k for k in params
                                    if ctx.get_parameter_source(k).name != "DEFAULT"])
                result = resume_any(resume, progress=update)
                by_key = "folder" in result.rows[0]  # a run by key's summary rows
            else:
                if args["learner"] is None or args["data"] is None:
                    sys.stderr.write("dpol run: error: give LEARNER and DATA, or --resume "
                                     "DIR\n")
                    raise typer.Exit(2)
                if params["by"] is not None:
                    result = _run_by_key(params, args, update)
                    by_key = True
                else:
                    result = run_learner(**{**args, "options": parse_options(option)},
                                         progress=update, command=_quoted(args, option),
                                         checkpoint_every=params["checkpoint_every"],
                                         chunk_rows=chunk_rows)
    except KeyboardInterrupt:
        if resume is not None:  # the output folder of the checkpoint it names
            from dpol.experiments.runs.output import find_checkpoint
            out = find_checkpoint(resume)[1]
        sys.stderr.write(_interrupted(Path(out),
                                      checkpoints=params["checkpoint_every"] is not None))
        raise typer.Exit(130) from None
    for note in result.notes:
        sys.stderr.write(f"dpol run: warning: {note}\n")
    if by_key:  # result.name: run_LEARNER_by_COLUMN
        learner, column = result.name[len("run_"):].rsplit("_by_", 1)
        return _show_by_key(result, args if resume is None else {
            "learner": learner, "data": f"{result.report.parent} (resumed)"}, column, ui)
    # the scores a user reads first come first: a narrow terminal drops the last columns
    keys = [k for k in ("model", "accuracy", "heldout_accuracy", "heldout_mse", "heldout_r2",
                        "average_regret", "mean_loss") if k in result.rows[0]]
    where = args['data'] if resume is None else f"{result.report.parent} (resumed)"
    ui.show_rows(f"{result.rows[0]['model']} on {where}", result.rows, keys)
    if result.labels:  # the classes as the learner sees them, as the report says
        ui.console.print(f"labels: {result.labels}", highlight=False)
    split = [s for s in (result.rows[0].get(k) for k in ("privacy_split", "fallback_split"))
             if isinstance(s, str)]  # the bounds' share, then the fallback's
    if split:
        ui.console.print(f"privacy: {'; '.join(split)}", highlight=False)
    if isinstance(result.rows[0].get("predicts"), str):
        ui.console.print(f"predicts: {result.rows[0]['predicts']}", highlight=False)
    ui.console.print(f"guarantee: {result.rows[0]['guarantee']}\nreport: {result.report}\n"
                     f"iterates: {result.report.parent / 'iterates.npy'}\n"
                     f"losses:  {result.csv}", highlight=False)


def _run_by_key(params: dict, args: dict, update):
    """``dpol run --by KEY``: one model per key (:mod:`dpol.experiments.runs.by_key`)."""
    from dpol.experiments.runs.by_key import run_by_key

    return run_by_key(**{**args, "options": parse_options(params["option"])}, by=params["by"],
                      backend=params["backend"], workers=params["workers"],
                      address=params["address"], progress=update,
                      checkpoint_every=params["checkpoint_every"], chunk_rows=params["chunk_rows"])


def _show_by_key(result, args: dict, by: str, ui) -> None:
    """The first keys' scores, the guarantee, where the report and summary are."""
    from dpol.experiments.runs.by_key import SCORES

    keys = ["key", "rows", *(k for k in SCORES if k in result.rows[0])][:4]
    shown = result.rows[:BY_KEY_SHOWN]
    more = f" (first {len(shown)} of {len(result.rows)} keys)" if len(result.rows) > len(
        shown) else ""
    ui.show_rows(f"{args['learner']} on {args['data']}, one model per {by}{more}", shown, keys)
    ui.console.print(f"guarantee of each key: {result.rows[0]['guarantee']} (each key's in "
                     f"summary.csv)\nreport: {result.report}\nsummary: {result.csv}",
                     highlight=False)


#: keys ``dpol run --by`` prints (all are in summary.csv)
BY_KEY_SHOWN = 20
