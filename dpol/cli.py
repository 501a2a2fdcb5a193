"""The ``dpol`` command (layer L6): demo, run, reproduce, sweep, account, audit, counters.

The logic lives below this layer (:mod:`dpol.experiments`); this module parses options,
shows progress and tables with rich, and turns refused input (:class:`~dpol.errors.DpolError`),
a missing optional package or an unreadable file into one clean line on standard error
and exit code 1.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from dpol._cli_text import HEADERS, as_flag, fit_columns, fmt, header, origin, parse_options
from dpol.experiments.reproductions.jkt_appendix_g import against_trivial
from dpol.experiments.reproductions.reproduce import EXPERIMENTS, reproduce

__all__ = ["EXPERIMENTS", "HEADERS", "fit_columns", "main", "parse_options", "reproduce"]

try:  # the annotation typer reads to pass `dpol run` its context
    from typer import Context
except ImportError:  # no cli extra: _app() says how to install it
    Context = None


def _app():
    try:
        import typer
        from rich.console import Console
        from rich.table import Table

        from dpol._cli_progress import progress_bar as _progress_bar
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        sys.stderr.write(f"dpol: the command line needs the 'cli' extra ({exc.name} is "
                         "missing): pip install 'dpol[cli]'\n")
        raise SystemExit(2) from exc
    from dpol.adapters.registry import LEARNERS
    from dpol.counters import COUNTER_NAMES
    from dpol.datasets import DATASETS
    from dpol.errors import DpolError
    from dpol.experiments.sweep_cli import register as register_sweep
    from dpol.learners.random_features import BANDWIDTH

    # click's plain help: rich's panels cut long option names at 80 columns
    app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                      help="Differentially private online learning.")
    console = Console()

    @contextmanager
    def refusals(command: str, options: dict | None = None):
        """Refused input, a missing extra or an unreadable file: one line, exit code 1,
        naming the flag that set a refused argument (``options``: argument -> (flag,
        value given)). Warnings (non-private or paper calibration, ...): one line each."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield
            except (DpolError, ImportError, OSError) as exc:
                sys.stderr.write(f"dpol {command}: error: {as_flag(exc, options)}\n")
                raise typer.Exit(1) from None
            finally:
                for text in dict.fromkeys(f"{w.category.__name__}: {w.message}{origin(w)}"
                                          for w in caught):
                    sys.stderr.write(f"dpol {command}: warning: {text}\n")

    def progress_bar(label: str, unit: str = "runs"):
        return _progress_bar(console, label, unit)

    def show_rows(title: str, rows: list[dict], keys: list[str]) -> None:
        shown = fit_columns(rows, keys, console.width)
        console.print(title, highlight=False)  # as wide as the terminal, not the table
        table = Table()
        for k in shown:
            table.add_column(header(k), justify="left" if k in ("model", "calibration")
                             else "right", no_wrap=True)
        for row in rows:
            table.add_row(*[fmt(row[k]) for k in shown])
        console.print(table)
        if len(shown) < len(keys):
            console.print(f"(not shown at this width: "
                          f"{', '.join(header(k) for k in keys[len(shown):])})",
                          highlight=False)

    def show_result(result) -> None:
        show_rows(result.name, result.rows, [k for k in result.rows[0] if k != "warnings"])
        console.print(f"report: {result.report}\ntable:  {result.csv}")
        for fig in result.figures:
            console.print(f"figure: {fig}")

    @app.command()
    def demo(
        out: Path = typer.Option(Path("dpol-output/demo"), help="Output folder."),
        workers: int = typer.Option(1, min=1, help="Local worker processes."),
    ) -> None:
        """Quick reproduction of JKT's synthetic regression (PQFTL vs FTL), under a minute."""
        console.print("PQFTL (private follow-the-leader) vs FTL on a generated stream: "
                      "T = 20,000, d = 10, delta = 1e-5, replace-one, tight and paper noise, "
                      "and with dpol's noise ridge.")
        with progress_bar("jkt-synthetic (quick)") as update:
            result = reproduce("jkt-synthetic", out, quick=True, seeds=1, data=None,
                               workers=workers, progress=update)
        show_result(result)
        zero = next(r for r in result.rows if r["epsilon"] == 0.0)["mean_avg_regret"]
        console.print(against_trivial(result.rows, zero))

    learners_help = "\n\n".join(f"{k}: {v.summary} [{v.task}]" for k, v in LEARNERS.items())

    @app.command(epilog=f"Learners:\n\n{learners_help}")
    def run(
        ctx: Context,
        learner: str = typer.Argument(None, help=f"One of: {', '.join(LEARNERS)}."),
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
                                    f"{', '.join(COUNTER_NAMES)}."),
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
                                    "or auto: a private quantile of |y|."),
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
    ) -> None:
        """Run a learner on a data file or stdin: iterates, losses, regret, plots, report.

        Classifiers (K > 2 classes: the ridge-classifiers) are scored by online accuracy.
        More than 5% of the rows clipped, or -T other than the number of rows, is said.
        Outputs appear in --out together or not at all; --resume DIR continues a run.
        """
        from types import SimpleNamespace

        from dpol._cli_run import run_command

        run_command(ctx, ui=SimpleNamespace(
            refusals=refusals, progress_bar=progress_bar, show_rows=show_rows,
            console=console))

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
        with refusals("reproduce"), progress_bar(experiment) as update:
            result = reproduce(experiment, out, quick=quick, seeds=seeds, data=data,
                               workers=workers, progress=update, backend=backend, address=address)
        show_result(result)

    register_sweep(app, console, refusals, progress_bar, show_rows)  # dpol sweep

    @app.command()
    def account(
        counter: str = typer.Option(None, help=f"Counter: {', '.join(COUNTER_NAMES)} "
                                    "(default tree), or the counter of --learner."),
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
        from dpol.experiments.account import account_counter, account_learner

        with refusals("account", {"n": ("-T", horizon), "horizon": ("-T", horizon)}):
            delta = resolve_delta(delta, horizon)
            if learner is not None:
                rows = account_learner(learner, epsilon=epsilon, delta=delta, horizon=horizon,
                                       dim=dim, x_bound=bound, y_bound=y_bound,
                                       counter=counter)
                keys = ["calibration", "real_epsilon", "delta"]
                title = f"{learner}: T={horizon}, d={dim}, requested ({epsilon:g}, {delta:g})"
            else:
                counter = counter or "tree"
                rows = account_counter(counter, epsilon=epsilon, delta=delta, horizon=horizon,
                                       dim=dim, bound=bound, noise=noise,
                                       neighbouring=neighbouring, window=window)
                keys = ["calibration", "noise_multiplier", "noise_scale", "max_rms_error",
                        "real_epsilon", "delta"]
                title = (f"{counter} counter ({noise}): T={horizon}, d={dim}, bound={bound:g}, "
                         f"{neighbouring}, requested ({epsilon:g}, {delta:g})")
        if as_json:
            clean = [{k: (None if isinstance(v, float) and math.isnan(v) else
                          str(v) if isinstance(v, float) and math.isinf(v) else v)
                      for k, v in row.items()} for row in rows]
            console.print_json(json.dumps(clean))
            return
        show_rows(title, rows, keys)
        for row in rows:
            for what in ("noise", "note"):
                if what in keys or not row.get(what) or row[what] == noise:
                    continue
                console.print(f"{row['calibration']}, {what}: {row[what]}", highlight=False)
        console.print("tight: the smallest noise dp-accounting certifies; paper: the published "
                      "formula, with the epsilon it really gives (real epsilon; where it "
                      "exceeds the requested one, docs/errata.md says why). z: noise "
                      "multiplier (node scale / encoder sensitivity).")

    @app.command()
    def audit(
        counter: str = typer.Option(None, help=f"Counter: {', '.join(COUNTER_NAMES)}."),
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

        with refusals("audit"):
            delta = resolve_delta(delta, horizon)
            result = audit_configuration(counter=counter, learner=learner, epsilon=epsilon,
                                         delta=delta, horizon=horizon, dim=dim, runs=runs,
                                         noise_factor=noise_factor, window=window,
                                         seed=seed)
        console.print(result.summary(), highlight=False)
        if not result.passed:
            raise typer.Exit(3)

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
        from dpol.experiments.counter_errors import counter_error_curves, counter_table

        delta = default_delta(horizon) if delta is None else delta
        if epochs > horizon:
            with refusals("counters"):
                raise fail("--epochs", f"be at most --horizon ({horizon})", epochs)
        participation = (epochs, horizon // epochs)
        unit = "" if epochs == 1 else f", a record in {epochs} epochs of {horizon // epochs}"
        table = Table(title=f"Private prefix sums, T={horizon}, ({epsilon:g}, {delta:g})-DP, "
                            f"replace-one, |x| <= 1{unit}")
        for col in ("counter", "loss()", "analytic RMS error", "measured RMS error"):
            table.add_column(col, justify="left" if col == "counter" else "right")
        with refusals("counters"):
            rows = counter_table(horizon, epsilon, delta, seed, participation=participation)
        for r in rows:  # a counter beyond its reach (dense T, window + epochs): a dash
            table.add_row(r["counter"], *(["-"] * 3 if "skipped" in r else (
                f"{r[k]:.2f}" for k in ("loss", "analytic_rms", "measured_rms"))))
        console.print(table)
        for r in (r for r in rows if "skipped" in r):
            console.print(f"{r['counter']}: skipped: {r['skipped']}")
        classes = ", ".join(f"{r['counter']} = {r['class']}" for r in rows if "class" in r)
        console.print(f"{classes} (tree: the binary tree counter). loss() = max_t "
                      "variance(t)/z^2 at bound 1, add/remove; window-64 protects "
                      "each element only in the 64 releases from its arrival (window DP).")
        if plot is not None:
            with refusals("counters"), progress_bar("error against T", unit="plots") as update:
                horizons = sorted({*(4**k for k in range(2, 9) if 4**k < horizon), horizon})
                png, _ = counter_error_curves(plot, horizons=horizons, epsilon=epsilon,
                                              delta=delta)
                update(1, 1)
            console.print(f"figure: {png}")

    return app


def main(app=None) -> None:
    """Run the ``dpol`` command line (``app``: the one :func:`_app` built, if any).

    Examples
    --------
    ``main`` reads ``sys.argv`` and always ends with ``SystemExit``; refused input is one
    line on standard error and exit code 1.

    >>> import contextlib, io, json
    >>> from unittest import mock
    >>> def dpol(*args):
    ...     out, err = io.StringIO(), io.StringIO()
    ...     with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    ...         with mock.patch.object(sys, "argv", ["dpol", *args]):
    ...             try:
    ...                 main()
    ...             except SystemExit as stop:
    ...                 return stop.code, out.getvalue(), err.getvalue()
    >>> code, out, _ = dpol("--help")
    >>> code, all(c in out for c in ("demo", "run", "reproduce", "account", "audit", "counters"))
    (0, True)
    >>> dpol("account", "--epsilon", "nan")
    (1, '', 'dpol account: error: epsilon must be finite; got nan\\n')
    >>> code, out, _ = dpol("account", "-T", "8", "--json")
    >>> code, [(r["calibration"], round(r["real_epsilon"], 3)) for r in json.loads(out)]
    (0, [('tight', 1.0), ('paper', 1.45)])

    A flag the command does not know, or a value of the wrong type, is one line too
    (exit code 2, a usage error):

    >>> code, _, err = dpol("run", "pqftl", "d.csv", "--random-features", "2.5")
    >>> code, err.startswith("dpol run: error: Invalid value for '--random-features'")
    (2, True)
    """
    app = app or _app()  # without the cli extra: one line saying how to install it
    import typer

    try:
        code = app(standalone_mode=False, prog_name="dpol")
    except Exception as exc:
        if not _usage_error(exc):
            raise
        if type(exc).__name__ == "NoArgsIsHelpError":  # `dpol` alone: the help
            exc.show()
            raise SystemExit(exc.exit_code) from None
        where = exc.ctx.command_path if exc.ctx is not None else "dpol"
        # a flag's own parse error comes with the group's context: name the command
        if where == "dpol" and sys.argv[1:2] and sys.argv[1] in typer.main.get_command(
                app).commands:
            where = f"dpol {sys.argv[1]}"
        sys.stderr.write(f"{where}: error: {' '.join(exc.format_message().split())} "
                         f"({where} --help lists the options)\n")
        raise SystemExit(exc.exit_code) from None
    raise SystemExit(code or 0)


def _usage_error(exc: BaseException) -> bool:
    """Whether ``exc`` is click's refusal of the command line (typer vendors click from
    0.2x on, so the class is click's or typer's copy of it)."""
    return any(cls.__name__ == "UsageError" for cls in type(exc).__mro__)
