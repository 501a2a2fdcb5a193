"""The ``dpol`` console script (layer L6): a Ctrl-C while the command line is still
loading (its imports take about a second) is one line, not a traceback."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Load the commands and run them; interrupted while loading: exit 130, one line."""
    try:
        from dpol import cli

        app = cli._app()  # the commands' imports: most of the start-up time
    except KeyboardInterrupt:
        sys.stderr.write("dpol: interrupted while starting: nothing was run or written\n")
        raise SystemExit(130) from None
    cli.main(app)
