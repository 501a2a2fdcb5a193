"""The ``dpol`` command (layer L6): demo, run, reproduce, sweep, train, account, audit,
counters.

The logic lives below this layer (:mod:`dpol.experiments`); this package parses options,
shows progress and tables with rich, and turns refused input (:class:`~dpol.errors.DpolError`),
a missing optional package or an unreadable file into one clean line on standard error
and exit code 1.

One module per group of commands: :mod:`.reproduce` (``demo``, ``reproduce``),
:mod:`.run`, :mod:`.sweep`, :mod:`.train` and :mod:`.privacy` (``account``, ``audit``,
``counters``); beside them the console helpers they share (:mod:`.ui`, :mod:`.progress`) and their
text (:mod:`.text`: option parsing, table columns, warning origins). This module imports
nothing heavy: the console script (``dpol = "dpol.cli:main"``) loads it before it can
catch a Ctrl-C, and :func:`main` loads the commands (about a second) where a Ctrl-C is
one line, not a traceback.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def _app():
    """The typer app of every command; without the ``cli`` extra, one line saying how to
    install it (exit code 2)."""
    try:
        import typer

        from dpol.cli.ui import Ui
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        sys.stderr.write(f"dpol: the command line needs the 'cli' extra ({exc.name} is "
                         "missing): pip install 'dpol[cli]'\n")
        raise SystemExit(2) from exc
    from dpol.cli import privacy, reproduce, run, sweep, train

    # click's plain help: rich's panels cut long option names at 80 columns
    app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                      help="Differentially private online learning.")
    ui = Ui()
    for register in (reproduce.register_demo, run.register_run, reproduce.register_reproduce,
                     sweep.register_sweep, train.register_train, privacy.register_account,
                     privacy.register_audit, privacy.register_counters):  # `dpol --help`'s order
        register(app, ui)
    return app


def _loaded():
    """:func:`_app`, where a Ctrl-C while the commands' modules load is one line, exit 130."""
    try:
        return _app()  # the commands' imports: most of the start-up time
    except KeyboardInterrupt:
        sys.stderr.write("dpol: interrupted while starting: nothing was run or written\n")
        raise SystemExit(130) from None


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
    app = app or _loaded()  # without the cli extra: one line saying how to install it
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
